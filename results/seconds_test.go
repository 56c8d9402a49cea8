package results_test

import (
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

// TestSilentSecondsAreRecorded: a second in which no request completed
// (threads pausing 3 s after throttling, an endpoint that stalled) has its
// interval, of zero requests, so that a chart drawn from the intervals
// falls to zero there instead of joining its neighbours, and a comparison's
// per-second samples keep it.
func TestSilentSecondsAreRecorded(t *testing.T) {
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start.Add(2*time.Second), start.Add(10*time.Second))
	rec := col.Recorder(&results.Live{})
	for _, sec := range []int{0, 3, 7} { // silent: 1, 2, 4, 5, 6, 8, 9
		done := start.Add(time.Duration(sec)*time.Second + 500*time.Millisecond)
		rec.Record("insert", "p1", 1, done.Add(-time.Millisecond), done, results.OutcomeOK, 0, false)
	}
	r, err := col.Close(start.Add(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Intervals) != 10 || len(r.IntervalHists) != 10 {
		t.Fatalf("%d intervals and %d interval histograms, want one of each for each of the run's 10 seconds", len(r.Intervals), len(r.IntervalHists))
	}
	for i, iv := range r.Intervals {
		want := int64(0)
		if i == 0 || i == 3 || i == 7 {
			want = 1
		}
		if iv.Second != i || iv.Requests != want || iv.Warmup != (i < 2) {
			t.Errorf("interval %d: %+v, want second %d with %d requests, warm-up %v", i, iv, i, want, i < 2)
		}
	}
}
