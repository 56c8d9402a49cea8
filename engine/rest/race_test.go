//go:build race

package rest

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop what is put in it at random, so a pooled state is made anew and
// allocation counts do not hold.
const raceEnabled = true
