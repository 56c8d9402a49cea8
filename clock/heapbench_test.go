package clock

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// BenchmarkHeap: a task's sleep as every participant waits (pushPop), in
// a heap of a run's threads, each sleeping a random time from now.
func BenchmarkHeap(b *testing.B) {
	for _, n := range []int{240, 1000, 15000} {
		b.Run("sleeps="+strconv.Itoa(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := &Virtual{}
			for range n {
				w := &waiter{at: time.Duration(rng.IntN(1e6))}
				c.push(w)
			}
			w := c.q.pop()
			for b.Loop() {
				w.at += time.Duration(rng.IntN(1e6))
				c.seq++
				w.seq = c.seq
				w = c.q.pushPop(w)
			}
		})
	}
}
