package engine

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
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

// TestScheduleKeepsItsArray: a schedule whose load holds steady, pruned as
// time passes, stops allocating once its array is twice its live length.
func TestScheduleKeepsItsArray(t *testing.T) {
	var s schedule
	var q queue
	now := time.Unix(1000, 0)
	step := func() {
		now = now.Add(time.Millisecond)
		s.prune(now.Add(-pruneMargin).UnixNano())
		q.prune(now.Add(-pruneMargin).UnixNano())
		s.add(now.UnixNano(), int64(100*time.Microsecond))
		q.add(now.UnixNano() + int64(100*time.Microsecond))
	}
	for range 10000 {
		step()
	}
	if n := testing.AllocsPerRun(10000, step); n != 0 {
		t.Errorf("%v allocations a request at a steady load, want 0", n)
	}
	if len(s.iv) != 2001 || len(q.ends) != 2001 {
		t.Errorf("%d intervals and %d ends kept, want the last 2 s and the new one: 2001", len(s.iv), len(q.ends))
	}
}
