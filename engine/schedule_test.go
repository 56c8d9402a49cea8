package engine

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// TestFirstFromEnd: the search back from the end finds what a binary
// search over the whole slice finds, wherever the answer lies.
func TestFirstFromEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		x := make([]int64, rng.IntN(70))
		for i := range x {
			x[i] = rng.Int64N(40)
		}
		sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
		for v := int64(-1); v <= 41; v++ {
			want := sort.Search(len(x), func(i int) bool { return x[i] > v })
			if got := firstFromEnd(x, func(e *int64) bool { return *e > v }); got != want {
				t.Fatalf("first of %v above %d: got %d, want %d", x, v, got, want)
			}
		}
	}
}
