package workloads_test

import (
	"strings"
	"testing"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// TestUnknownMetricIsAnError: a figure or a sweep naming a metric that is
// not in the table is refused, never drawn as entities/s.
func TestUnknownMetricIsAnError(t *testing.T) {
	figs := []workloads.Figure{{ID: 3, Title: "gets", Metric: "entities-per-sec"}, {ID: 4, Title: "batches", Metric: "p51"}}
	if _, err := workloads.Select(figs, []int{3}); err == nil || !strings.Contains(err.Error(), `figure 4 (batches): metric "p51" is not known: use entities-per-sec`) {
		t.Errorf("Select: %v", err)
	}
	_, err := workloads.SweepDef{VMs: []int{1, 2}, Y: "p51"}.Figure()
	if err == nil || !strings.Contains(err.Error(), `y "p51" is not known: use entities-per-sec, requests-per-sec, throttled-pct, p50, p90, p95, p99, p99.9, max-latency, mean-latency`) {
		t.Errorf("sweep: %v", err)
	}
	if _, err := (workloads.SweepDef{VMs: []int{1, 2}, Y: "saturation"}).Figure(); err == nil {
		t.Error("a sweep took a dual chart's metric")
	}
}

// TestSweepLatencyReadsSuccessfulRequests: a sweep's percentiles read the
// latency of successful requests, as the claims do, and say so.
func TestSweepLatencyReadsSuccessfulRequests(t *testing.T) {
	for _, tc := range []struct {
		y     string
		label string
		want  float64
	}{
		{"p50", "median latency of successful requests (ms)", 10},
		{"p95", "p95 latency of successful requests (ms)", 30},
		{"p99.9", "p99.9 latency of successful requests (ms)", 50},
		{"max-latency", "maximum latency of successful requests (ms)", 60},
	} {
		f, err := workloads.SweepDef{VMs: []int{1, 2}, Y: tc.y}.Figure()
		if err != nil {
			t.Fatal(err)
		}
		if f.YLabel != tc.label {
			t.Errorf("%s: label %q, want %q", tc.y, f.YLabel, tc.label)
		}
		fr := f.Runs[0]
		run := &results.Run{ID: workloads.RunID(f.ID, fr.Series, fr.X),
			LatencyMs:        results.Percentiles{P50: 1, P90: 2, P95: 3, P99: 4, P999: 5, Max: 6, Mean: 2},
			SuccessLatencyMs: results.Percentiles{P50: 10, P90: 20, P95: 30, P99: 40, P999: 50, Max: 60, Mean: 20}}
		if y, ok := workloads.NewMeasured([]workloads.Figure{f}, []*results.Run{run}).Y(f.ID, fr.Series, fr.X); !ok || y != tc.want {
			t.Errorf("%s: y %v, want %v", tc.y, y, tc.want)
		}
	}
}
