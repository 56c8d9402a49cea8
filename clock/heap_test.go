package clock

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHeapWakesInOrder: the sleep queue, its run and its heap, with its
// lazily removed slots, its reused waiters and its wake-ups moved to now
// (Cancel), wakes exactly the sleeps a sorted list would, in the same
// order.
func TestHeapWakesInOrder(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		c := &Virtual{}
		var pool []*waiter // waiters to reuse, as a Sleeper's or a task's is
		var want []*waiter // the live sleeps, by the model's order
		now := time.Duration(0)
		for step := 0; step < 2000; step++ {
			switch op := rng.IntN(10); {
			case op < 4: // a sleep begins, with a waiter new or reused
				var w *waiter
				if len(pool) > 0 && rng.IntN(2) == 0 {
					i := rng.IntN(len(pool))
					w = pool[i]
					pool = slices.Delete(pool, i, i+1)
				} else {
					w = &waiter{}
				}
				w.at = now + time.Duration(rng.IntN(50))
				if rng.IntN(3) > 0 {
					c.push(w)
					want = append(want, w)
					break
				}
				// A task's sleep as every participant waits: it
				// begins, and the next wakes at once.
				c.seq++
				w.seq = c.seq
				want = append(want, w)
				sortSleeps(want)
				if got := c.q.pushPop(w); got != want[0] {
					t.Fatalf("seed %d step %d: pushPop woke %p at %v, want the first of %d", seed, step, got, got.at, len(want))
				}
				now = max(now, want[0].at)
				pool = append(pool, want[0])
				want = want[1:]
			case op < 5 && len(want) > 0: // a sleep's context ends: it leaves
				i := rng.IntN(len(want))
				c.q.remove(want[i])
				pool = append(pool, want[i])
				want = slices.Delete(want, i, i+1)
			case op < 6 && len(want) > 0: // Cancel moves some sleeps to now
				moved := false
				c.q.unrun()
				for i := range c.q.h {
					s := &c.q.h[i]
					if s.live() && rng.IntN(3) == 0 {
						s.at, s.w.at, moved = now, now, true
					}
				}
				if moved {
					c.q.h.init()
				}
			default: // the next wakes
				sortSleeps(want)
				if !c.q.ready() {
					if len(want) != 0 {
						t.Fatalf("seed %d step %d: the heap is empty, %d sleeps live", seed, step, len(want))
					}
					continue
				}
				w := c.q.pop()
				if len(want) == 0 || w != want[0] {
					t.Fatalf("seed %d step %d: woke %p at %v, want the first of %d", seed, step, w, w.at, len(want))
				}
				now = max(now, w.at)
				want = want[1:]
				pool = append(pool, w)
			}
		}
	}
}

// sortSleeps sorts sleeps by the model's order: wake-up, then the sleep's
// beginning.
func sortSleeps(ws []*waiter) {
	slices.SortStableFunc(ws, func(a, b *waiter) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(a.seq) - int(b.seq)
	})
}

// TestQueueRunWakesInOrder: an open load's sleeps, each until the next
// request of a schedule and most of them joining the run, with some that
// do not and some removed, wake in order, across the run's reuse of its
// room.
func TestQueueRunWakesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := &Virtual{}
	var want []*waiter // the live sleeps, in the model's order
	order := func(a, b *waiter) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(a.seq) - int(b.seq)
	}
	due := time.Duration(0)
	sleep := func(w *waiter) { // its key set, as a sleep begins
		c.seq++
		w.seq = c.seq
		i, _ := slices.BinarySearchFunc(want, w, order)
		want = slices.Insert(want, i, w)
	}
	for range 1000 { // a thousand threads, each with a request due
		due += time.Duration(rng.IntN(100))
		w := &waiter{at: due}
		sleep(w)
		c.q.push(w)
	}
	cur := c.q.pop()
	want = want[1:]
	for step := range 50000 {
		now := cur.at
		if rng.IntN(4) == 0 { // a response, not the schedule's next
			cur.at = now + time.Duration(rng.IntN(5000))
		} else {
			due = max(due, now) + time.Duration(rng.IntN(100))
			cur.at = due
		}
		sleep(cur)
		if rng.IntN(50) == 0 { // another's sleep ends early, and a new one begins
			i := rng.IntN(len(want))
			if want[i] != cur {
				c.q.remove(want[i])
				want = slices.Delete(want, i, i+1)
				w := &waiter{at: due}
				sleep(w)
				c.q.push(w)
			}
		}
		if rng.IntN(2) == 0 {
			c.q.push(cur)
			if !c.q.ready() {
				t.Fatalf("step %d: the queue is empty, %d sleeps live", step, len(want))
			}
			cur = c.q.pop()
		} else {
			cur = c.q.pushPop(cur)
		}
		if cur != want[0] {
			t.Fatalf("step %d: woke %p at %v, want the first of %d at %v", step, cur, cur.at, len(want), want[0].at)
		}
		want = want[1:]
	}
	if len(c.q.run) > 4096 {
		t.Errorf("the run holds %d slots for %d sleeps: its room is not reused", len(c.q.run), len(want))
	}
}

// TestEarlierIsBefore: earlier, the heap's comparison without a branch,
// is before, for the keys of queued sleeps (at never negative), equal
// wake-ups included.
func TestEarlierIsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ats := []time.Duration{0, 1, 1 << 40, 1<<63 - 1}
	seqs := []uint64{0, 1, 1 << 40, 1<<64 - 1}
	key := func() slot {
		if rng.IntN(2) == 0 {
			return slot{at: ats[rng.IntN(len(ats))], seq: seqs[rng.IntN(len(seqs))]}
		}
		return slot{at: time.Duration(rng.Int64N(8)), seq: rng.Uint64N(8)}
	}
	for range 100000 {
		a, b := key(), key()
		if got, want := earlier(&a, &b) == 1, before(&a, &b); got != want {
			t.Fatalf("earlier(%+v, %+v) = %v, before %v", a, b, got, want)
		}
	}
}
