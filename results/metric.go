package results

import (
	"fmt"
	"math"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tablebench/tablebench/tables"
)

// Metric is one number a run contributes to a figure, a sweep's y axis, a
// CSV column or a comparison. Metrics is the one list of them: names are
// checked, labels and units printed, and help text written from it.
//
// Every latency metric reads the latency of successful requests, as the
// case study's latency figures and claims do: a throttled request is
// answered at once, so counting it would make latency fall as throttling
// rises. The run summary and the interval log keep every request's latency
// besides.
type Metric struct {
	Name string // as a figure and a sweep's y name it, such as p99
	// Aliases are shorter names it is known by, such as throttled for
	// throttled-pct; LookupMetric takes them, and any name with _ for -.
	Aliases []string
	Label   string // axis label, naming which requests it reads
	Unit    string // as a value is printed: e/s, req/s, %, ms, x or none
	// Column is the metric's column in a figure's CSV; empty for a metric
	// that is not a property of the run alone.
	Column string
	// Better is +1 where a higher value is better (throughput), -1 where a
	// lower one is (latency, throttling), 0 where neither.
	Better int
	// Sweep says whether a sweep may plot it: a metric that reads the x
	// value as a batch size, or draws a second axis, belongs to its figure.
	Sweep bool
	// Y2 names the metric drawn on a second axis, for a dual chart.
	Y2 string
	// Value returns a run's value; x is the run's x value in its figure.
	Value func(r *Run, x float64) float64
	// PerSecond returns the metric in each measured second of a run, the
	// samples that tell a difference from the run's own noise; nil where
	// the record holds no such samples.
	PerSecond func(r *Run) []float64
	// Entities says the metric reads how many entities the run moved,
	// which a run's histograms do not tell per operation.
	Entities bool
}

// latency is a latency metric of successful requests: pick reads it from a
// summary, perSec from a second's histogram, and stored, where the record
// keeps it for each second, from an interval.
func latency(name, what, column string, pick func(Percentiles) float64, perSec func(*hdr.Histogram) float64, stored func(Interval) float64) Metric {
	return Metric{Name: name, Label: what + " latency of successful requests (ms)", Unit: "ms", Column: column, Better: -1, Sweep: true,
		Value:     func(r *Run, _ float64) float64 { return pick(r.SuccessLatencyMs) },
		PerSecond: func(r *Run) []float64 { return perSecondLatency(r, perSec, stored) }}
}

// quantile returns a histogram's value at a percentile, in ms.
func quantile(q float64) func(*hdr.Histogram) float64 {
	return func(h *hdr.Histogram) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
}

