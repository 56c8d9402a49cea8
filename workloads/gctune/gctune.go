// Package gctune sets the Go collector's target of a tablebench process
// from its live heap. A load generator keeps a few megabytes live and
// allocates hundreds of megabytes a second (the aztables SDK alone takes a
// 32 KiB copy buffer for every operation of a batch), so at Go's default it
// collects hundreds of times a second and spends a third of its CPU doing
// so: CPU a run on the same machine takes from the server it measures. A
// suite in virtual time keeps more and allocates as much. A served engine's
// store grows without bound. One rule serves all three: a heap goal never
// less than a floor above the live heap, a little headroom while the heap
// is modest, Go's default once it is large.
package gctune

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const (
	// Floor is the least room between the live heap and the next
	// collection: a small heap is collected every Floor bytes allocated
	// at most, not every few megabytes.
	Floor = 128 << 20
	// large is the live heap from which Go's default holds, so that a big
	// store grows no faster than Go lets it.
	large = 256 << 20
	// maxPercent bounds the target while the heap is nearly empty, before
	// the first collection has measured it.
	maxPercent = 2000
)

// Percent returns the collector's target (GOGC) for a live heap: at least
// enough for Floor bytes between collections while the heap is small, 150
// up to 256 MiB, Go's default 100 above. The extra heap between collections
// buys a tenth of a suite's CPU (make bench: 64.8 s of CPU and 540 MB at
// GOGC=100, 59.7 s and 697 MB at 150) and a third of a load generator's.
func Percent(live uint64) int {
	if live >= large {
		return 100
	}
	p := 150
	if live == 0 {
		return maxPercent
	}
	if q := Floor * 100 / live; q > uint64(p) {
		p = int(min(q, maxPercent))
	}
	return p
}

// Follow sets the collector's target from the live heap now and every
// period after, unless GOGC is set, which then decides alone. The function
// it returns stops following and puts back the target that held before.
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
		if p := Percent(sample[0].Value.Uint64()); p != current {
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
