package engine

import (
	"testing"
	"time"
)

// TestBucketAtTheEpoch: a bucket first refilled at Unix nanosecond 0, where
// a virtual clock may start, counts from there like at any other time.
func TestBucketAtTheEpoch(t *testing.T) {
	b := newBucket(100, time.Second) // 100 a second, 100 saved at most
	if !b.take(0, 100) {
		t.Fatal("a new bucket refused its burst")
	}
	if b.take(0, 1) {
		t.Fatal("an empty bucket gave a token")
	}
	if !b.take(int64(500*time.Millisecond), 50) || b.take(int64(500*time.Millisecond), 1) {
		t.Fatalf("half a second after the epoch the bucket holds %g tokens, want 50 before the take", b.tokens+50)
	}
	b.reset(100, time.Second)
	if b.last != noTime || b.tokens != 100 {
		t.Fatalf("a reset bucket holds %g tokens, last refilled at %d: want 100, never", b.tokens, b.last)
	}
}