// Metrics are every metric, in the order help text lists them.
var Metrics = []Metric{
	{Name: "entities-per-sec", Entities: true, Label: "entities/s", Unit: "e/s", Column: "entities_per_sec", Better: 1, Sweep: true,
		Value:     func(r *Run, _ float64) float64 { return r.EntitiesPerSec },
		PerSecond: func(r *Run) []float64 { return perSecond(r, func(iv Interval) float64 { return float64(iv.Entities) }) }},
	{Name: "requests-per-sec", Label: "requests/s", Unit: "req/s", Column: "requests_per_sec", Better: 1, Sweep: true,
		Value:     func(r *Run, _ float64) float64 { return r.RequestsPerSec },
		PerSecond: func(r *Run) []float64 { return perSecond(r, func(iv Interval) float64 { return float64(iv.Requests) }) }},
	{Name: "throttled-pct", Aliases: []string{"throttled"}, Label: "% of requests throttled", Unit: "%", Column: "throttled_pct", Better: -1, Sweep: true,
		Value: func(r *Run, _ float64) float64 { return r.ThrottledPct },
		PerSecond: func(r *Run) []float64 {
			return perSecond(r, func(iv Interval) float64 {
				if iv.Requests == 0 {
					return math.NaN()
				}
				return 100 * float64(iv.Throttled) / float64(iv.Requests)
			})
		}},
	latency("p50", "median", "p50_ms", func(p Percentiles) float64 { return p.P50 }, quantile(50), func(iv Interval) float64 { return iv.P50Ms }),
	latency("p90", "p90", "p90_ms", func(p Percentiles) float64 { return p.P90 }, quantile(90), nil),
	latency("p95", "p95", "p95_ms", func(p Percentiles) float64 { return p.P95 }, quantile(95), nil),
	latency("p99", "p99", "p99_ms", func(p Percentiles) float64 { return p.P99 }, quantile(99), func(iv Interval) float64 { return iv.P99Ms }),
	withAliases(latency("p99.9", "p99.9", "p999_ms", func(p Percentiles) float64 { return p.P999 }, quantile(99.9), nil), "p999"),
	withAliases(latency("max-latency", "maximum", "max_ms", func(p Percentiles) float64 { return p.Max }, func(h *hdr.Histogram) float64 { return float64(h.Max()) / 1000 }, nil), "max"),
	withAliases(latency("mean-latency", "mean", "mean_ms", func(p Percentiles) float64 { return p.Mean }, func(h *hdr.Histogram) float64 { return h.Mean() / 1000 }, nil), "mean"),
	{Name: "errors", Label: "requests failed, throttling included", Unit: "", Column: "errors", Better: -1, Sweep: true,
		Value: func(r *Run, _ float64) float64 {
			var n int64
			for _, c := range r.Errors {
				n += c
			}
			return float64(n)
		}},
	{Name: "entities-per-billable", Entities: true, Label: "successful entities per billed transaction", Unit: "x", Better: 1, Sweep: true,
		Value: func(r *Run, _ float64) float64 {
			if r.Billable == 0 { // throttled requests are billed too
				return 0
			}
			return float64(r.Totals.Entities) / float64(r.Billable)
		}},
	{Name: "conflicts-per-1000", Label: "conflicts per 1,000 requests", Unit: "", Better: -1, Sweep: true,
		Value: func(r *Run, _ float64) float64 {
			if r.Totals.Requests == 0 {
				return 0
			}
			return 1000 * float64(r.Errors[tables.CodeEntityAlreadyExists]) / float64(r.Totals.Requests)
		}},
	{Name: "per-entity-latency", Label: "mean latency per entity of successful requests (ms)", Unit: "ms", Better: -1,
		Value: func(r *Run, x float64) float64 { return r.SuccessLatencyMs.Mean / math.Max(x, 1) }}, // x is the batch size
	{Name: "saturation", Entities: true, Label: "entities/s", Unit: "e/s", Better: 1, Y2: "throttled-pct",
		Value: func(r *Run, _ float64) float64 { return r.EntitiesPerSec }},
	{Name: "request-units-per-sec", Label: "request units charged per second (RU/s)", Unit: "RU/s", Better: 1,
		Value:     func(r *Run, _ float64) float64 { return r.RequestUnitsPerSec },
		PerSecond: func(r *Run) []float64 { return perSecond(r, func(iv Interval) float64 { return iv.RequestUnits }) }},
	{Name: "request-units-per-request", Label: "request units charged per request (RU)", Unit: "RU", Better: -1,
		Value: func(r *Run, _ float64) float64 {
			if r.Totals.Requests == 0 {
				return 0
			}
			return r.Totals.RequestUnits / float64(r.Totals.Requests)
		}},
}

// withAliases gives a metric shorter names.
func withAliases(m Metric, aliases ...string) Metric {
	m.Aliases = aliases
	return m
}

// LookupMetric returns the metric named by its name or an alias, with _
// for - as a CSV column or a JSON record spells it, or an error listing
// the names.
func LookupMetric(name string) (*Metric, error) {
	n := strings.ReplaceAll(name, "_", "-")
	for i := range Metrics {
		if Metrics[i].Name == n || slices.Contains(Metrics[i].Aliases, n) {
			return &Metrics[i], nil
		}
	}
	return nil, fmt.Errorf("metric %q is not known: use %s", name, MetricNames(func(*Metric) bool { return true }))
}

// MetricNames lists the names of the metrics keep accepts, for help text
// and errors: "a, b or c".
func MetricNames(keep func(*Metric) bool) string {
	var names []string
	for i := range Metrics {
		if keep(&Metrics[i]) {
			names = append(names, Metrics[i].Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// SweepMetric reports whether a sweep may plot a metric.
func SweepMetric(m *Metric) bool { return m.Sweep }

// perSecond returns f of each measured second of a run; NaN values are
// left out.
func perSecond(r *Run, f func(Interval) float64) []float64 {
	var out []float64
	for _, iv := range r.Intervals {
		if v := f(iv); !iv.Warmup && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// perSecondLatency returns a latency metric in each measured second that
// completed a request. The per-second histograms of the interval log hold
// every request, not only successful ones: where a second had none fail
// they are the same. A run read without its interval log has only what its
// intervals store (the median and p99), and nil for the rest.
func perSecondLatency(r *Run, f func(*hdr.Histogram) float64, stored func(Interval) float64) []float64 {
	if len(r.IntervalHists) == len(r.Intervals) {
		var out []float64
		for i, iv := range r.Intervals {
			if h := r.IntervalHists[i]; !iv.Warmup && h.TotalCount() > 0 {
				out = append(out, f(h))
			}
		}
		return out
	}
	if stored == nil {
		return nil
	}
	return perSecond(r, func(iv Interval) float64 {
		if iv.Requests == 0 {
			return math.NaN()
		}
		return stored(iv)
	})
}
