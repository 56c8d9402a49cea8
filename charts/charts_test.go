package charts_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
	"github.com/tablebench/tablebench/workloads/casestudy"
)

// stored makes a small result set of Figure 15 from synthetic runs.
func stored(t *testing.T) (*results.Set, []workloads.Figure) {
	t.Helper()
	figs, _ := workloads.Select(casestudy.Figures(), []int{15})
	set := &results.Set{Mode: "quick"}
	for i, fr := range figs[0].Runs {
		start := time.Unix(0, 0)
		col := results.NewCollector(start, start, start.Add(10*time.Second))
		rec := col.Recorder(&results.Live{})
		for j := range 100 {
			done := start.Add(time.Duration(j) * 100 * time.Millisecond)
			outcome := results.OutcomeOK
			if j%10 < i {
				outcome = results.OutcomeThrottled
			}
			rec.Record("batch", fmt.Sprintf("pk%02d", j%(3+i)), 100, done.Add(-800*time.Millisecond), done, outcome, 0, false)
		}
		r, err := col.Close(start.Add(10 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.Series, r.X = workloads.RunID(15, fr.Series, fr.X), fr.Series, fr.X
		set.Runs = append(set.Runs, r)
	}
	return set, figs
}

func TestReportIsDeterministicAndOffline(t *testing.T) {
	set, figs := stored(t)
	claims := casestudy.Check(figs, set.Runs)
	var pages [2][]byte
	for i := range pages {
		dir := t.TempDir()
		if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), claims).Write(dir); err != nil {
			t.Fatal(err)
		}
		pages[i], _ = os.ReadFile(filepath.Join(dir, "fig15.html"))
		if js, err := os.ReadFile(filepath.Join(dir, "assets", "echarts.min.js")); err != nil || !bytes.Equal(js, charts.EChartsJS) {
			t.Fatal("the report does not carry its echarts")
		}
		csv, _ := os.ReadFile(filepath.Join(dir, "fig15.csv"))
		if strings.Count(string(csv), "\n") != 6 {
			t.Fatalf("fig15.csv:\n%s", csv)
		}
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Fatal("the same results rendered two different pages")
	}
	page := string(pages[0])
	for _, want := range []string{`src="assets/echarts.min.js"`, `id="fig15_main"`, `"yAxisIndex":1`, "% of requests throttled", "C15.3", `renderer: "svg"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("the page refers to the network")
	}
}

// TestEmbeddedEChartsIsThePinnedPackage: the embedded echarts is byte for
// byte the npm package tools/package.json pins, whenever it is installed.
func TestEmbeddedEChartsIsThePinnedPackage(t *testing.T) {
	if !bytes.Contains(charts.EChartsJS[:min(len(charts.EChartsJS), 4096)], []byte("echarts")) || len(charts.EChartsJS) < 500_000 {
		t.Fatalf("the embedded echarts is not an echarts build (%d bytes)", len(charts.EChartsJS))
	}
	pkg, err := os.ReadFile(filepath.Join("..", "tools", "node_modules", "echarts", "package.json"))
	if err != nil {
		azurite.Need(t, "the npm echarts package is not installed (make assets installs it); the embedded copy is compared only with it")
	}
	if !bytes.Contains(pkg, []byte(`"version": "`+charts.EChartsVersion+`"`)) {
		t.Fatalf("tools/ pins another echarts than the embedded %s", charts.EChartsVersion)
	}
	npm, err := os.ReadFile(filepath.Join("..", "tools", "node_modules", "echarts", "dist", "echarts.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(npm) != sha256.Sum256(charts.EChartsJS) {
		t.Fatal("the embedded echarts.min.js differs from the npm package's: copy it again (charts/assets/README.md)")
	}
}

// TestPartialLastSecondLeftOut: a second the run did not wholly cover is
// not drawn, so throughput over time does not fall to zero at the end.
func TestPartialLastSecondLeftOut(t *testing.T) {
	set, figs := stored(t)
	for _, r := range set.Runs {
		r.Intervals = append(r.Intervals, results.Interval{Second: 10, Requests: 1, Entities: 4242})
	}
	dir := t.TempDir()
	if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "fig15.html"))
	if bytes.Contains(page, []byte("[10,4242]")) || !bytes.Contains(page, []byte("[9,")) {
		t.Fatal("the partial last second is drawn, or the whole ones are not")
	}
}

// TestCoincidingSeriesStayVisible: series that coincide, within a figure or
// with its twin, are drawn apart and the page says why; a figure of many
// runs draws its per-run charts as small multiples, no legend paging.
func TestCoincidingSeriesStayVisible(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{5, 12, 13})
	set := &results.Set{Mode: "quick"}
	for _, f := range figs {
		for _, fr := range f.Runs {
			r := &results.Run{ID: workloads.RunID(f.ID, fr.Series, fr.X), Series: fr.Series, X: fr.X, EntitiesPerSec: 1000 * fr.X}
			r.SuccessLatencyMs.Mean = 40 + 7*fr.X // the same for both VM sizes, as with one thread
			for s := range 30 {
				r.Intervals = append(r.Intervals, results.Interval{Second: s, Entities: int64(100 * fr.X)})
			}
			set.Runs = append(set.Runs, r)
		}
	}
	dir := t.TempDir()
	if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(string(b))
	}
	fig5 := read("fig05.html")
	for _, want := range []string{"The small VM and XL VM series coincide", "Why: with one thread", `"type":"dashed"`, `"symbol":"triangle"`,
		`class="multiples"`, `id="fig05_tput_17"`, `id="fig05_pct_1"`, `"name":"p99.9"`} {
		if !strings.Contains(fig5, want) {
			t.Errorf("fig05.html lacks %s", want)
		}
	}
	if strings.Contains(fig5, `"type":"scroll"`) {
		t.Error("fig05.html pages a legend")
	}
	fig13 := read("fig13.html")
	for _, want := range []string{"coincides with Figure 12's", "Figure 12: small VMs", "Why: a small VM's CPU"} {
		if !strings.Contains(fig13, want) {
			t.Errorf("fig13.html lacks %s", want)
		}
	}
	if fig12 := read("fig12.html"); !strings.Contains(fig12, "Figure 13: small VMs") {
		t.Error("fig12.html does not draw its twin")
	}

	// Series that differ get no note.
	for _, r := range set.Runs {
		if r.Series == "XL VM" {
			r.SuccessLatencyMs.Mean *= 0.8
		}
	}
	if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(read("fig05.html"), "coincide") {
		t.Error("fig05.html says series coincide that do not")
	}
}

// TestChartIDsAreNames: a figure named with dashes (a sweep's, an
// experiment's) still gives chart IDs the page can use as JavaScript names.
func TestChartIDsAreNames(t *testing.T) {
	set, figs := stored(t)
	data := workloads.DrawAll(figs, set.Runs)
	data[0].Name = "my-sweep"
	dir := t.TempDir()
	if err := charts.Build("test", set, data, nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "my-sweep.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("goecharts_my-")) || !bytes.Contains(page, []byte("goecharts_my_sweep_main")) {
		t.Fatal("a chart's variable name has a dash")
	}
}

// TestFigureCSVColumns: a figure's CSV has a column for every metric of
// the table, read from its run, and y2 only where the figure draws one.
func TestFigureCSVColumns(t *testing.T) {
	set, figs := stored(t)
	line := figs[0]
	line.Chart, line.Metric, line.Name = results.ChartLine, "entities-per-sec", "line"
	for _, tc := range []struct {
		fig  workloads.Figure
		head string
	}{
		{figs[0], "series,x,y,y2,run,entities_per_sec,requests_per_sec,throttled_pct,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms,mean_ms,errors"},
		{line, "series,x,y,run,entities_per_sec,requests_per_sec,throttled_pct,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms,mean_ms,errors"},
	} {
		dir := t.TempDir()
		fs := []workloads.Figure{tc.fig}
		if err := charts.Build("test", set, workloads.DrawAll(fs, set.Runs), nil).Write(dir); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, tc.fig.Name+".csv"))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if lines[0] != tc.head {
			t.Errorf("%s.csv head:\n%s\nwant\n%s", tc.fig.Name, lines[0], tc.head)
		}
		last := set.Runs[len(set.Runs)-1]
		want := strconv.FormatFloat(last.SuccessLatencyMs.P95, 'g', -1, 64) + "," + strconv.FormatFloat(last.SuccessLatencyMs.P99, 'g', -1, 64)
		if row := lines[len(lines)-1]; !strings.Contains(row, last.ID) || !strings.Contains(row, want) || !strings.HasSuffix(row, ","+strconv.FormatInt(last.Errors[results.OutcomeThrottled], 10)) {
			t.Errorf("%s.csv's last row %q lacks its run's p95, p99 (%s) and errors", tc.fig.Name, row, want)
		}
	}
}

// figureSet makes synthetic stored runs of case-study figures, each run's
// throughput from rate(series, x), and checks their claims.
func figureSet(t *testing.T, ids []int, rate func(series string, x float64) float64) (*results.Set, []results.FigureData, []results.CheckedClaim) {
	t.Helper()
	figs, err := workloads.Select(casestudy.Figures(), ids)
	if err != nil {
		t.Fatal(err)
	}
	set := &results.Set{Mode: "quick"}
	for _, f := range figs {
		for _, fr := range f.Runs {
			r := &results.Run{ID: workloads.RunID(f.ID, fr.Series, fr.X), Series: fr.Series, X: fr.X, EntitiesPerSec: rate(fr.Series, fr.X)}
			for s := range 30 {
				r.Intervals = append(r.Intervals, results.Interval{Second: s, Entities: int64(r.EntitiesPerSec)})
			}
			set.Runs = append(set.Runs, r)
		}
	}
	return set, workloads.DrawAll(figs, set.Runs), casestudy.Check(figs, set.Runs)
}

func readPage(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(string(b))
}

// TestPublishedNumbersAreDrawn: the numbers the case study printed are
// drawn on the figures where they were measured, labelled as published,
// from the claims' data.
func TestPublishedNumbersAreDrawn(t *testing.T) {
	set, data, claims := figureSet(t, []int{8, 13}, func(s string, x float64) float64 { return 300 * x })
	dir := t.TempDir()
	if err := charts.Build("test", set, data, claims).Write(dir); err != nil {
		t.Fatal(err)
	}
	fig8, fig13 := readPage(t, dir, "fig08.html"), readPage(t, dir, "fig13.html")
	for _, want := range []string{`"name":"published: 600 e/s","coord":[2,600]`, `"formatter":"published: 600 e/s"`, `"coord":[5,1000]`} {
		if !strings.Contains(fig8, want) {
			t.Errorf("fig08.html lacks %s", want)
		}
	}
	if !strings.Contains(fig13, `"name":"published: 17000 e/s","coord":[16,17000]`) {
		t.Error("fig13.html does not draw the published 17,000 e/s at 16 VMs")
	}

	set, figs := stored(t)
	dir = t.TempDir()
	if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), casestudy.Check(figs, set.Runs)).Write(dir); err != nil {
		t.Fatal(err)
	}
	fig15 := readPage(t, dir, "fig15.html")
	for _, want := range []string{`"name":"published: 2300 e/s","yAxis":2300`, `"name":"published: 11%","coord":[30,11]`, `"name":"published: 22%","coord":[50,22]`, `"name":"published: 2500 e/s","coord":[50,2500]`} {
		if !strings.Contains(fig15, want) {
			t.Errorf("fig15.html lacks %s", want)
		}
	}
}

// TestRunsNamedInTheFiguresWords: a run is named by the figure's x label
// ("16 XL VMs"), never as x=16.
func TestRunsNamedInTheFiguresWords(t *testing.T) {
	set, data, _ := figureSet(t, []int{5, 8, 15}, func(s string, x float64) float64 { return 300 * x })
	dir := t.TempDir()
	if err := charts.Build("test", set, data, nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	for page, want := range map[string]string{"fig08.html": `"single partition, 16 XL VMs"`, "fig05.html": `"XL VM, batch size 20"`, "fig15.html": `"50 threads in all"`} {
		p := readPage(t, dir, page)
		if !strings.Contains(p, want) || strings.Contains(p, "x=") {
			t.Errorf("%s: runs are not named as %s", page, want)
		}
	}
}

// TestAxisFitsCloseSeries: a chart whose values all lie close together
// fits its y axis to them; one that spans from near zero keeps its 0.
func TestAxisFitsCloseSeries(t *testing.T) {
	set, data, _ := figureSet(t, []int{8, 10}, func(s string, x float64) float64 {
		if strings.Contains(s, "VM") {
			return 2000 + x // Figure 10: close together
		}
		return 300 * x
	})
	dir := t.TempDir()
	if err := charts.Build("test", set, data, nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	main := func(p string) string {
		i := strings.Index(p, "let option_")
		return p[i : i+strings.Index(p[i:], "\n")]
	}
	if m := main(readPage(t, dir, "fig10.html")); !strings.Contains(m, `"scale":true`) || !strings.Contains(m, "not from 0") {
		t.Error("fig10.html squeezes close series against a zero baseline")
	}
	if strings.Contains(main(readPage(t, dir, "fig08.html")), `"scale":true`) {
		t.Error("fig08.html drops the zero baseline of a series that starts near 0")
	}
}

// TestClientBoundPageSaysSo: a figure that measures the modelled client on
// purpose says so on its page, as information, with how many of its runs
// saturated their client; a figure that does not says nothing of it.
func TestClientBoundPageSaysSo(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{3, 12})
	set := &results.Set{Mode: "quick"}
	for _, f := range figs {
		for i, fr := range f.Runs {
			r := &results.Run{ID: workloads.RunID(f.ID, fr.Series, fr.X), Series: fr.Series, X: fr.X, EntitiesPerSec: 1000 * fr.X}
			if f.ID == 12 && i >= 2 {
				r.Notes = []string{"the modelled 2010 client was saturated"}
			}
			set.Runs = append(set.Runs, r)
		}
	}
	dir := t.TempDir()
	if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), nil).Write(dir); err != nil {
		t.Fatal(err)
	}
	page := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(string(b))
	}
	if p := page("fig12.html"); !strings.Contains(p, "Client-bound on purpose: each small VM's CPU limits it") || !strings.Contains(p, "4 of its 6 runs saturated their modelled 2010 client") {
		t.Error("fig12.html does not say it measures the client on purpose")
	}
	if strings.Contains(page("fig03.html"), "Client-bound") {
		t.Error("fig03.html says it is client-bound")
	}
}

// TestRequestUnitsAreCharted: a figure whose runs were charged request
// units charts them per second and lists each run's RU/s and retry-after;
// one without charges does not.
func TestRequestUnitsAreCharted(t *testing.T) {
	set, figs := stored(t)
	write := func() string {
		dir := t.TempDir()
		if err := charts.Build("test", set, workloads.DrawAll(figs, set.Runs), nil).Write(dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "fig15.html"))
		if err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(string(b))
	}
	if p := write(); strings.Contains(p, "Request units over time") || strings.Contains(p, "RU/s") {
		t.Error("a figure without request units charts them")
	}
	for _, r := range set.Runs {
		r.Totals.RequestUnits, r.RequestUnitsPerSec = 5000, 500
		r.RetryAfterMs = &results.Percentiles{Count: 1, P99: 321}
		for i := range r.Intervals {
			r.Intervals[i].RequestUnits = 500
		}
	}
	if p := write(); !strings.Contains(p, "Request units over time") || !strings.Contains(p, "500.0") || !strings.Contains(p, "321") {
		t.Error("fig15.html does not chart and list the runs' request units and retry-afters")
	}
}
