package charts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
)

// oneRun records four seconds of inserts, one in ten throttled, three of
// them measured.
func oneRun(t *testing.T, id string) *results.Run {
	t.Helper()
	start := time.Unix(0, 0)
	col := results.NewCollector(start, start.Add(time.Second), start.Add(4*time.Second))
	rec := col.Recorder(&results.Live{})
	for j := range 400 {
		done := start.Add(time.Duration(j) * 10 * time.Millisecond)
		outcome := results.OutcomeOK
		if j%10 == 0 {
			outcome = results.OutcomeThrottled
		}
		rec.Record("insert", fmt.Sprintf("pk%02d", j%7), 1, done.Add(-5*time.Millisecond), done, outcome, 0, false)
	}
	r, err := col.Close(start.Add(4 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r.ID = id
	r.Setup = results.RunSpec{Op: "insert", Partition: "guid", VMs: 1, Threads: 1, VMSize: "xl", EntitySize: 1024, Warmup: time.Second, Duration: 3 * time.Second, Load: "closed"}
	return r
}

// TestRunPageVerdictsFirst: a run's page says whether its numbers hold
// and which thresholds fail before any chart, as a figure's page puts its
// claims first.
func TestRunPageVerdictsFirst(t *testing.T) {
	r := oneRun(t, "r1")
	r.Refused, r.Warnings, r.Notes = true, []string{"the harness lagged 40 ms"}, []string{"a saturated client, on purpose"}
	th, _ := results.ParseThreshold("p99<1ms")
	r.Thresholds = []results.ThresholdResult{th.Check(r)}
	dir := t.TempDir()
	if err := charts.WriteRuns(dir, []*results.Run{r}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	chart := strings.Index(page, `class="item"`)
	for _, want := range []string{`class="status refused">Refused:`, "Warning: the harness lagged 40 ms", "Note: a saturated client, on purpose",
		`<td>p99&lt;1ms</td><td class="FAIL">FAIL</td><td class="num">5.0 ms</td>`} {
		if i := strings.Index(page, want); i < 0 || i > chart {
			t.Errorf("%q is not on the page before its first chart (at %d, chart at %d)", want, i, chart)
		}
	}
	count := func(name string) int64 {
		h, err := r.Histogram(name)
		if err != nil || h.TotalCount() == 0 {
			t.Fatalf("no requests in %s: %v", name, err)
		}
		return h.TotalCount()
	}
	if i := strings.Index(page, "Where the load landed in the key space"); i < 0 || i > strings.Index(page, "Latency distribution per operation") {
		t.Error("the page has no key-space heat map beside its charts over time")
	}
	for _, want := range []string{fmt.Sprintf("insert, successful: %d requests", count("insert/ok")), fmt.Sprintf("insert, throttled (ServerBusy): %d requests", count("insert/ServerBusy"))} {
		if !strings.Contains(page, want) {
			t.Errorf("the latency distribution has no %q", want)
		}
	}
}
