package results

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Threshold is a bar a run's number must clear, as a pipeline sets it:
// "p99<50ms", "throttled<0.1%", "entities_per_sec>=1800", "get.p99<20ms".
// It names a metric of Metrics, of the whole run or of one operation.
type Threshold struct {
	Text   string  // as given
	Op     string  // the operation it reads, such as get; "" for the whole run
	Metric *Metric // what it reads
	Cmp    string  // <, <=, >, >= or ==
	Value  float64 // the bar, in the metric's unit (ms for latency, % for shares)
}

// thresholdCmps are the comparisons a threshold takes, longest first so
// that "<=" is not read as "<".
var thresholdCmps = []string{"<=", ">=", "==", "<", ">"}

// ThresholdForms says what a threshold looks like, for help and errors.
func ThresholdForms() string {
	var aliases []string
	for i := range Metrics {
		if ThresholdMetric(&Metrics[i]) {
			aliases = append(aliases, Metrics[i].Aliases...)
		}
	}
	return "[OP.]METRIC then <, <=, >, >= or == then a value, such as p99<50ms, throttled<0.1%, entities_per_sec>=1800 or get.p99<20ms; " +
		"latency in ms, s or us, shares in %; METRIC is " + MetricNames(ThresholdMetric) + " (or " + strings.Join(aliases, ", ") + ")"
}

// ThresholdMetric reports whether a threshold may read a metric: it must
// be a number of the run alone, as a sweep's y is.
func ThresholdMetric(m *Metric) bool { return m.Sweep }

// ParseThreshold reads a threshold expression. Its error names what is
// wrong and the forms a threshold takes; the caller names the expression
// (a flag's value, a file's line).
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Text: s}
	bad := func(format string, args ...any) (Threshold, error) {
		return t, fmt.Errorf("%s; give %s", fmt.Sprintf(format, args...), ThresholdForms())
	}
	at, cmp := -1, ""
	for _, c := range thresholdCmps {
		if i := strings.Index(s, c); i >= 0 && (at < 0 || i < at || i == at && len(c) > len(cmp)) {
			at, cmp = i, c
		}
	}
	if at < 0 {
		return bad("no comparison")
	}
	name, value := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(cmp):])
	t.Cmp = cmp
	if name == "" {
		return bad("no metric before %s", cmp)
	}
	m, err := LookupMetric(name)
	if err != nil { // an operation's metric: get.p99, get.p99.9
		if op, rest, ok := strings.Cut(name, "."); ok {
			if m, err = LookupMetric(rest); err == nil {
				if !validOp(op) {
					return bad("%q is not an operation's name", op)
				}
				t.Op = op
			}
		}
	}
	if err != nil {
		return bad("metric %q is not known", name)
	}
	if !ThresholdMetric(m) {
		return bad("%s belongs to a figure, not to a run", m.Name)
	}
	t.Metric = m
	if t.Value, err = thresholdValue(m, value); err != nil {
		return bad("%v", err)
	}
	// Every metric a threshold reads is a count, a rate, a time or a share:
	// a bar below 0, or a share above 100%, is one no run can fail (or
	// pass), so it is a typo rather than a bar.
	switch {
	case t.Value < 0:
		return bad("%s is below 0: %s is never negative", value, m.Name)
	case m.Unit == "%" && t.Value > 100:
		return bad("%s is above 100%%: %s is a share", value, m.Name)
	}
	return t, nil
}

