// Package gctune sets the Go collector's target of a tablebench process
// from its live heap. A suite in virtual time keeps little and allocates
// much; a served engine's store grows without bound; a load generator
// driving an endpoint keeps a few megabytes live and allocates hundreds of
// megabytes a second (the aztables SDK alone takes a 32 KiB copy buffer for
// every operation of a batch), so at Go's default it collects hundreds of
// times a second and spends a third of its CPU doing so: CPU it takes from
// the server it measures when both share a machine. Each gets a little
// headroom while its heap is modest and Go's default once it is large; a
// load generator also gets a floor of room between collections.
//
// A simulation also asks the kernel to back its heap with huge pages
// (HugePages), where the kernel's mode leaves that to each process: it
// touches each of thousands of threads' state once per request, and with
// small pages every such touch also misses the TLB.
//
// It sits beside the data flow, not in it: the command sets it up once,
// and it changes how fast a run goes, never what it records.
package gctune

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

const (
	// LoadFloor is a load generator's floor: its small heap is collected
	// every LoadFloor bytes allocated at most, not every few megabytes.
	LoadFloor = 128 << 20
	// large is the live heap from which Go's default holds, so that a big
	// store grows no faster than Go lets it.
	large = 256 << 20
	// maxPercent bounds the target of a nearly empty heap: the target
	// follows the heap a period late, and a heap that grows fast in that
	// period must not get a goal many times its size.
	maxPercent = 1000
)

// floor is the room Follow keeps between the live heap and the next
// collection: the policy's (Policy.floor).
var floor atomic.Uint64

// Policy is what a process's heap is for, which decides the room the
// collector leaves it. A command names its policy once, where it knows
// what the process will do; nothing else changes it.
type Policy int

const (
	// Store is a process whose heap holds data: a suite or a run on the
	// in-tree engine, or a served engine. Its live heap alone sets its
	// target. It is the policy until a command names another.
	Store Policy = iota
	// Load is a process that only drives an endpoint and keeps little: it
	// gets LoadFloor of room between collections.
	Load
)

// String names the policy.
func (p Policy) String() string {
	if p == Load {
		return "load"
	}
	return "store"
}

func (p Policy) floor() uint64 {
	if p == Load {
		return LoadFloor
	}
	return 0
}

// Use makes p the process's policy. Follow applies it within a period.
func Use(p Policy) { floor.Store(p.floor()) }

// Using returns the process's policy.
func Using() Policy {
	if floor.Load() == LoadFloor {
		return Load
	}
	return Store
}

// Percent returns the collector's target (GOGC) for a live heap and a
// floor: 150 up to 256 MiB, Go's default 100 above, and, below that, at
// least enough for floor bytes between collections (bounded by
// maxPercent). The extra heap buys a tenth of a suite's CPU (make bench:
// 64.8 s of CPU and 540 MB at GOGC=100, 59.7 s and 697 MB at 150) and a
// third of a load generator's.
func Percent(live, floor uint64) int {
	if live >= large {
		return 100
	}
	p := 150
	if floor == 0 {
		return p
	}
	if live == 0 {
		return maxPercent
	}
	if q := floor * 100 / live; q > uint64(p) {
		p = int(min(q, maxPercent))
	}
	return p
}

// Follow sets the collector's target from the live heap and the floor now
// and every period after, unless GOGC is set, which then decides alone.
// The function it returns stops following and puts back the target that
// held before.
func Follow(period time.Duration) (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	before, current := debug.SetGCPercent(100), 100
	set := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if p := Percent(sample[0].Value.Uint64(), floor.Load()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
	}
	set()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				set()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		debug.SetGCPercent(before)
	}
}

// LoadGenerator follows the heap, as Follow does, under the Load policy.
// The function it returns stops following and puts back the policy and
// the target that held before.
func LoadGenerator(period time.Duration) (stop func()) {
	before := floor.Swap(LoadFloor)
	unfollow := Follow(period)
	return func() {
		unfollow()
		floor.Store(before)
	}
}
