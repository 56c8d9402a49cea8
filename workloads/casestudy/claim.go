package casestudy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// A Claim is one published claim and the predicate that checks it. The
// predicate is data: a measured Quantity, the Bound it must meet, and what
// else must hold. The reading, the threshold and the detail the report shows
// are all written from that data, so what the report says is what was
// checked.
type Claim struct {
	ID     string
	Figure int
	// Text is the claim in the case study's words.
	Text string
	// Value is the number shown as measured; Bound is what it must meet.
	Value Quantity
	Bound Bound
	// Also lists what must hold besides the bound.
	Also []Condition
	// Show lists other numbers worth printing beside the verdict.
	Show []Quantity
	// Published is the claim's number on Value's scale; Printed says whether
	// the case study printed it, or it is the reading's own threshold.
	Published float64
	Printed   bool
	// ClientModel marks a claim that the harness's client model decides,
	// not the service model.
	ClientModel bool
	// Why says where a bound the case study did not print comes from.
	Why string
	// Note says why the model does not meet the claim, shown when it fails.
	Note string
}

// Reading returns how the claim is checked, in words.
func (c *Claim) Reading() string {
	parts := []string{c.Value.text + " is " + c.Bound.reading(c.Value.unit)}
	for _, a := range c.Also {
		parts = append(parts, a.reading)
	}
	r := strings.Join(parts, "; and ")
	if c.Why != "" {
		r += " (" + c.Why + ")"
	}
	return r
}

// Threshold returns the claim's thresholds in a few words.
func (c *Claim) Threshold() string {
	parts := []string{c.Bound.short(c.Value.unit)}
	for _, a := range c.Also {
		parts = append(parts, a.short)
	}
	return strings.Join(parts, ", ")
}

