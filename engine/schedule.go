package engine

import (
	"slices"
	"sort"
	"time"
)

// schedule is a set of busy intervals of one serial resource (a lane or a
// core), in model time. Requests are admitted in the order their callers
// reach the engine, but each joins the resource at its own arrival time
// after the front-end stage, which can be earlier than that of a request
// admitted before it. The schedule lets such a request use the idle gap
// before a later reservation, so service stays close to first come, first
// served by arrival time while every request is still computed once.
type schedule struct {
	iv []interval // sorted, disjoint, touching intervals merged
}

type interval struct{ start, end time.Time }

// fit returns the earliest start at or after at when d of work fits.
func (s *schedule) fit(at time.Time, d time.Duration) time.Time {
	t := at
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i].end.After(t) })
	for ; i < len(s.iv); i++ {
		if !s.iv[i].start.Before(t.Add(d)) {
			break
		}
		if s.iv[i].end.After(t) {
			t = s.iv[i].end
		}
	}
	return t
}

// add reserves [start, start+d), which must be free.
func (s *schedule) add(start time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	iv := interval{start, start.Add(d)}
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i].start.After(start) })
	if i > 0 && !s.iv[i-1].end.Before(iv.start) { // touches the one before
		i--
		s.iv[i].end = maxTime(s.iv[i].end, iv.end)
	} else {
		s.iv = slices.Insert(s.iv, i, iv)
	}
	for i+1 < len(s.iv) && !s.iv[i+1].start.After(s.iv[i].end) { // and the ones after
		s.iv[i].end = maxTime(s.iv[i].end, s.iv[i+1].end)
		s.iv = slices.Delete(s.iv, i+1, i+2)
	}
}

// prune forgets intervals that ended before t; no request can arrive
// before now, so they can no longer matter.
func (s *schedule) prune(t time.Time) {
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i].end.After(t) })
	if i > 0 { // reslice, not copy: the lane's backlog can hold thousands
		s.iv = s.iv[i:]
	}
}

func (s *schedule) clone() schedule { return schedule{iv: slices.Clone(s.iv)} }

// queue holds when each request reserved on a lane leaves it, sorted, so the
// backlog throttle can count the requests a newcomer finds ahead of it.
type queue struct {
	ends []time.Time
}

// add records a request that leaves the lane at end.
func (q *queue) add(end time.Time) {
	i, _ := slices.BinarySearchFunc(q.ends, end, time.Time.Compare)
	q.ends = slices.Insert(q.ends, i, end)
}

// ahead returns how many requests are still on the lane at t, in service
// or waiting.
func (q *queue) ahead(t time.Time) int { return len(q.ends) - q.leftBy(t) }

// leftBy returns how many requests left the lane by t.
func (q *queue) leftBy(t time.Time) int {
	return sort.Search(len(q.ends), func(i int) bool { return q.ends[i].After(t) })
}

// prune forgets requests that left before t.
func (q *queue) prune(t time.Time) {
	if i := q.leftBy(t); i > 0 { // reslice; append reallocates the live part later
		q.ends = q.ends[i:]
	}
}

func (q *queue) clone() queue { return queue{ends: slices.Clone(q.ends)} }
