package workloads

import (
	"math"
	"sort"
	"sync"
	"time"
)

// arrivals is an open load's schedule of requests, shared by the
// process's threads as k6's arrival-rate executors share their pool of
// virtual users: request k falls due at at(k), whatever the threads are
// doing, and a thread that is free takes the next one no thread has taken.
// A request due while every thread is busy is dropped (OverloadDrop),
// counted and never sent, or waits for a thread and is sent late, its
// wait counted in its latency (OverloadQueue, wrk2's way).
//
// In virtual time one thread runs at a time, so the threads take requests
// in model-time order and a run repeats for its seed; in wall time a lock
// orders them, and so it does when the threads are goroutines on a
// virtual clock, which an interrupt wakes at once.
type arrivals struct {
	mu sync.Mutex
	// unshared: every request is taken on one goroutine (a virtual clock's
	// loop, which steps the threads as its tasks), without the lock.
	unshared bool
	start    time.Time
	queue    bool
	next     int64 // the first request not yet taken
	// The rate in requests per second for this process: constant, or
	// ramped by stages, linearly, from the rate before.
	rate   float64
	stages []segment
}

// segment is a stage of a ramp: from its start (seconds after the run's)
// the rate goes linearly from r0 to r1 over d seconds, and n requests fall
// due before it begins.
type segment struct {
	from, d, r0, r1, n float64
}

// newArrivals returns the schedule of spec's open load for share of its
// threads (a shard runs only its VMs' share of the rate), from start.
func newArrivals(s *Spec, share float64, start time.Time) *arrivals {
	a := &arrivals{start: start, queue: s.Overload == OverloadQueue, rate: s.Rate * share}
	from, n, r := 0.0, 0.0, s.Rate*share
	for _, st := range s.Stages {
		d, r1 := st.For.Seconds(), st.Rate*share
		a.stages = append(a.stages, segment{from: from, d: d, r0: r, r1: r1, n: n})
		from, n, r = from+d, n+d*(r+r1)/2, r1
	}
	if len(s.Stages) > 0 { // after the last stage its rate holds
		a.stages = append(a.stages, segment{from: from, d: math.Inf(1), r0: r, r1: r, n: n})
	}
	return a
}

// at returns when request k falls due; never, for a rate that fell to
// zero for good.
func (a *arrivals) at(k int64) (time.Time, bool) {
	x := float64(k)
	var sec float64
	if len(a.stages) == 0 {
		if a.rate <= 0 {
			return time.Time{}, false
		}
		sec = x / a.rate
	} else {
		i := sort.Search(len(a.stages), func(i int) bool { return a.stages[i].n > x }) - 1
		if i < 0 {
			i = 0
		}
		g := a.stages[i]
		left := x - g.n // requests into the segment
		var tau float64
		slope := (g.r1 - g.r0) / g.d
		switch {
		case math.IsInf(g.d, 1) || math.Abs(slope) < 1e-12:
			if g.r0 <= 0 {
				return time.Time{}, false
			}
			tau = left / g.r0
		default: // n(τ) = r0·τ + slope·τ²/2: the root of slope/2·τ² + r0·τ − left
			disc := g.r0*g.r0 + 2*slope*left
			tau = (-g.r0 + math.Sqrt(max(disc, 0))) / slope
		}
		sec = g.from + tau
	}
	if sec > float64(math.MaxInt64)/1e9/2 {
		return time.Time{}, false
	}
	return a.start.Add(time.Duration(sec * float64(time.Second))), true
}

// take gives a thread free at now the next request to send and when it is
// due; ok is false when none falls due before end. In drop mode the
// requests due before now found every thread busy: each is handed to drop
// and skipped.
func (a *arrivals) take(now, end time.Time, drop func(due time.Time)) (time.Time, bool) {
	if !a.unshared {
		a.mu.Lock()
		defer a.mu.Unlock()
	}
	for {
		due, ok := a.at(a.next)
		if !ok || !due.Before(end) {
			return time.Time{}, false
		}
		a.next++
		if a.queue || !due.Before(now) {
			return due, true
		}
		drop(due)
	}
}

// rest hands drop every request due before end that no thread took: at the
// end of a run, those were never sent.
func (a *arrivals) rest(end time.Time, drop func(due time.Time)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		due, ok := a.at(a.next)
		if !ok || !due.Before(end) {
			return
		}
		a.next++
		drop(due)
	}
}

// due counts the requests due in [from, to).
func (a *arrivals) due(from, to time.Time) int64 {
	return a.before(to) - a.before(from)
}

// before counts the requests due before t.
func (a *arrivals) before(t time.Time) int64 {
	lo, hi := int64(0), int64(1)
	for {
		at, ok := a.at(hi)
		if !ok || !at.Before(t) {
			break
		}
		lo, hi = hi, hi*2
	}
	for lo < hi { // the first k due at or after t
		mid := lo + (hi-lo)/2
		if at, ok := a.at(mid); ok && at.Before(t) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