// Needs returns the figures whose runs the claim reads.
func (c *Claim) Needs() []int {
	seen := map[int]bool{}
	var out []int
	add := func(figs []int) {
		for _, f := range figs {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	add(c.Value.figs)
	for _, a := range c.Also {
		add(a.figs)
	}
	return out
}

// Check evaluates the claim on stored runs; ok is false when a run it needs
// is missing.
func (c *Claim) Check(m workloads.Measured) (rc results.CheckedClaim, ok bool) {
	v, ok := c.Value.eval(m)
	if !ok {
		return rc, false
	}
	pass := c.Bound.holds(v)
	var detail []string
	if d := c.Value.detail(m); d != "" {
		detail = append(detail, d)
	}
	for _, a := range c.Also {
		held, ok, d := a.check(m)
		if !ok {
			return rc, false
		}
		pass = pass && held
		if d != "" {
			detail = append(detail, d)
		}
	}
	for _, q := range c.Show {
		if w, ok := q.eval(m); ok {
			detail = append(detail, q.text+" "+val(w, q.unit))
		}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) { // a run measured nothing to divide by
		v, pass = 0, false
		detail = append(detail, "not measurable: a run it reads measured nothing")
	}
	rc = results.CheckedClaim{ID: c.ID, Figure: c.Figure, Text: c.Text, Reading: c.Reading(), Measured: v, Unit: c.Value.unit,
		Tolerance: c.Threshold(), Min: bound(c.Bound.Min), Max: bound(c.Bound.Max), Pass: pass, Detail: strings.Join(detail, "; ")}
	if c.Printed {
		rc.Published = bound(c.Published)
		rc.Marks = c.marks()
	}
	if c.ClientModel {
		rc.DecidedBy = "client model"
	}
	rc.SetMargin()
	if !pass {
		rc.Note = c.Note
	}
	return rc, true
}

// marks places the claim's published numbers on its figure: its own, and
// the targets of its conditions read "within so much of" a number, where
// the figure draws what they measure.
func (c *Claim) marks() []results.Mark {
	var out []results.Mark
	if m := c.Value.mark; m != nil && c.only(c.Value.figs) {
		mk := *m
		mk.Value, mk.Unit = c.Published, c.Value.unit
		out = append(out, mk)
	}
	for _, a := range c.Also {
		if a.mark != nil && c.only(a.figs) {
			out = append(out, *a.mark)
		}
	}
	return out
}

// only reports whether figs are the claim's own figure alone: a number
// read on another figure is not drawn on this one's.
func (c *Claim) only(figs []int) bool {
	for _, f := range figs {
		if f != c.Figure {
			return false
		}
	}
	return len(figs) > 0
}

func bound(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// A Bound is a range a measured value must lie in. Min and Max are NaN
// where the range is open; the margin is measured to them.
type Bound struct {
	Min, Max float64
	// strict excludes Max itself; near and factor word the range around a
	// target (within tol of it, or within a factor of it).
	strict         bool
	target, tol    float64
	near, byFactor bool
}

var open = math.NaN()

// tidy drops the last bits of a bound computed from a target, so 11 +15%
// is stored as 12.65, as written.
func tidy(v float64) float64 {
	t, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return t
}

// AtLeast bounds a value from below, inclusive.
func AtLeast(v float64) Bound { return Bound{Min: v, Max: open} }

// AtMost bounds a value from above, inclusive.
func AtMost(v float64) Bound { return Bound{Min: open, Max: v} }

// Under bounds a value from above, exclusive.
func Under(v float64) Bound { return Bound{Min: open, Max: v, strict: true} }

// Between bounds a value on both sides, inclusive.
func Between(lo, hi float64) Bound { return Bound{Min: lo, Max: hi} }

// Near bounds a value to within a fraction tol of target.
func Near(target, tol float64) Bound {
	return Bound{Min: tidy(target * (1 - tol)), Max: tidy(target * (1 + tol)), target: target, tol: tol, near: true}
}

// WithinFactor bounds a value to within a factor f of target.
func WithinFactor(target, f float64) Bound {
	return Bound{Min: tidy(target / f), Max: tidy(target * f), target: target, tol: f, byFactor: true}
}

func (b Bound) holds(v float64) bool {
	if b.near {
		return math.Abs(v-b.target) <= b.tol*b.target
	}
	if !math.IsNaN(b.Min) && v < b.Min {
		return false
	}
	if !math.IsNaN(b.Max) && (v > b.Max || b.strict && v == b.Max) {
		return false
	}
	return true
}

func (b Bound) reading(unit string) string {
	switch {
	case b.near:
		return fmt.Sprintf("within %g%% of %s", 100*b.tol, num(b.target, unit))
	case b.byFactor:
		return fmt.Sprintf("within a factor of %g of %s", b.tol, num(b.target, unit))
	case math.IsNaN(b.Max):
		return "at least " + num(b.Min, unit)
	case math.IsNaN(b.Min) && b.strict:
		return "under " + num(b.Max, unit)
	case math.IsNaN(b.Min):
		return "at most " + num(b.Max, unit)
	}
	return fmt.Sprintf("between %s and %s", num(b.Min, unit), num(b.Max, unit))
}

func (b Bound) short(unit string) string {
	switch {
	case b.near:
		return fmt.Sprintf("±%g%%", 100*b.tol)
	case b.byFactor:
		return num(b.Min, unit) + " to " + num(b.Max, unit)
	}
	return b.reading(unit)
}

// op writes a bound as a comparison, for a condition's name.
func (b Bound) op(unit string) string {
	switch {
	case b.near:
		return "±" + num(100*b.tol, "%")
	case math.IsNaN(b.Max):
		return ">= " + num(b.Min, unit)
	case math.IsNaN(b.Min) && b.strict:
		return "< " + num(b.Max, unit)
	case math.IsNaN(b.Min):
		return "<= " + num(b.Max, unit)
	}
	return num(b.Min, unit) + "-" + num(b.Max, unit)
}

// A Condition is something else a claim requires: a quantity within a
// bound, or a shape of a figure's series.
type Condition struct {
	reading, short string
	figs           []int
	check          func(m workloads.Measured) (held, ok bool, detail string)
	mark           *results.Mark // the number it is read around, where a figure draws it
}

// Holds requires q to meet b; name is its name in the threshold column.
func Holds(name string, q Quantity, b Bound) Condition {
	var mark *results.Mark
	if q.mark != nil && (b.near || b.byFactor) {
		mk := *q.mark
		mk.Value, mk.Unit = b.target, q.unit
		mark = &mk
	}
	return Condition{reading: q.text + " is " + b.reading(q.unit), short: name + " " + b.op(q.unit), figs: q.figs, mark: mark,
		check: func(m workloads.Measured) (bool, bool, string) {
			v, ok := q.eval(m)
			if !ok {
				return false, false, ""
			}
			d := name + " " + val(v, q.unit)
			if pd := q.detail(m); pd != "" {
				d += " (" + pd + ")"
			}
			return b.holds(v), true, d
		}}
}

// Rising requires a figure's series to rise at every step of xs. With a
// slack s, each point need only reach (1-s) of the one before.
func Rising(f *workloads.Figure, series string, xs []float64, slack float64) Condition {
	what := fmt.Sprintf("%s of %s rises at every step of %s", yName(f), series, xName(f))
	if slack > 0 {
		what += fmt.Sprintf(" (within %g%%)", 100*slack)
	}
	short := series + " rising"
	if slack > 0 {
		short += fmt.Sprintf(" (-%g%%)", 100*slack)
	}
	return Condition{reading: what, short: short, figs: []int{f.ID},
		check: func(m workloads.Measured) (bool, bool, string) {
			ys, ok := values(m, f.ID, series, xs)
			if !ok {
				return false, false, ""
			}
			for i := 1; i < len(ys); i++ {
				if slack > 0 && ys[i] < (1-slack)*ys[i-1] || slack == 0 && ys[i] <= ys[i-1] {
					return false, true, fmt.Sprintf("%s falls from %s %s to %s", series, xName(f), fmtX(xs[i-1]), fmtX(xs[i]))
				}
			}
			return true, true, ""
		}}
}

// Above requires series a of a figure to lie above series b at every x of
// xs. With a slack s, a need only reach (1-s) of b.
func Above(f *workloads.Figure, a, b string, xs []float64, slack float64) Condition {
	what := fmt.Sprintf("%s of %s is above %s at every %s", yName(f), a, b, xName(f))
	short := fmt.Sprintf("%s > %s", a, b)
	if slack > 0 {
		short = fmt.Sprintf("%s >= %s (-%g%%)", a, b, 100*slack)
		what = fmt.Sprintf("%s of %s is never below %s at any %s (within %g%%)", yName(f), a, b, xName(f), 100*slack)
	}
	return Condition{reading: what, short: short, figs: []int{f.ID},
		check: func(m workloads.Measured) (bool, bool, string) {
			ya, ok1 := values(m, f.ID, a, xs)
			yb, ok2 := values(m, f.ID, b, xs)
			if !ok1 || !ok2 {
				return false, false, ""
			}
			for i := range xs {
				if slack > 0 && ya[i] < (1-slack)*yb[i] || slack == 0 && ya[i] <= yb[i] {
					return false, true, fmt.Sprintf("%s is below %s at %s %s", a, b, xName(f), fmtX(xs[i]))
				}
			}
			return true, true, ""
		}}
}

// A Quantity is a number measured from stored runs, and its name in words.
type Quantity struct {
	text string
	unit string
	figs []int
	eval func(m workloads.Measured) (float64, bool)
	// parts are the quantities an aggregate is taken over; its detail
	// names the one that decided.
	parts []Quantity
	pick  func(vs []float64) int
	// mark says where a figure draws the quantity (its Value and Unit
	// unset), or is nil where no figure does.
	mark *results.Mark
}

func (q Quantity) detail(m workloads.Measured) string {
	if q.pick == nil {
		return ""
	}
	vs := make([]float64, len(q.parts))
	for i, p := range q.parts {
		v, ok := p.eval(m)
		if !ok {
			return ""
		}
		vs[i] = v
	}
	i := q.pick(vs)
	return fmt.Sprintf("%s: %s", q.parts[i].text, val(vs[i], q.parts[i].unit))
}

// A Stat is a number of one run that a claim can read.
type Stat int

// The stats of a run a claim reads.
const (
	MedianLatency  Stat = iota // of successful requests, ms
	MeanLatency                // of successful requests, ms
	P90Latency                 // of successful requests, ms
	P99Latency                 // of successful requests, ms
	EntitiesPerSec             // successful
	SentPerSec                 // entities sent, throttled or not
	ThrottledPct               // requests throttled or timed out, %
	Requests                   // requests sent
	RUPerSec                   // request units charged per second
	RUPerRequest               // request units charged per request
)

var stats = map[Stat]struct {
	name, unit string
	of         func(r *results.Run) float64
}{
	MedianLatency:  {"the median latency", "ms", metricOf("p50")},
	MeanLatency:    {"the mean latency", "ms", metricOf("mean-latency")},
	P90Latency:     {"the p90 latency", "ms", metricOf("p90")},
	P99Latency:     {"the p99 latency", "ms", metricOf("p99")},
	EntitiesPerSec: {"successful entities/s", "e/s", metricOf("entities-per-sec")},
	SentPerSec:     {"entities/s sent", "e/s", func(r *results.Run) float64 { return r.EntitiesSentPerSec }},
	ThrottledPct:   {"the throttled share", "%", metricOf("throttled-pct")},
	Requests:       {"requests", "", func(r *results.Run) float64 { return float64(r.Totals.Requests) }},
	RUPerSec:       {"the request units charged per second", "RU/s", metricOf("request-units-per-sec")},
	RUPerRequest:   {"the request units charged per request", "RU", metricOf("request-units-per-request")},
}

// metricOf reads a run's metric from the one table of them, so that a
// claim and a figure of the same name read the same number.
func metricOf(name string) func(r *results.Run) float64 {
	m, err := results.LookupMetric(name)
	return func(r *results.Run) float64 {
		if err != nil { // a name in this file: TestStatsReadMetrics catches it
			return math.NaN()
		}
		return m.Value(r, 0)
	}
}

// RunStat is a stat of one run of a figure.
func RunStat(f *workloads.Figure, series string, x float64, st Stat) Quantity {
	s := stats[st]
	return Quantity{text: s.name + " of " + where(f, series, x), unit: s.unit, figs: []int{f.ID}, mark: statMark(f, series, x, st),
		eval: func(m workloads.Measured) (float64, bool) {
			r := m.Run(f.ID, series, x)
			if r == nil {
				return 0, false
			}
			return s.of(r), true
		}}
}

// statMark says where a figure's charts draw a stat of one of its runs:
// latency on the percentile chart, a rate or share where the figure's axes
// show it; nil where they do not.
func statMark(f *workloads.Figure, series string, x float64, st Stat) *results.Mark {
	m := &results.Mark{Series: series, X: &x}
	switch {
	case st == MedianLatency:
		m.On, m.Percentile = results.MarkLatency, 50
	case st == P90Latency:
		m.On, m.Percentile = results.MarkLatency, 90
	case st == P99Latency:
		m.On, m.Percentile = results.MarkLatency, 99
	case st == EntitiesPerSec && (f.Metric == "entities-per-sec" || f.Metric == "saturation") && f.Chart != results.ChartHistogram:
		m.On = results.MarkY
	case st == ThrottledPct && f.Metric == "throttled-pct":
		m.On = results.MarkY
	case st == ThrottledPct && f.Metric == "saturation":
		m.On = results.MarkY2
	default:
		return nil
	}
	return m
}

// Y is a figure's value at (series, x), as the figure draws it.
func Y(f *workloads.Figure, series string, x float64) Quantity {
	return Quantity{text: yName(f) + " of " + where(f, series, x), unit: yUnit(f), figs: []int{f.ID}, mark: &results.Mark{On: results.MarkY, Series: series, X: &x},
		eval: func(m workloads.Measured) (float64, bool) { return m.Y(f.ID, series, x) }}
}

// Ratio is a over b.
func Ratio(a, b Quantity) Quantity {
	text := a.text + " over " + b.text
	if len(a.figs) == 1 && len(b.figs) == 1 && a.figs[0] != b.figs[0] {
		text = fmt.Sprintf("%s (Figure %d) over %s (Figure %d)", a.text, a.figs[0], b.text, b.figs[0])
	}
	return Quantity{text: text, unit: "x", figs: append(append([]int{}, a.figs...), b.figs...),
		eval: func(m workloads.Measured) (float64, bool) {
			x, ok1 := a.eval(m)
			y, ok2 := b.eval(m)
			return x / y, ok1 && ok2
		}}
}

// Times is k times q.
func Times(k float64, q Quantity) Quantity {
	return Quantity{text: fmt.Sprintf("%g times %s", k, q.text), unit: q.unit, figs: q.figs,
		eval: func(m workloads.Measured) (float64, bool) {
			v, ok := q.eval(m)
			return k * v, ok
		}}
}

// Growth is how many times a series' value at x1 is its value at x0.
func Growth(f *workloads.Figure, series string, x0, x1 float64) Quantity {
	return change(f, series, x0, x1, "the growth", "x", func(a, b float64) float64 { return b / a })
}

// Gain is how much a series' value at x1 exceeds its value at x0, in %.
func Gain(f *workloads.Figure, series string, x0, x1 float64) Quantity {
	return change(f, series, x0, x1, "the gain", "%", func(a, b float64) float64 { return 100 * (b/a - 1) })
}

// Fall is how much a series' value at x1 is below its value at x0, in %.
func Fall(f *workloads.Figure, series string, x0, x1 float64) Quantity {
	return change(f, series, x0, x1, "the fall", "%", func(a, b float64) float64 { return 100 * (1 - b/a) })
}

// ShareOf is a series' value at x as a share of its value at of, in %.
func ShareOf(f *workloads.Figure, series string, x, of float64) Quantity {
	return Quantity{text: fmt.Sprintf("%s of %s at %s as a share of that at %s", yName(f), series, at(f, x), at(f, of)), unit: "%", figs: []int{f.ID},
		eval: func(m workloads.Measured) (float64, bool) {
			v, ok := values(m, f.ID, series, []float64{x, of})
			if !ok {
				return 0, false
			}
			return 100 * v[0] / v[1], true
		}}
}

// ShareOfPeak is a series' value at x as a share of its highest over xs, in %.
func ShareOfPeak(f *workloads.Figure, series string, x float64, xs []float64) Quantity {
	return Quantity{text: fmt.Sprintf("%s of %s at %s as a share of its highest", yName(f), series, at(f, x)), unit: "%", figs: []int{f.ID},
		eval: func(m workloads.Measured) (float64, bool) {
			v, ok := values(m, f.ID, series, xs)
			y, ok2 := m.Y(f.ID, series, x)
			if !ok || !ok2 {
				return 0, false
			}
			top := v[0]
			for _, w := range v {
				top = math.Max(top, w)
			}
			return 100 * y / top, true
		}}
}

func change(f *workloads.Figure, series string, x0, x1 float64, what, unit string, fn func(a, b float64) float64) Quantity {
	return Quantity{text: fmt.Sprintf("%s in %s of %s from %s to %s", what, yName(f), series, at(f, x0), at(f, x1)), unit: unit, figs: []int{f.ID},
		eval: func(m workloads.Measured) (float64, bool) {
			v, ok := values(m, f.ID, series, []float64{x0, x1})
			if !ok {
				return 0, false
			}
			return fn(v[0], v[1]), true
		}}
}

// A Group is the quantities an aggregate is taken over, and their name
// together in words.
type Group struct {
	text string
	qs   []Quantity
}

// Each is one quantity per series: q(s) for each s of series.
func Each(series []string, q func(series string) Quantity) Group {
	g := Group{text: q("each series").text + ", for the series " + joinAnd(series)}
	for _, s := range series {
		g.qs = append(g.qs, q(s))
	}
	return g
}

// EachX is one quantity per x: q(x) for each x of xs.
func EachX(xs []float64, q func(x float64) Quantity) Group {
	g := Group{text: q(math.NaN()).text + ", for x = " + joinAnd(xStrings(xs))}
	for _, x := range xs {
		g.qs = append(g.qs, q(x))
	}
	return g
}

// Grid is one quantity per series and x.
func Grid(series []string, xs []float64, q func(series string, x float64) Quantity) Group {
	g := Group{text: q("each series", math.NaN()).text + ", for the series " + joinAnd(series) + " and x = " + joinAnd(xStrings(xs))}
	for _, s := range series {
		for _, x := range xs {
			g.qs = append(g.qs, q(s, x))
		}
	}
	return g
}

// Lowest is the lowest of a group.
func Lowest(g Group) Quantity {
	return aggregate("the lowest of "+g.text+",", g.qs, func(vs []float64) int { return pickBy(vs, func(a, b float64) bool { return a < b }) })
}

// Highest is the highest of a group.
func Highest(g Group) Quantity {
	return aggregate("the highest of "+g.text+",", g.qs, func(vs []float64) int { return pickBy(vs, func(a, b float64) bool { return a > b }) })
}

// Mean is the mean of a group.
func Mean(g Group) Quantity {
	q := aggregate("the mean of "+g.text+",", g.qs, nil)
	q.eval = func(m workloads.Measured) (float64, bool) {
		var sum float64
		for _, p := range g.qs {
			v, ok := p.eval(m)
			if !ok {
				return 0, false
			}
			sum += v
		}
		return sum / float64(len(g.qs)), true
	}
	return q
}

func aggregate(text string, qs []Quantity, pick func([]float64) int) Quantity {
	var figs []int
	for _, q := range qs {
		figs = append(figs, q.figs...)
	}
	q := Quantity{text: text, unit: qs[0].unit, figs: figs, parts: qs, pick: pick, mark: common(qs)}
	q.eval = func(m workloads.Measured) (float64, bool) {
		vs := make([]float64, len(qs))
		for i, p := range qs {
			v, ok := p.eval(m)
			if !ok {
				return 0, false
			}
			vs[i] = v
		}
		return vs[pick(vs)], true
	}
	return q
}

// common places an aggregate where its parts are all drawn: on one
// series, or across several; at one x, or as a level across the figure.
func common(qs []Quantity) *results.Mark {
	first := qs[0].mark
	if first == nil {
		return nil
	}
	m := *first
	for _, q := range qs[1:] {
		p := q.mark
		if p == nil || p.On != m.On || p.Percentile != m.Percentile {
			return nil
		}
		if p.Series != m.Series {
			m.Series = ""
		}
		if m.X != nil && (p.X == nil || *p.X != *m.X) {
			m.X = nil
		}
	}
	return &m
}

func pickBy(vs []float64, better func(a, b float64) bool) int {
	best := 0
	for i, v := range vs {
		if better(v, vs[best]) {
			best = i
		}
	}
	return best
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func xStrings(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmtX(x)
	}
	return out
}

func values(m workloads.Measured, fig int, series string, xs []float64) ([]float64, bool) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		y, ok := m.Y(fig, series, x)
		if !ok {
			return nil, false
		}
		out[i] = y
	}
	return out, true
}

// where names a run of a figure: its series, and its x where the figure has
// more than one.
func where(f *workloads.Figure, series string, x float64) string {
	if f.Chart == results.ChartHistogram {
		return series
	}
	return series + " at " + at(f, x)
}

// at names an x of a figure in words: "16 VMs", "batch size 20".
func at(f *workloads.Figure, x float64) string {
	label, n := xName(f), fmtX(x)
	if math.IsNaN(x) {
		n = "x"
	}
	if strings.HasPrefix(label, "batch size") {
		return "batch size " + n
	}
	if x == 1 {
		label = strings.NewReplacer("VMs", "VM", "threads", "thread").Replace(label)
	}
	return n + " " + label
}

func xName(f *workloads.Figure) string {
	label, _, _ := strings.Cut(f.XLabel, " (")
	return label
}

func yName(f *workloads.Figure) string {
	label, _, _ := strings.Cut(f.YLabel, " (")
	return label
}

func yUnit(f *workloads.Figure) string {
	m, err := results.LookupMetric(f.Metric)
	if err != nil { // figures are checked when chosen
		return ""
	}
	return m.Unit
}

func fmtX(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// num writes a threshold: as few digits as it was given with.
func num(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if v == math.Trunc(v) || strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch unit {
	case "", "x", "%":
		return s + unit
	case "s":
		return s + " s"
	}
	return s + " " + unit
}

// val writes a measured value as the claims table does.
func val(v float64, unit string) string {
	if unit == "" {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return results.FormatValue(v, unit)
}

// ErrorCount is how many requests of a run got an error code (or a client
// timeout: ClientTimeout).
func ErrorCount(f *workloads.Figure, series string, x float64, code string) Quantity {
	return Quantity{text: code + " answers of " + where(f, series, x), unit: "", figs: []int{f.ID},
		eval: func(m workloads.Measured) (float64, bool) {
			r := m.Run(f.ID, series, x)
			if r == nil {
				return 0, false
			}
			return float64(r.Errors[code]), true
		}}
}

// FirstEvent is when a run's target first split or moved a partition, in
// seconds from the run's start (warm-up included); a run without one
// measures +Inf, which fails any bound.
func FirstEvent(f *workloads.Figure, series string, x float64) Quantity {
	return Quantity{text: "the second of the first split or move of " + where(f, series, x), unit: "s", figs: []int{f.ID},
		mark: &results.Mark{On: results.MarkX, Series: series},
		eval: func(m workloads.Measured) (float64, bool) {
			r := m.Run(f.ID, series, x)
			if r == nil {
				return 0, false
			}
			if len(r.Events) == 0 {
				return math.Inf(1), true
			}
			return r.Events[0].Second, true
		}}
}

// A Span is a stretch of a run's seconds: from From to To seconds after a
// reference, the run's start or its first split or move.
type Span struct {
	From, To   float64
	AfterEvent bool // from the first split or move
	FromEnd    bool // from the end of the run
}

func (s Span) text() string {
	ref := "the start"
	switch {
	case s.AfterEvent:
		ref = "the first split or move"
	case s.FromEnd:
		ref = "the end"
	}
	switch {
	case s.From < 0 && s.To == 0 && s.FromEnd:
		return fmt.Sprintf("in the last %g s", -s.From)
	case s.From < 0 && s.To <= 0:
		return fmt.Sprintf("in the %g s before %s", s.To-s.From, ref)
	case s.From < 0:
		return fmt.Sprintf("from %g s before to %g s after %s", -s.From, s.To, ref)
	}
	return fmt.Sprintf("from %g s to %g s after %s", s.From, s.To, ref)
}

// span returns the run's whole seconds in the span, with the reference.
func (s Span) seconds(r *results.Run) ([]results.Interval, bool) {
	ref := 0.0
	switch {
	case s.AfterEvent:
		if len(r.Events) == 0 {
			return nil, false
		}
		ref = r.Events[0].Second
	case s.FromEnd:
		if len(r.Intervals) == 0 {
			return nil, false
		}
		ref = float64(r.Intervals[len(r.Intervals)-1].Second) // the last second may be partial: it is left out
	}
	var out []results.Interval
	for _, iv := range r.Intervals {
		if t := float64(iv.Second); t >= ref+s.From && t+1 <= ref+s.To {
			out = append(out, iv)
		}
	}
	return out, len(out) > 0
}

// SpanRate is a run's successful entities per second over a span.
func SpanRate(f *workloads.Figure, series string, x float64, s Span) Quantity {
	return spanSum(f, series, x, s, "entities/s of ", "e/s", true, func(iv results.Interval) int64 { return iv.Entities })
}

// SpanThrottled is how many requests of a run were throttled or timed out
// over a span.
func SpanThrottled(f *workloads.Figure, series string, x float64, s Span) Quantity {
	return spanSum(f, series, x, s, "requests throttled or timed out of ", "", false, func(iv results.Interval) int64 { return iv.Throttled })
}

// spanSum sums a per-second count over a span, or averages it per second.
func spanSum(f *workloads.Figure, series string, x float64, s Span, what, unit string, perSecond bool, of func(results.Interval) int64) Quantity {
	return Quantity{text: what + where(f, series, x) + " " + s.text(), unit: unit, figs: []int{f.ID},
		eval: func(m workloads.Measured) (float64, bool) {
			r := m.Run(f.ID, series, x)
			if r == nil {
				return 0, false
			}
			ivs, ok := s.seconds(r)
			if !ok {
				return math.NaN(), true
			}
			var n int64
			for _, iv := range ivs {
				n += of(iv)
			}
			if perSecond {
				return float64(n) / float64(len(ivs)), true
			}
			return float64(n), true
		}}
}
