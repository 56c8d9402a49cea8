package main

import "testing"

// TestGCPercentFollowsTheHeap: more heap between collections only while
// the heap is small, Go's default once it is large.
func TestGCPercentFollowsTheHeap(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{{0, 150}, {100 << 20, 150}, {256 << 20, 100}, {4 << 30, 100}} {
		if got := gcPercent(tc.live); got != tc.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}