// validOp reports whether a name can be an operation's: lower-case
// letters, as the workloads name them; which operations a run does is for
// its command to check.
func validOp(op string) bool {
	return op != "" && strings.IndexFunc(op, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// latencyUnits convert a latency bar to milliseconds.
var latencyUnits = []struct {
	suffix string
	ms     float64
}{{"ms", 1}, {"us", 1e-3}, {"µs", 1e-3}, {"s", 1e3}}

// thresholdValue reads a bar in the metric's unit: a latency must name
// its unit and a share its %, so that 50 is never read as 50 s nor 0.1 as
// a fraction; counts and rates are plain numbers.
func thresholdValue(m *Metric, s string) (float64, error) {
	num := func(text string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not a number", text)
		}
		return v, nil
	}
	if s == "" {
		return 0, fmt.Errorf("no value")
	}
	switch m.Unit {
	case "ms":
		for _, u := range latencyUnits {
			if text, ok := strings.CutSuffix(s, u.suffix); ok {
				v, err := num(text)
				return v * u.ms, err
			}
		}
		return 0, fmt.Errorf("%s is a latency: give its unit, as %sms", m.Name, s)
	case "%":
		text, ok := strings.CutSuffix(s, "%")
		if !ok {
			return 0, fmt.Errorf("%s is a share: give it in %%, as %s%%", m.Name, s)
		}
		return num(text)
	}
	return num(s)
}

// String is the threshold as given.
func (t Threshold) String() string { return t.Text }

// Eval measures the threshold's metric in a run and says whether it clears
// the bar. A metric the run does not record (an operation it did not do,
// or an operation's entities where its histograms are all the record
// holds) measures NaN and does not pass.
func (t Threshold) Eval(r *Run) (measured float64, pass bool) {
	v := r
	if t.Op != "" {
		var entities bool
		if v, entities = r.OpRun(t.Op); v == nil || t.Metric.Entities && !entities {
			return math.NaN(), false
		}
	}
	measured = t.Metric.Value(v, v.X)
	if math.IsNaN(measured) {
		return measured, false
	}
	switch t.Cmp {
	case "<":
		pass = measured < t.Value
	case "<=":
		pass = measured <= t.Value
	case ">":
		pass = measured > t.Value
	case ">=":
		pass = measured >= t.Value
	case "==":
		pass = measured == t.Value
	}
	return measured, pass
}

// ThresholdResult is a threshold checked against a run, as its record
// keeps it.
type ThresholdResult struct {
	Threshold string   `json:"threshold"`
	Pass      bool     `json:"pass"`
	Measured  *float64 `json:"measured,omitempty"` // in Unit; absent where the run does not record it
	Unit      string   `json:"unit,omitempty"`
}

// Check evaluates the threshold against a run.
func (t Threshold) Check(r *Run) ThresholdResult {
	v, pass := t.Eval(r)
	res := ThresholdResult{Threshold: t.Text, Pass: pass, Unit: t.Metric.Unit}
	if !math.IsNaN(v) {
		res.Measured = &v
	}
	return res
}

// MeasuredText is the measured value with its unit, or why there is none.
func (c ThresholdResult) MeasuredText() string {
	if c.Measured == nil {
		return "not recorded"
	}
	return FormatValue(*c.Measured, c.Unit)
}

// Verdict is PASS or FAIL.
func (c ThresholdResult) Verdict() string {
	if c.Pass {
		return "PASS"
	}
	return "FAIL"
}

// OpRun returns what a run's record says of one of its operations, as a
// record of its own that Metrics read: the run's own record where the op
// is all the run did, else one made from the op's histograms ("op/outcome")
// over the run's measured time, with the op's counts from the record's
// ops section where it has one. entities is false where it cannot say how
// many entities the op moved (histograms count requests). It returns nil
// where the run made no request of the op.
func (r *Run) OpRun(op string) (view *Run, entities bool) {
	prefix := op + "/"
	var mine []string
	others := false
	for _, name := range slices.Sorted(maps.Keys(r.Histograms)) {
		if strings.HasPrefix(name, prefix) {
			mine = append(mine, name)
		} else {
			others = true
		}
	}
	if len(mine) == 0 {
		return nil, false
	}
	if !others {
		return r, true
	}
	v := &Run{ID: r.ID, Setup: r.Setup, Env: r.Env, X: r.X, Start: r.Start, MeasuredSec: r.MeasuredSec}
	var all, ok, perEntity histSum
	v.Errors = map[string]int64{}
	for _, name := range mine {
		h, err := r.Histogram(name)
		if err != nil {
			continue
		}
		n := h.TotalCount()
		switch outcome := histOutcome(name); outcome {
		case perEntityOutcome:
			perEntity.add(h)
			continue
		case OutcomeOK:
			ok.add(h)
		case OutcomeThrottled, OutcomeRateLimited:
			v.Totals.Throttled += n
			v.Errors[outcome] += n
		case OutcomeTimedOut:
			v.Totals.TimedOut += n
			v.Errors[outcome] += n
		default:
			v.Errors[outcome] += n
		}
		all.add(h)
		v.Totals.Requests += n
	}
	s, counted := r.Ops[op]
	if counted { // the record's own count of the op, entities included
		v.Totals = s.Counts
		v.Errors = maps.Clone(s.Counts.Errors)
	}
	v.Billable = v.Totals.Requests
	if v.Totals.Requests > 0 {
		v.ThrottledPct = 100 * float64(v.Totals.Throttled+v.Totals.TimedOut) / float64(v.Totals.Requests)
	}
	if v.MeasuredSec > 0 {
		v.RequestsPerSec = float64(v.Totals.Requests) / v.MeasuredSec
	}
	v.LatencyMs, v.SuccessLatencyMs, v.PerEntityMs = PercentilesOf(all.hist()), PercentilesOf(ok.hist()), PercentilesOf(perEntity.hist())
	if counted {
		v.EntitiesPerSec, v.RequestsPerSec = s.EntitiesPerSec, s.RequestsPerSec
		if v.MeasuredSec > 0 {
			v.EntitiesSentPerSec = float64(v.Totals.EntitiesSent) / v.MeasuredSec
		}
	}
	return v, counted
}
