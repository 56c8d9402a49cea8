package charts_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
)

// keyRun records a run over n keys, the first hot and throttled, with a
// split and a move at the hot key and the target's range partitions.
func keyRun(t *testing.T, id string, n int) *results.Run {
	t.Helper()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start, start.Add(600*time.Second))
	rec := col.Recorder(&results.Live{})
	for i := range 60_000 {
		done := start.Add(time.Duration(i) * 10 * time.Millisecond)
		pk, outcome := fmt.Sprintf("k%06d", (i*7919)%n), results.OutcomeOK
		if i%3 == 0 {
			pk = "k000042"
			if i%9 == 0 {
				outcome = results.OutcomeThrottled
			}
		}
		rec.Record("get", pk, 1, done, done, outcome, 0, false)
	}
	r, err := col.Close(start.Add(600 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r.ID, r.Series, r.Spec = id, id, json.RawMessage(`{}`)
	r.Events = []results.Event{
		{Second: 120, Kind: "split", Detail: "split at k000042", Lo: "", Hi: "", At: []string{"k000042"}},
		{Second: 150, Kind: "move", Detail: "moved", Lo: "k000042", Hi: "k000043"},
	}
	r.RangePartitions = []results.RangePartition{{Lo: "", Server: 0}, {Lo: "k000042", Server: 1}, {Lo: "k000043", Server: 0}}
	return r
}

var dataItem = regexp.MustCompile(`\{"value":\[`)

// TestKeySpaceChartDrawsTheRecord: a run's key-space chart draws its heat
// map within the chart's bounds, its throttled cells, the balancer's
// events and the range partitions, and the same run draws the same chart.
func TestKeySpaceChartDrawsTheRecord(t *testing.T) {
	r := keyRun(t, "hot", 5000)
	label := func(r *results.Run) string { return r.ID }
	a, b := charts.KeySpace("ks", []*results.Run{r}, label), charts.KeySpace("ks", []*results.Run{r}, label)
	if a != b {
		t.Fatal("one run drew two different charts")
	}
	js := a.Script
	for _, want := range []string{`"type":"heatmap","progressive":0`, `"visualMap":[{"seriesIndex":0`, `"name":"throttled"`, `"name":"balancer split"`, `"name":"balancer move"`,
		`"name":"server 1 from here"`, "PartitionKey in key order"} {
		if !strings.Contains(js, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	if n := len(dataItem.FindAllString(js, -1)); n > 64*120+64*120+2 {
		t.Errorf("the chart carries %d data items; want at most a coarsened heat map's", n)
	}
	if !strings.Contains(charts.KeySpaceNote(r), "hottest k000042: 33% of requests, 33% of them throttled") {
		t.Errorf("note %q does not name the hot key", charts.KeySpaceNote(r))
	}
	if s := charts.KeySpace("none", []*results.Run{{ID: "old"}}, label); s.Element != "" {
		t.Error("a run without a heat map drew a chart")
	}
}

// TestKeySpaceSideBySide: several runs draw as small charts side by side,
// on one color scale.
func TestKeySpaceSideBySide(t *testing.T) {
	runs := []*results.Run{keyRun(t, "few", 50), keyRun(t, "many", 5000)}
	s := charts.KeySpace("cmp", runs, func(r *results.Run) string { return r.ID })
	if !strings.Contains(s.Element, `class="multiples"`) || strings.Count(s.Element, `class="item"`) != 2 {
		t.Fatalf("two runs did not draw as two small charts: %s", s.Element)
	}
	scales := regexp.MustCompile(`"max":(\d+)`).FindAllStringSubmatch(s.Script, -1)
	if len(scales) < 2 || scales[0][1] != scales[len(scales)-1][1] {
		t.Errorf("the charts' color scales differ: %v", scales)
	}
}
