package results_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/results"
)

// TestMetricTable: every metric can be printed, compared and found by
// name; latency metrics say which requests they read and read the
// successful ones; an unknown name is an error naming the known ones.
func TestMetricTable(t *testing.T) {
	run := &results.Run{EntitiesPerSec: 100, ThrottledPct: 2,
		LatencyMs:        results.Percentiles{Count: 10, P50: 1, P90: 2, P95: 3, P99: 4, P999: 5, Max: 6, Mean: 1.5},
		SuccessLatencyMs: results.Percentiles{Count: 8, P50: 10, P90: 20, P95: 30, P99: 40, P999: 50, Max: 60, Mean: 15}}
	names, columns := map[string]bool{}, map[string]bool{}
	for i := range results.Metrics {
		m := &results.Metrics[i]
		if m.Name == "" || m.Label == "" || m.Value == nil || names[m.Name] || (m.Column != "" && columns[m.Column]) {
			t.Errorf("metric %q: a name, label and value each, none twice", m.Name)
		}
		names[m.Name], columns[m.Column] = true, true
		if got, err := results.LookupMetric(m.Name); err != nil || got != m {
			t.Errorf("LookupMetric(%q) = %v, %v", m.Name, got, err)
		}
		if m.Y2 != "" {
			if _, err := results.LookupMetric(m.Y2); err != nil {
				t.Errorf("%s: y2 %v", m.Name, err)
			}
		}
		if m.Unit == "ms" {
			if !strings.Contains(m.Label, "of successful requests") {
				t.Errorf("%s: label %q does not say which requests it reads", m.Name, m.Label)
			}
			if v := m.Value(run, 1); v < 10 {
				t.Errorf("%s reads %v, not the latency of successful requests", m.Name, v)
			}
		}
	}
	for _, want := range []string{"p50", "p90", "p95", "p99", "p99.9", "max-latency", "mean-latency"} {
		if m, err := results.LookupMetric(want); err != nil || !m.Sweep || m.Column == "" {
			t.Errorf("%s: %v; want a sweep's y and a CSV column", want, err)
		}
	}
	_, err := results.LookupMetric("p51")
	if err == nil || !strings.Contains(err.Error(), `"p51" is not known: use entities-per-sec, `) {
		t.Fatalf("an unknown metric: %v", err)
	}
	if sat, _ := results.LookupMetric("saturation"); sat.Sweep || sat.Y2 != "throttled-pct" {
		t.Error("saturation is a dual chart's, with throttling on its second axis")
	}
}

// TestPerSecondSamples: the samples a comparison tests are the measured
// seconds only, and a run read without its interval log still has the
// median and p99 its intervals store.
func TestPerSecondSamples(t *testing.T) {
	run := &results.Run{Intervals: []results.Interval{
		{Second: 0, Warmup: true, Requests: 10, Entities: 1000, Throttled: 5, P50Ms: 100, P99Ms: 200},
		{Second: 1, Requests: 10, Entities: 10, Throttled: 1, P50Ms: 1, P99Ms: 2},
		{Second: 2, Requests: 0},
		{Second: 3, Requests: 20, Entities: 20, P50Ms: 3, P99Ms: 4},
	}}
	tests := []struct {
		metric string
		want   []float64
	}{
		{"entities-per-sec", []float64{10, 0, 20}},
		{"throttled-pct", []float64{10, 0}},
		{"p50", []float64{1, 3}},
		{"p99", []float64{2, 4}},
		{"p95", nil},
	}
	for _, tc := range tests {
		m, _ := results.LookupMetric(tc.metric)
		got := m.PerSecond(run)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.metric, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: %v, want %v", tc.metric, got, tc.want)
			}
		}
	}
}

// TestDifferenceVerdicts: a difference is beyond noise only where the
// per-second samples say so; a regression is worse, beyond noise and
// beyond the tolerance, in percent or, for a share, in points.
func TestDifferenceVerdicts(t *testing.T) {
	runOf := func(entities, throttled []int64) *results.Run {
		r := &results.Run{}
		for i := range entities {
			r.Intervals = append(r.Intervals, results.Interval{Second: i, Requests: 100, Entities: entities[i], Throttled: throttled[i]})
			r.EntitiesPerSec += float64(entities[i]) / float64(len(entities))
			r.ThrottledPct += float64(throttled[i]) / float64(len(entities))
		}
		return r
	}
	eps, _ := results.LookupMetric("entities-per-sec")
	thr, _ := results.LookupMetric("throttled-pct")
	p95, _ := results.LookupMetric("p95")
	ms := []*results.Metric{eps, thr, p95}
	a := runOf([]int64{100, 101, 99, 100, 102, 98, 100, 101}, []int64{0, 0, 0, 0, 0, 0, 0, 0})
	b := runOf([]int64{90, 91, 89, 90, 92, 88, 90, 91}, []int64{3, 2, 4, 3, 3, 2, 4, 3})
	d := results.CompareRun(a, b, ms, results.DefaultAlpha)
	if !d[0].Beyond() || !d[0].Worse() || d[0].ChangeText() != "-10.0%" || !d[0].Regression(5) || d[0].Regression(10.5) {
		t.Errorf("entities/s: %+v, %s", d[0], d[0].Verdict())
	}
	if d[0].Verdict() != "-10.0% beyond noise (p<0.001)" {
		t.Errorf("entities/s verdict %q", d[0].Verdict())
	}
	if !d[1].Regression(2.9) || d[1].Regression(3.1) || d[1].ChangeText() != "+3.00 pts" {
		t.Errorf("throttled share, in points: %s, %s", d[1].ChangeText(), d[1].Verdict())
	}
	if d[2].Beyond() || d[2].Regression(0) || d[2].Verdict() != "? no per-second samples" {
		t.Errorf("p95 without an interval log: %s", d[2].Verdict())
	}
	same := results.CompareRun(a, a, ms, results.DefaultAlpha)
	for _, s := range same[:2] {
		if s.Beyond() || s.Verdict() != "~ within noise (p=1.000)" {
			t.Errorf("%s of a run against itself: %s", s.Metric.Name, s.Verdict())
		}
	}
	old := *a
	old.SuccessLatencyMs = results.Percentiles{Count: 10, P50: 1, P90: 2, P99: 3, P999: 4, Max: 5, Mean: 1}
	neu := old
	neu.SuccessLatencyMs.P95 = 2.5
	if d := results.CompareRun(&old, &neu, ms, results.DefaultAlpha)[2]; d.Verdict() != "? a record made before tablebench stored it" {
		t.Errorf("p95 of a record without it: %s", d.Verdict())
	}
	few := results.CompareRun(runOf([]int64{1, 2}, []int64{0, 0}), runOf([]int64{5, 6}, []int64{0, 0}), ms, results.DefaultAlpha)
	if few[0].Beyond() || !strings.Contains(few[0].Verdict(), "~ within noise (p=0.333; 2 and 2 seconds: need >= 4 samples") {
		t.Errorf("two seconds each: %s", few[0].Verdict())
	}
}
