package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPercentFollowsTheHeap: a little headroom while the heap is
// modest, Go's default once it is large, and a load generator's floor of
// room while its heap is small.
func TestPercentFollowsTheHeap(t *testing.T) {
	for _, tc := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 0, 150}, {1 << 20, 0, 150}, {100 << 20, 0, 150}, {256 << 20, 0, 100}, {4 << 30, 0, 100}, // a suite, a store
		{0, LoadFloor, maxPercent},       // before the first collection
		{1 << 20, LoadFloor, maxPercent}, // a nearly empty heap: bounded
		{16 << 20, LoadFloor, 800},       // a load generator: LoadFloor bytes between collections
		{64 << 20, LoadFloor, 200},       //
		{100 << 20, LoadFloor, 150},      // the floor is less than the headroom
		{256 << 20, LoadFloor, 100},      // a large heap: Go's default
	} {
		if got := Percent(tc.live, tc.floor); got != tc.want {
			t.Errorf("Percent(%d MiB, floor %d MiB) = %d, want %d", tc.live>>20, tc.floor>>20, got, tc.want)
		}
	}
}

// TestFollowSetsAndPutsBack: following as a load generator sets the target
// for this test's small heap (the bound) at once and puts back the one
// before when stopped; a GOGC of the user's own is left alone.
func TestFollowSetsAndPutsBack(t *testing.T) {
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	t.Setenv("GOGC", "")
	runtime.GC()
	stop := LoadGenerator(time.Hour)
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

// TestUseNamesThePolicy: a named policy sets the floor Follow applies, and
// Using reports it; Store, the default, has none.
func TestUseNamesThePolicy(t *testing.T) {
	defer Use(Using())
	Use(Load)
	if got := floor.Load(); got != LoadFloor || Using() != Load {
		t.Errorf("under Load: floor %d MiB, policy %v; want %d MiB, load", got>>20, Using(), LoadFloor>>20)
	}
	Use(Store)
	if got := floor.Load(); got != 0 || Using() != Store {
		t.Errorf("under Store: floor %d MiB, policy %v; want none, store", got>>20, Using())
	}
}
