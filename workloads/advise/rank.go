package advise

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/tablebench/tablebench/results"
)

// Margins below which a difference between two candidates does not count,
// however sure the test is of it: a difference no user would act on.
const (
	marginSuccess   = 0.02 // of the successful rate
	marginThrottled = 0.5  // percentage points of requests throttled
	marginP99       = 0.25 // of the p99 latency
	marginP99Ms     = 2.0  // and at least this many ms
)

// rank orders rows best first, by the share of the offered requests that
// succeeded, then the throttled share, then the p99 latency, and gives
// each its rank: a row shares the rank of the one ahead of its group
// unless it differs from it beyond noise (see differ), so noise is never
// ranked.
func rank(rows []Row, alpha float64) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(carried(b), carried(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ThrottledPct, b.ThrottledPct); c != 0 {
			return c
		}
		return cmp.Compare(p99(a.run), p99(b.run))
	})
	lead := 0
	for i := range rows {
		if i == 0 || differ(rows[lead].run, rows[i].run, alpha) {
			lead = i
		}
		rows[i].Rank = lead + 1
	}
	for i := range rows {
		n := 0
		for j := range rows {
			if rows[j].Rank == rows[i].Rank {
				n++
			}
		}
		rows[i].Tie = n > 1
	}
}

// carried is the share of offered requests that succeeded.
func carried(r Row) float64 {
	if r.TargetRate <= 0 {
		return 0
	}
	return math.Min(r.SuccessPerSec/r.TargetRate, 1)
}

func p99(r *results.Run) float64 {
	if r == nil {
		return 0
	}
	return r.LatencyMs.P99
}

// differ reports whether two runs differ beyond noise and beyond the
// margins in their successful requests per second, their throttled share
// or their p99 latency: a Mann-Whitney U test (benchstat's, as compare
// uses) of their measured seconds.
func differ(a, b *results.Run, alpha float64) bool {
	metrics := []struct {
		of       func(results.Interval) float64
		material func(x, y float64) bool
	}{
		{func(iv results.Interval) float64 { return float64(iv.Requests - iv.Throttled - iv.Errors) },
			func(x, y float64) bool { return math.Abs(x-y) > marginSuccess*math.Max(x, y) }},
		{func(iv results.Interval) float64 { return 100 * ratio(iv.Throttled, iv.Requests) },
			func(x, y float64) bool { return math.Abs(x-y) > marginThrottled }},
		{func(iv results.Interval) float64 { return iv.P99Ms },
			func(x, y float64) bool {
				return math.Abs(x-y) > marginP99*math.Max(x, y) && math.Abs(x-y) > marginP99Ms
			}},
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	for _, m := range metrics {
		sa, sb := measured(a, m.of), measured(b, m.of)
		if len(sa) == 0 || len(sb) == 0 || !m.material(mean(sa), mean(sb)) {
			continue
		}
		if slices.Equal(sa, sb) {
			continue
		}
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(sa, th), benchmath.NewSample(sb, th))
		if c.P < alpha {
			return true
		}
	}
	return false
}

// measured returns a run's per-second values of the measured window.
func measured(r *results.Run, of func(results.Interval) float64) []float64 {
	var out []float64
	for _, iv := range r.Intervals {
		if !iv.Warmup && float64(iv.Second) < r.Setup.Warmup.Seconds()+r.MeasuredSec {
			out = append(out, of(iv))
		}
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
