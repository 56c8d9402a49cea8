package workloads

import (
	mrand "math/rand/v2"
	"testing"
	"time"
)

// TestStorage2010Backoff: the 2010 client's waits are 3, 27 and 81 s, each
// within ±20%, never past 90 s.
func TestStorage2010Backoff(t *testing.T) {
	r, err := DefaultRetry(RetryStorage2010)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSpec()
	s.Retry = r
	w := &worker{r: &Coordinator{spec: s}}
	w.rand = *mrand.New(mrand.NewPCG(1, 2))
	for try, want := range []time.Duration{3 * time.Second, 27 * time.Second, 81 * time.Second} {
		lo, hi := time.Duration(0.8*float64(want)), min(time.Duration(1.2*float64(want)), 90*time.Second)
		for range 1000 {
			if d := w.backoff(try + 1); d < lo || d > hi {
				t.Fatalf("retry %d waited %v, want %v to %v", try+1, d, lo, hi)
			}
		}
	}
}
