package results_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in, op, metric, cmp string
		value               float64
	}{
		{"p99<50ms", "", "p99", "<", 50},
		{"p99 <= 0.05s", "", "p99", "<=", 50},
		{"p50>250us", "", "p50", ">", 0.25},
		{"throttled<0.1%", "", "throttled-pct", "<", 0.1},
		{"throttled_pct==0%", "", "throttled-pct", "==", 0},
		{"entities_per_sec>=1800", "", "entities-per-sec", ">=", 1800},
		{"requests-per-sec>10", "", "requests-per-sec", ">", 10},
		{"get.p99<20ms", "get", "p99", "<", 20},
		{"get.p99.9<1s", "get", "p99.9", "<", 1000},
		{"p999<80ms", "", "p99.9", "<", 80},
		{"insert.max<2s", "insert", "max-latency", "<", 2000},
		{"mean<=3ms", "", "mean-latency", "<=", 3},
		{"errors==0", "", "errors", "==", 0},
		{"batch.throttled<5%", "batch", "throttled-pct", "<", 5},
	} {
		th, err := results.ParseThreshold(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if th.Op != c.op || th.Metric.Name != c.metric || th.Cmp != c.cmp || math.Abs(th.Value-c.value) > 1e-9 || th.String() != c.in {
			t.Errorf("%s: op %q metric %q %s %g", c.in, th.Op, th.Metric.Name, th.Cmp, th.Value)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"p99", "no comparison"},
		{"p99=50ms", "no comparison"},
		{"<50ms", "no metric"},
		{"p98<50ms", `metric "p98" is not known`},
		{"get.p98<50ms", `metric "get.p98" is not known`},
		{"GET.p99<50ms", "not an operation's name"},
		{"p99<50", "give its unit, as 50ms"},
		{"p99<fast", "give its unit"},
		{"p99<xms", `"x" is not a number`},
		{"throttled<0.1", "give it in %, as 0.1%"},
		{"entities_per_sec>=lots", `"lots" is not a number`},
		{"p99<", "no value"},
		{"p99<-5ms", "-5ms is below 0: p99 is never negative"},
		{"entities_per_sec>-1", "-1 is below 0"},
		{"throttled<200%", "200% is above 100%: throttled-pct is a share"},
		{"saturation>1", "belongs to a figure"},
		{"per-entity-latency<1ms", "belongs to a figure"},
	} {
		_, err := results.ParseThreshold(c.in)
		if err == nil {
			t.Errorf("%s: accepted", c.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.says) || !strings.Contains(msg, "p99<50ms, throttled<0.1%") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q should say %q and the forms, on one line", c.in, msg, c.says)
		}
	}
}

// TestThresholdEval checks thresholds against a record of two operations:
// the whole run's numbers, and each operation's from its histograms, which
// must be what a run of that operation alone records.
func TestThresholdEval(t *testing.T) {
	_, mixed := shardedRun(t, 1)
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start.Add(2*time.Second), start.Add(12*time.Second))
	rec := col.Recorder(&results.Live{})
	for j := range 1200 { // shardedRun's inserts, alone
		if j%3 != 0 {
			continue
		}
		due := start.Add(time.Duration(j) * 10 * time.Millisecond)
		outcome := results.OutcomeOK
		switch j % 50 {
		case 3:
			outcome = results.OutcomeThrottled
		case 5:
			outcome = results.OutcomeTimedOut
		case 7:
			outcome = "EntityAlreadyExists"
		case 9:
			outcome = results.OutcomeRateLimited
		}
		rec.Record("insert", fmt.Sprintf("p%02d", j%17), 1, due, due.Add(time.Duration(1+(j*7)%97)*time.Millisecond), outcome, 0, false)
	}
	inserts, err := col.Close(start.Add(12 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	eval := func(expr string, r *results.Run) (float64, bool) {
		t.Helper()
		th, err := results.ParseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		return th.Eval(r)
	}
	for _, m := range []string{"p50", "p90", "p99", "p999", "max", "mean", "throttled", "requests_per_sec", "errors", "conflicts-per-1000"} {
		bar := ">=0"
		switch mt, _ := results.LookupMetric(m); mt.Unit {
		case "ms":
			bar += "ms"
		case "%":
			bar += "%"
		}
		got, _ := eval("insert."+m+bar, mixed)
		want, _ := eval(m+bar, inserts)
		if math.Abs(got-want) > 1e-9 || want == 0 && m != "errors" && m != "conflicts-per-1000" {
			t.Errorf("insert.%s: %g from the mixed run's histograms, %g from a run of inserts alone", m, got, want)
		}
	}
	if got, _ := eval("insert.conflicts-per-1000>=0", mixed); got == 0 {
		t.Error("insert.conflicts-per-1000 is 0: the inserts' EntityAlreadyExists answers are lost")
	}
	// The whole run, against its own summary.
	p99 := mixed.SuccessLatencyMs.P99
	for _, c := range []struct {
		expr string
		pass bool
	}{
		{"p99<" + ms(p99+0.01), true},
		{"p99<" + ms(p99), false},
		{"p99<=" + ms(p99), true},
		{"p99>" + ms(p99), false},
		{"p99==" + ms(p99), true},
		{"throttled<5.9%", false}, // three of every 50 requests are throttled (503 or 429) or time out: 6%
		{"throttled<=6%", true},
		{"entities_per_sec>=1", true},
		{"insert.entities_per_sec>=0", false}, // the histograms of a mix do not count entities
		{"get.p99<1s", false},                 // no get requests
	} {
		got, pass := eval(c.expr, mixed)
		if pass != c.pass {
			t.Errorf("%s: measured %g, pass %v, want %v", c.expr, got, pass, c.pass)
		}
	}
	if v, _ := eval("get.p99<1s", mixed); !math.IsNaN(v) {
		t.Errorf("get.p99 measured %g in a run without gets, want NaN", v)
	}
	// A run of one operation is that operation's record, entities included.
	if v, pass := eval("insert.entities_per_sec>=1", inserts); !pass || v != inserts.EntitiesPerSec {
		t.Errorf("insert.entities_per_sec of a run of inserts: %g, pass %v, want %g", v, pass, inserts.EntitiesPerSec)
	}
	// A mix whose record counts each operation (ops) gives each its
	// entities too.
	col = results.NewCollector(start, start.Add(2*time.Second), start.Add(12*time.Second))
	col.PerOperation()
	rec = col.Recorder(&results.Live{})
	for j := range 1200 {
		due := start.Add(time.Duration(j) * 10 * time.Millisecond)
		op, n := "batch", 10
		if j%3 == 0 {
			op, n = "insert", 1
		}
		rec.Record(op, "p1", n, due, due.Add(time.Millisecond), results.OutcomeOK, 0, false)
	}
	counted, err := col.Close(start.Add(12 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := eval("insert.entities_per_sec>=0", counted); v != 33.3 {
		t.Errorf("insert.entities_per_sec of a mix with its ops counted: %g, want 33.3 (333 inserts measured in 10 s)", v)
	}
	if v, _ := eval("batch.entities_per_sec>=0", counted); v != 667 {
		t.Errorf("batch.entities_per_sec of a mix with its ops counted: %g, want 667 (667 batches of 10 measured in 10 s)", v)
	}
	th, _ := results.ParseThreshold("get.p99<1s")
	if c := th.Check(mixed); c.Pass || c.Measured != nil || c.MeasuredText() != "not recorded" || c.Verdict() != "FAIL" {
		t.Errorf("an unrecorded threshold checks as %+v", c)
	}
}

// ms writes a latency bar that parses back to exactly v.
func ms(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "ms" }
