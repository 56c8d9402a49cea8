package engine

import (
	"math/rand/v2"
	"slices"
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

// TestScheduleFastPaths: a schedule and a queue that take requests after
// their last reservation without a search give the answers of the search,
// whatever the order requests come in.
func TestScheduleFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var s schedule
		var q queue
		var busy []bool // one slot per time unit, the reference
		var ends []int64
		for range 60 {
			at, d := rng.Int64N(100), 1+rng.Int64N(5)
			if rng.IntN(2) == 0 && len(busy) > 0 { // mostly after the last
				at = int64(len(busy)) - 2 + rng.Int64N(4)
			}
			want := at
			for free := false; !free; {
				free = true
				for u := want; u < want+d && int(u) < len(busy); u++ {
					if busy[u] {
						want, free = u+1, false
						break
					}
				}
			}
			if got := s.fitAt(at, d); got != want {
				t.Fatalf("fit %d at %d in %v: got %d, want %d", d, at, s.iv, got, want)
			}
			if rng.IntN(2) == 0 || !s.push(want, d) { // push, as the engine reserves, adds or leaves it to add
				s.add(want, d)
			}
			for int64(len(busy)) < want+d {
				busy = append(busy, false)
			}
			for u := want; u < want+d; u++ {
				busy[u] = true
			}
			var iv []interval // the reference's intervals, merged
			for u, b := range busy {
				if !b {
					continue
				}
				if n := len(iv); n > 0 && iv[n-1].end == int64(u) {
					iv[n-1].end++
				} else {
					iv = append(iv, interval{int64(u), int64(u) + 1})
				}
			}
			if !slices.Equal(s.iv, iv) {
				t.Fatalf("intervals %v, want %v", s.iv, iv)
			}
			if rng.IntN(2) == 0 || !q.push(want+d) {
				q.add(want + d)
			}
			ends = append(ends, want+d)
			slices.Sort(ends)
			if !slices.Equal(q.ends, ends) {
				t.Fatalf("queue %v, want %v", q.ends, ends)
			}
			probe := rng.Int64N(110)
			if got, want := q.ahead(probe), len(ends)-sort.Search(len(ends), func(i int) bool { return ends[i] > probe }); got != want {
				t.Fatalf("ahead of %d in %v: got %d, want %d", probe, ends, got, want)
			}
		}
	}
}

// TestFirstEndAfter: the written-out search finds what firstFromEnd does.
func TestFirstEndAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var s schedule
		for at := rng.Int64N(5); len(s.iv) < rng.IntN(70); at += 1 + rng.Int64N(5) {
			d := 1 + rng.Int64N(4)
			s.iv = append(s.iv, interval{at, at + d})
			at += d
		}
		for v := int64(-1); v <= 500; v += 1 + rng.Int64N(7) {
			want := firstFromEnd(s.iv, func(iv *interval) bool { return iv.end > v })
			if got := s.firstEndAfter(v); got != want {
				t.Fatalf("first of %v ending after %d: got %d, want %d", s.iv, v, got, want)
			}
		}
	}
}
