package engine

import (
	"slices"
)

// schedule is a set of busy intervals of one serial resource (a lane or a
// core), in model time. Requests are admitted in the order their callers
// reach the engine, but each joins the resource at its own arrival time
// after the front-end stage, which can be earlier than that of a request
// admitted before it. The schedule lets such a request use the idle gap
// before a later reservation, so service stays close to first come, first
// served by arrival time while every request is still computed once.
//
// Times are kept as Unix nanoseconds: every request searches these lists,
// and integers compare and move at a fraction of the cost of time.Time.
type schedule struct {
	iv   []interval // sorted, disjoint, touching intervals merged
	base []interval // iv's array from its start: see insertAt
	// end is the latest end of a reservation ever added: none in iv ends
	// after it. fitAt's test of it inlines where the last interval's did
	// not, and most requests find the schedule free by it.
	end int64
}

type interval struct{ start, end int64 }

// firstEndAfter returns the index of the first interval that ends after t.
// It is firstFromEnd written out: a core's search makes it for one request
// in three, where calling a closure at each step cost more than the step.
func (s *schedule) firstEndAfter(t int64) int {
	x := s.iv
	lo, hi, step := 0, len(x), 1
	for hi > 0 { // x[hi:] ends after t
		m := hi - step
		if m < 0 {
			break
		}
		if x[m].end <= t {
			lo = m + 1
			break
		}
		hi, step = m, step*2
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x[m].end > t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// firstFromEnd returns the index of the first element of x for which
// after holds, x being ordered so that it holds from some index on. The
// elements after a request's arrival are the few at the end of a schedule
// or queue: before them it keeps pruneMargin of the past, which can be
// hundreds of elements on a busy core. So the search gallops back from the
// end, and costs the log of the elements after the arrival.
func firstFromEnd[T any](x []T, after func(*T) bool) int {
	lo, hi, step := 0, len(x), 1
	for hi > 0 { // after holds from hi on
		m := hi - step
		if m < 0 {
			break
		}
		if !after(&x[m]) {
			lo = m + 1
			break
		}
		hi, step = m, step*2
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if after(&x[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// fitAt returns the earliest start at or after t when d of work fits.
func (s *schedule) fitAt(t, d int64) int64 {
	if s.end > t {
		return s.fitBefore(t, d)
	}
	return t // free from t on, as most requests find it
}

// fitBefore is fitAt for a t before the end of the last reservation.
func (s *schedule) fitBefore(t, d int64) int64 {
	for i := s.firstEndAfter(t); i < len(s.iv); i++ {
		if s.iv[i].start >= t+d {
			break
		}
		if s.iv[i].end > t {
			t = s.iv[i].end
		}
	}
	return t
}

// add reserves [start, start+d) in Unix nanoseconds, which must be free.
func (s *schedule) add(start, d int64) {
	if d <= 0 {
		return
	}
	iv := interval{start, start + d}
	s.end = max(s.end, iv.end)
	n := len(s.iv)
	if n == 0 || s.iv[n-1].start <= start { // after the last, as most are: no search
		if n > 0 && s.iv[n-1].end >= start {
			s.iv[n-1].end = max(s.iv[n-1].end, iv.end)
			return
		}
		if n == cap(s.iv) {
			s.iv, s.base = room(s.iv, s.base)
		}
		s.iv = append(s.iv, iv)
		return
	}
	i := firstFromEnd(s.iv, func(x *interval) bool { return x.start > iv.start })
	if i > 0 && s.iv[i-1].end >= iv.start { // touches the one before
		i--
		s.iv[i].end = max(s.iv[i].end, iv.end)
	} else {
		s.iv, s.base = insertAt(s.iv, s.base, i, iv)
	}
	for i+1 < len(s.iv) && s.iv[i+1].start <= s.iv[i].end { // and the ones after
		s.iv[i].end = max(s.iv[i].end, s.iv[i+1].end)
		s.iv = slices.Delete(s.iv, i+1, i+2)
	}
}

// push is add for a reservation that starts after the last one ends, into
// an array with room for it, as most do: written to inline, it adds
// nothing otherwise, and reports whether it added.
func (s *schedule) push(start, d int64) bool {
	n := len(s.iv)
	if d <= 0 || s.end >= start || n == cap(s.iv) {
		return false
	}
	s.iv = s.iv[:n+1]
	s.iv[n] = interval{start, start + d}
	s.end = start + d
	return true
}

// prune forgets intervals that ended before t; no request can arrive
// before now, so they can no longer matter. It steps from the front: each
// interval is stepped over once in its life, where a search would cost
// every request its log.
func (s *schedule) prune(t int64) {
	i := 0
	for i < len(s.iv) && s.iv[i].end <= t {
		i++
	}
	if i > 0 { // reslice, not copy: the lane's backlog can hold thousands
		s.iv = s.iv[i:]
	}
}

func (s *schedule) clone() schedule {
	iv := slices.Clone(s.iv)
	return schedule{iv: iv, base: iv, end: s.end}
}

// insertAt inserts v at x[i], x being a slice whose front is pruned away
// by reslicing and base its array from the start: see room. It returns x
// and its base.
func insertAt[T any](x, base []T, i int, v T) ([]T, []T) {
	if len(x) == cap(x) {
		x, base = room(x, base)
	}
	return slices.Insert(x, i, v), base
}

// room makes room for one more element in x, which is full, x being a
// slice whose front is pruned away by reslicing and base its array from
// the start. With at least half of the array pruned away, x moves back to
// its start; otherwise it moves to an array twice its length. A lane or
// core then keeps one array while its load holds, where append's growth (a
// quarter at these sizes) made a new one each time the array filled, for
// some 90 bytes a request. It returns x and its base.
func room[T any](x, base []T) ([]T, []T) {
	if cap(base)-cap(x) >= len(x) {
		x = base[:copy(base[:cap(base)], x)]
	} else {
		x = slices.Grow(x, len(x)+1)
		base = x
	}
	return x, base
}

// queue holds when each request reserved on a lane leaves it, sorted, so the
// backlog throttle can count the requests a newcomer finds ahead of it.
type queue struct {
	ends []int64 // Unix nanoseconds
	base []int64 // ends's array from its start: see insertAt
	last int64   // the latest end ever added, as schedule.end
}

// add records a request that leaves the lane at e, in Unix nanoseconds.
func (q *queue) add(e int64) {
	q.last = max(q.last, e)
	if n := len(q.ends); n == 0 || q.ends[n-1] <= e { // after the last, as most are: equal ends are alike
		if n == cap(q.ends) {
			q.ends, q.base = room(q.ends, q.base)
		}
		q.ends = append(q.ends, e)
		return
	}
	i := q.leftBy(e)
	for i > 0 && q.ends[i-1] == e { // before equal ends, as a binary search for e finds
		i--
	}
	q.ends, q.base = insertAt(q.ends, q.base, i, e)
}

// push is add for a request that leaves the lane last, into an array with
// room for it, as most do: as schedule.push, it reports whether it added.
func (q *queue) push(e int64) bool {
	n := len(q.ends)
	if q.last > e || n == cap(q.ends) {
		return false
	}
	q.ends = q.ends[:n+1]
	q.ends[n] = e
	q.last = e
	return true
}

// ahead returns how many requests are still on the lane at t, in service
// or waiting.
func (q *queue) ahead(t int64) int {
	if q.last <= t { // all gone, as most requests find them
		return 0
	}
	return q.behind(t)
}

// behind is ahead for a t before the last request leaves.
func (q *queue) behind(t int64) int {
	return len(q.ends) - q.leftBy(t)
}

// leftBy returns how many requests left the lane by t.
func (q *queue) leftBy(t int64) int {
	return firstFromEnd(q.ends, func(e *int64) bool { return *e > t })
}

// prune forgets requests that left before t, stepping from the front as
// schedule.prune does.
func (q *queue) prune(t int64) {
	i := 0
	for i < len(q.ends) && q.ends[i] <= t {
		i++
	}
	if i > 0 { // reslice; append reallocates the live part later
		q.ends = q.ends[i:]
	}
}

func (q *queue) clone() queue {
	ends := slices.Clone(q.ends)
	return queue{ends: ends, base: ends, last: q.last}
}
