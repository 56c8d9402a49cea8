package casestudy

import (
	"math"
	"testing"

	"github.com/tablebench/tablebench/results"
)

// TestStatsReadMetrics: every stat a claim reads is a number, and every
// figure of the catalog and the experiments names a known metric.
func TestStatsReadMetrics(t *testing.T) {
	run := &results.Run{EntitiesPerSec: 1, ThrottledPct: 1, SuccessLatencyMs: results.Percentiles{P50: 1, P90: 1, P99: 1, Mean: 1}}
	for s, st := range stats {
		if v := st.of(run); math.IsNaN(v) {
			t.Errorf("stat %d (%s) reads no metric", s, st.name)
		}
	}
	for _, f := range append(Figures(), Experiments()...) {
		if err := f.Check(); err != nil {
			t.Error(err)
		}
	}
}
