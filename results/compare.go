package results

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Difference is how one metric of one run differs between two result sets,
// and whether the difference stands out from the runs' own noise.
type Difference struct {
	Metric *Metric
	A, B   float64 // the runs' values
	// P is the p-value of a Mann-Whitney U test (benchstat's) of the two
	// runs' per-second samples: how likely samples this far apart would
	// be if both runs drew theirs from one distribution. NaN where a run
	// has no per-second samples of the metric.
	P      float64
	N1, N2 int     // the seconds tested
	Alpha  float64 // P below Alpha is beyond noise
	// Note says why a verdict is weak: too few seconds to tell, or no
	// per-second samples.
	Note string
}

// DefaultAlpha is the significance level of a comparison, benchstat's.
const DefaultAlpha = 0.05

// CompareRun tests each metric of two runs of one ID. A latency metric's
// per-second samples come from the runs' interval logs when read
// (Run.ReadHlog), or else from the median and p99 each interval stores.
func CompareRun(a, b *Run, metrics []*Metric, alpha float64) []Difference {
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	var out []Difference
	for _, m := range metrics {
		d := Difference{Metric: m, A: m.Value(a, a.X), B: m.Value(b, b.X), P: math.NaN(), Alpha: alpha}
		var sa, sb []float64
		if m.PerSecond != nil {
			sa, sb = m.PerSecond(a), m.PerSecond(b)
		}
		if m.Unit == "ms" && (d.A == 0 && a.SuccessLatencyMs.Count > 0 || d.B == 0 && b.SuccessLatencyMs.Count > 0) {
			d.Note = "a record made before tablebench stored it" // a latency of 0 ms over successful requests
			out = append(out, d)
			continue
		}
		if len(sa) == 0 || len(sb) == 0 {
			d.Note = "no per-second samples"
			out = append(out, d)
			continue
		}
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(sa), th), benchmath.NewSample(slices.Clone(sb), th))
		d.P, d.N1, d.N2 = c.P, c.N1, c.N2
		if len(c.Warnings) > 0 && !slices.Equal(sa, sb) {
			d.Note = fmt.Sprintf("%d and %d seconds: %v", c.N1, c.N2, errors.Join(c.Warnings...))
		}
		out = append(out, d)
	}
	return out
}

// Beyond reports whether the difference is beyond the runs' noise.
func (d *Difference) Beyond() bool { return d.P < d.Alpha } // NaN is never below

// Change is B's change from A: in percentage points for a metric that is a
// percentage (a share of requests near zero makes a ratio meaningless),
// in percent of A otherwise; ±Inf where A is zero and B is not.
func (d *Difference) Change() float64 {
	if d.Metric.Unit == "%" {
		return d.B - d.A
	}
	if d.A == 0 {
		if d.B == 0 {
			return 0
		}
		return math.Copysign(math.Inf(1), d.B)
	}
	return 100 * (d.B/d.A - 1)
}

// ChangeText prints Change with its unit: "+12.3%" or "+0.21 pts".
func (d *Difference) ChangeText() string {
	c := d.Change()
	switch {
	case d.Metric.Unit == "%" && c != 0 && math.Abs(c) < 0.01: // a rare throttle, as FormatValue prints it
		return fmt.Sprintf("%+.4f pts", c)
	case d.Metric.Unit == "%":
		return fmt.Sprintf("%+.2f pts", c)
	case math.IsInf(c, 0):
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", c)
}

// Worse reports whether B is worse than A: lower where higher is better,
// higher where lower is better.
func (d *Difference) Worse() bool {
	return d.Metric.Better > 0 && d.B < d.A || d.Metric.Better < 0 && d.B > d.A
}

// Regression reports whether B is worse than A beyond the runs' noise and
// by more than tolerance (percent, or points for a percentage).
func (d *Difference) Regression(tolerance float64) bool {
	return d.Beyond() && d.Worse() && math.Abs(d.Change()) > tolerance
}

// Verdict says whether the difference is beyond noise:
// "+12.3% beyond noise (p=0.002)" or "~ within noise (p=0.412)".
func (d *Difference) Verdict() string {
	switch {
	case math.IsNaN(d.P):
		return "? " + d.Note
	case d.Beyond():
		return fmt.Sprintf("%s beyond noise (%s)", d.ChangeText(), d.pText())
	case d.Note != "":
		return fmt.Sprintf("~ within noise (%s; %s)", d.pText(), d.Note)
	}
	return fmt.Sprintf("~ within noise (%s)", d.pText())
}

// pText prints the p-value to three places, and a smaller one as a bound.
func (d *Difference) pText() string {
	if d.P < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", d.P)
}
