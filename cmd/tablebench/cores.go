package main

import "runtime"

// virtualCores has the process use at most n cores (Go's Ps) while it runs
// n runs at once in virtual time, and returns what restores the limit that
// held before. A virtual clock runs one participant of a run at a time (its
// threads are tasks stepped on one goroutine; the deadline and the load
// balancer are goroutines that take the turn through a channel): a run
// keeps one core busy. With a core idle, each hand-off also wakes an OS
// thread to look for work that is not there, which finds none and sleeps
// again, two system calls for nothing.
func virtualCores(n int) (restore func()) {
	old := runtime.GOMAXPROCS(0)
	if n < 1 || n >= old {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}
