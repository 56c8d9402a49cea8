package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPercentFollowsTheHeap: a floor of room while the heap is small, a
// little headroom while it is modest, Go's default once it is large.
func TestPercentFollowsTheHeap(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, maxPercent},       // before the first collection
		{1 << 20, maxPercent}, // a nearly empty heap: bounded
		{16 << 20, 800},       // a load generator: Floor bytes between collections
		{64 << 20, 200},       //
		{100 << 20, 150},      // a suite's: the floor is less than its headroom
		{255 << 20, 150},      //
		{256 << 20, 100},      // a large store: Go's default
		{4 << 30, 100},        //
	} {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// TestFollowSetsAndPutsBack: Follow sets the target for this test's small
// heap (the bound) at once and puts back the one before when stopped; a
// GOGC of the user's own is left alone.
func TestFollowSetsAndPutsBack(t *testing.T) {
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	t.Setenv("GOGC", "")
	runtime.GC()
	stop := Follow(time.Hour)
	if got := percent(); got != maxPercent {
		t.Errorf("following a heap of a few MiB: GOGC=%d, want %d", got, maxPercent)
	}
	stop()
	if got := percent(); got != 77 {
		t.Errorf("after stop: GOGC=%d, want the 77 that held before", got)
	}

	t.Setenv("GOGC", "300")
	stop = Follow(time.Hour)
	if got := percent(); got != 77 {
		t.Errorf("with GOGC set: the target became %d; it is the user's to set", got)
	}
	stop()
}
