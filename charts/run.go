package charts

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// A run directory (run --out) holds run records, each with its interval
// log. Its report is a page per run: index.html where it holds one run;
// where it holds several, index.html lists them and each has a page
// ID.html of its own.

// RunPage is where a run's page is in its directory's report, when the
// directory holds runs runs.
func RunPage(id string, runs int) string {
	if runs == 1 {
		return "index.html"
	}
	return id + ".html"
}

// WriteRuns renders the report of a run directory into dir: a page per
// run, in the order given, and the echarts script in dir/assets. Runs read
// with their interval logs (Run.ReadHlog) draw more percentiles over time.
func WriteRuns(dir string, runs []*results.Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("no runs to report in %s", dir)
	}
	if err := copyAssets(dir); err != nil {
		return err
	}
	var nav [][]link
	if len(runs) > 1 {
		row := []link{{Href: "index.html", Text: "index"}}
		for _, r := range runs {
			row = append(row, link{Href: RunPage(r.ID, len(runs)), Text: r.ID})
		}
		nav = [][]link{row}
		if err := writePage(filepath.Join(dir, "index.html"), runsIndex(runs, nav)); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if err := writePage(filepath.Join(dir, RunPage(r.ID, len(runs))), runPage(r, nav)); err != nil {
			return err
		}
	}
	return nil
}

// runsIndex lists a directory's runs with their headline numbers and
// verdicts.
func runsIndex(runs []*results.Run, nav [][]link) *page {
	p := &page{Title: fmt.Sprintf("tablebench: %d runs", len(runs)), Nav: nav,
		Subtitle: "Each run's page shows its numbers over time, its latency per operation and its settings."}
	t := table{Caption: "Runs", Head: []string{"run", "what", "entities/s", "requests/s", "throttled", "p50 ms", "p99 ms", "verdict"}}
	for _, r := range runs {
		t.Hrefs = append(t.Hrefs, RunPage(r.ID, len(runs)))
		t.Rows = append(t.Rows, []string{r.ID, describeSetup(r), fmt.Sprintf("%.1f", r.EntitiesPerSec), fmt.Sprintf("%.1f", r.RequestsPerSec),
			fmt.Sprintf("%.4f%%", r.ThrottledPct), fmt.Sprintf("%.1f", r.SuccessLatencyMs.P50), fmt.Sprintf("%.1f", r.SuccessLatencyMs.P99), runVerdict(r)})
	}
	p.Tables = append(p.Tables, t)
	return p
}

// runVerdict says in a few words whether a run's numbers hold and clear
// its thresholds.
func runVerdict(r *results.Run) string {
	var parts []string
	switch {
	case r.Refused:
		parts = append(parts, "refused")
	case r.Interrupted:
		parts = append(parts, "interrupted")
	}
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, fmt.Sprintf("%d warning(s)", n))
	}
	if n := len(r.Thresholds); n > 0 {
		pass := 0
		for _, c := range r.Thresholds {
			if c.Pass {
				pass++
			}
		}
		parts = append(parts, fmt.Sprintf("%d of %d thresholds pass", pass, n))
	}
	if len(parts) == 0 {
		return "ok"
	}
	return strings.Join(parts, ", ")
}

// describeSetup is one line of what a run did.
func describeSetup(r *results.Run) string {
	s := r.Setup
	op := s.Op
	if s.BatchSize > 0 && s.MultiEntity() {
		op = fmt.Sprintf("%s of %d", s.Op, s.BatchSize)
	}
	load := "closed loop"
	if s.OpenLoop() {
		load = fmt.Sprintf("open loop at %g requests/s", s.Rate)
	}
	return fmt.Sprintf("%s, %s partitions, %d %s VM(s) x %d threads, %d-byte entities, %s; %v measured after %v of warm-up",
		op, s.Partition, s.VMs, s.VMSize, s.Threads, s.EntitySize, load, s.Duration, s.Warmup)
}

// describeTarget says where a run ran, and on what clock.
func describeTarget(r *results.Run) string {
	e := r.Env
	switch {
	case e.Target == "engine" && e.TimeScale == 0:
		return fmt.Sprintf("the in-tree engine, profile %s, in virtual time", e.Profile)
	case e.Target == "engine":
		return fmt.Sprintf("the in-tree engine, profile %s, in wall time at scale %g", e.Profile, e.TimeScale)
	case e.Endpoint != "":
		return fmt.Sprintf("%s at %s, in wall time", e.Target, e.Endpoint)
	}
	return e.Target + ", in wall time"
}

// runPage builds a run's page: its verdicts first (refused, interrupted,
// warnings, thresholds), then its numbers, its charts over time, its
// latency per operation, and its settings.
func runPage(r *results.Run, nav [][]link) *page {
	p := &page{Title: "Run " + r.ID, Nav: nav, Thresholds: r.Thresholds,
		Subtitle: describeSetup(r) + ", on " + describeTarget(r) + "."}
	if r.Refused {
		p.Status = append(p.Status, status{"refused", "Refused: the harness could not keep time at this time scale, so this run's numbers do not hold (see the warnings)."})
	}
	if r.Interrupted {
		p.Status = append(p.Status, status{"warning", fmt.Sprintf("Interrupted: these numbers cover %.1f s measured, not the %v planned.", r.MeasuredSec, r.Setup.Duration)})
	}
	for _, w := range r.Warnings {
		p.Status = append(p.Status, status{"warning", "Warning: " + w})
	}
	for _, n := range r.Notes {
		p.Status = append(p.Status, status{"info", "Note: " + n})
	}
	if len(p.Status) == 0 {
		p.Status = append(p.Status, status{"ok", "No warnings: nothing in this run puts its numbers in doubt."})
	}
	id := "run_" + jsName(r.ID)
	p.Lead = append(p.Lead, numbersTable(r))
	if len(r.Intervals) > 0 {
		p.Sections = append(p.Sections,
			section{Heading: "Throughput and throttling over time", Note: "Per second; the shaded seconds are the warm-up, which the run's numbers leave out." + coincideRates(r) + eventsNote(r),
				Chart: throughputOverTime(id+"_tput", r)},
			section{Heading: "Latency over time", Note: latencyOverTimeNote(r), Chart: latencyOverTime(id+"_lat", r)})
	}
	// Where the load landed in the PartitionKey space over time: beside
	// the charts over time it shares its x with.
	if r.Heatmap != nil {
		p.Sections = append(p.Sections, section{Heading: "Where the load landed in the key space",
			Note:  strings.TrimSpace(KeySpaceHow + " " + KeySpaceNote(r)),
			Chart: KeySpace(id+"_keys", []*results.Run{r}, func(*results.Run) string { return "Requests by PartitionKey over time" })})
	}
	if len(r.Histograms) > 0 {
		p.Sections = append(p.Sections, section{Heading: "Latency distribution per operation",
			Note:  "Each operation's requests by outcome, from the run's HDR histograms over the measured time: the latency at or under which each share of them finished. The tail is on the right.",
			Chart: spectrumChart(id+"_dist", r)})
	}
	p.Tables = append(p.Tables, settingsTable(r), environmentTable(r))
	if len(r.Errors) > 0 {
		t := table{Caption: "Errors by code", Head: []string{"code", "requests (throttling included)"}}
		for _, code := range results.SortedErrors(r.Errors) {
			t.Rows = append(t.Rows, []string{code, strconv.FormatInt(r.Errors[code], 10)})
		}
		p.Tables = append(p.Tables, t)
	}
	p.Paras = []string{
		fmt.Sprintf("The record is %s.json and the per-second latency histograms %s.hlog (an HdrHistogram interval log), beside this page; 'tablebench report' on this directory rebuilds the page from them without running anything.", r.ID, r.ID),
		"Latency percentiles in the table are of successful requests, as every figure's are: a throttled request is answered at once. The charts over time hold every request.",
	}
	return p
}

// coincideRates says why requests/s hides entities/s, where it does.
func coincideRates(r *results.Run) string {
	if r.Setup.MultiEntity() || r.Totals.Entities != r.Totals.Requests {
		return ""
	}
	return " Each request carried one entity and none failed, so requests/s (dashed) and entities/s (wide, pale) coincide."
}

// eventsNote says what the dashed lines mark, where the target reported
// events.
func eventsNote(r *results.Run) string {
	if len(r.Events) == 0 {
		return ""
	}
	return fmt.Sprintf(" Dashed lines: the target's %d events (partition splits and moves).", len(r.Events))
}

// numbersTable is the run's headline numbers: every metric of the run
// alone, as results.Metrics names and formats them.
func numbersTable(r *results.Run) table {
	t := table{Caption: fmt.Sprintf("Results over %.1f s measured", r.MeasuredSec), Head: []string{"metric", "value", "what it counts"}}
	for i := range results.Metrics {
		m := &results.Metrics[i]
		if !results.ThresholdMetric(m) {
			continue
		}
		t.Rows = append(t.Rows, []string{m.Name, results.FormatValue(m.Value(r, r.X), m.Unit), m.Label})
	}
	if l := r.HarnessLagMs; l != nil {
		t.Rows = append(t.Rows, []string{"harness lag", fmt.Sprintf("p99 %.2f ms, max %.2f ms", l.P99, l.Max), "how late threads sent, in the target's time"})
	}
	return t
}

func settingsTable(r *results.Run) table {
	s := r.Setup
	t := table{Caption: "Settings", Head: []string{"setting", "value"}}
	add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	add("op", s.Op)
	if s.MultiEntity() {
		add("batch size", strconv.Itoa(s.BatchSize))
	}
	add("partition", s.Partition)
	add("VMs", fmt.Sprintf("%d (%s)", s.VMs, s.VMSize))
	add("threads per VM", strconv.Itoa(s.Threads))
	add("entity size", fmt.Sprintf("%d bytes", s.EntitySize))
	add("load", s.Load)
	if s.OpenLoop() {
		add("rate", fmt.Sprintf("%g requests/s", s.Rate))
	}
	add("warm-up", s.Warmup.String())
	add("measured", s.Duration.String())
	if r.Shard != nil {
		add("shard", fmt.Sprintf("%d of %d", r.Shard.Index+1, r.Shard.Count))
	}
	if n := len(r.MergedFrom); n > 0 {
		add("merged from", fmt.Sprintf("%d shards", n))
	}
	if len(r.ClientCPUPct) > 0 {
		var parts []string
		for _, c := range r.ClientCPUPct {
			parts = append(parts, fmt.Sprintf("%.0f%%", c))
		}
		add("client CPU (modelled, per VM)", strings.Join(parts, " "))
	}
	return t
}

func environmentTable(r *results.Run) table {
	e := r.Env
	t := table{Caption: "Where it ran", Head: []string{"environment", "value"}}
	add := func(k, v string) {
		if v != "" {
			t.Rows = append(t.Rows, []string{k, v})
		}
	}
	add("target", e.Target)
	add("endpoint", e.Endpoint)
	add("profile", e.Profile)
	if e.Target == "engine" {
		clock := "virtual"
		if e.TimeScale > 0 {
			clock = fmt.Sprintf("wall, scale %g", e.TimeScale)
		}
		add("time", clock)
	}
	add("started", r.Start.UTC().Format("2006-01-02 15:04:05 MST")+" (target time)")
	add("tablebench", e.Tablebench)
	add("Go", e.GoVersion)
	add("OS", fmt.Sprintf("%s, %d CPUs", e.OS, e.CPUs))
	return t
}

// warmupArea shades a run's warm-up on a chart over its seconds.
func warmupArea(r *results.Run) []charts.SeriesOpts {
	w := r.Setup.Warmup.Seconds()
	if w <= 0 {
		return nil
	}
	return []charts.SeriesOpts{
		charts.WithMarkAreaData([]opts.MarkAreaData{{Name: "warm-up", XAxis: 0}, {XAxis: w}}),
		charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(120,120,120,0.12)"},
			Label: &opts.Label{Show: opts.Bool(true), Position: "insideTop", Color: "#555555"}}),
	}
}

// throughputOverTime draws a run's successful entities/s and requests/s
// (left axis) and its throttled share (right axis) per second, with the
// warm-up shaded and the target's events dashed.
func throughputOverTime(id string, r *results.Run) render.ChartSnippet {
	var top, topPct float64 // the throttled share's axis fits it: a share of 0.1% on one of 100% would not show
	for _, iv := range r.Intervals {
		top = math.Max(top, math.Max(float64(iv.Entities), float64(iv.Requests)))
		if iv.Requests > 0 {
			topPct = math.Max(topPct, 100*float64(iv.Throttled)/float64(iv.Requests))
		}
	}
	legend := []string{"successful entities/s", "requests/s", "% of requests throttled"}
	if r.Setup.MultiEntity() {
		legend = slices.Delete(legend, 1, 2)
	}
	fr := wide(id, "Throughput and throttled share per second", "second of the run (warm-up included)", "per second", "value", legend)
	l := charts.NewLine()
	l.SetGlobalOptions(fr.opts()...)
	l.SetGlobalOptions(fr.y(opts.YAxis{Type: "value", Min: 0, Max: niceCeil(top)}))
	// At least 0-5%: a share that is small stays small to the eye, yet a
	// share of 0.1% on an axis to 100% still shows.
	l.ExtendYAxis(fr.y2(opts.YAxis{Name: "% of requests throttled", Type: "value", Min: 0, Max: math.Min(100, math.Max(5, niceCeil(topPct)))}))
	var ents, reqs, thr []opts.LineData
	end := wholeSeconds(r)
	for _, iv := range r.Intervals {
		if iv.Second >= end { // a partial last second would draw as a drop
			continue
		}
		pct := 0.0
		if iv.Requests > 0 {
			pct = 100 * float64(iv.Throttled) / float64(iv.Requests)
		}
		ents = append(ents, opts.LineData{Value: []any{iv.Second, iv.Entities}})
		reqs = append(reqs, opts.LineData{Value: []any{iv.Second, iv.Requests}})
		thr = append(thr, opts.LineData{Value: []any{iv.Second, round(pct)}})
	}
	line := func(color string, dash string) []charts.SeriesOpts {
		return []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 1.5, Color: color, Type: dash}), charts.WithItemStyleOpts(opts.ItemStyle{Color: color})}
	}
	so := append(line(okColor, "solid"), warmupArea(r)...)
	if sameSeries(ents, reqs) { // one entity a request, none refused: requests/s dashed over entities/s, wide and pale
		so = append(so, charts.WithLineStyleOpts(opts.LineStyle{Width: 7, Color: okColor, Opacity: opts.Float(0.45)}))
	}
	if ev := eventMarks(r, end); len(ev) > 0 {
		so = append(so, charts.WithMarkLineNameXAxisItemOpts(ev...),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "end"},
				LineStyle: &opts.LineStyle{Type: "dashed", Color: "#555555"}}))
	}
	l.AddSeries("successful entities/s", ents, so...)
	if !r.Setup.MultiEntity() { // a batch's or a query's requests/s is its entities/s over their size: a flat line at the foot
		l.AddSeries("requests/s", reqs, line("#7570b3", "dashed")...)
	}
	l.AddSeries("% of requests throttled", thr, append(line(throttleColor, "solid"), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), YAxisIndex: 1}),
		charts.WithAreaStyleOpts(opts.AreaStyle{Color: throttleColor, Opacity: opts.Float(0.2)}))...)
	return l.RenderSnippet()
}

// sameSeries reports whether two series over seconds are the same to 1%.
func sameSeries(a, b []opts.LineData) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := toFloat(a[i].Value.([]any)[1]), toFloat(b[i].Value.([]any)[1])
		if math.Abs(x-y) > 0.01*math.Max(math.Abs(x), math.Abs(y)) {
			return false
		}
	}
	return true
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return math.NaN()
}

// overTimeLevels are the percentiles drawn per second where the interval
// log is read; the record alone keeps the median and p99 of each second.
var overTimeLevels = []float64{50, 90, 99, 100}

func latencyOverTimeNote(r *results.Run) string {
	if len(r.IntervalHists) == len(r.Intervals) {
		return "Every request, throttled included, per second, from the run's interval log (.hlog); log scale."
	}
	return "Every request, throttled included, per second: the median and p99 the record keeps (its interval log was not read); log scale."
}

// latencyOverTime draws a run's latency percentiles per second: from its
// interval log where it was read, else the median and p99 its record
// keeps of each second.
func latencyOverTime(id string, r *results.Run) render.ChartSnippet {
	fromLog := len(r.IntervalHists) == len(r.Intervals)
	levelsDrawn := []float64{50, 99}
	if fromLog {
		levelsDrawn = overTimeLevels
	}
	var legend []string
	for _, p := range levelsDrawn {
		legend = append(legend, levelName(p))
	}
	fr := wide(id, "Latency percentiles per second", "second of the run (warm-up included)", "latency (ms, log scale)", "value", legend)
	l := charts.NewLine()
	l.SetGlobalOptions(fr.opts()...)
	l.SetGlobalOptions(fr.y(opts.YAxis{Type: "log"}))
	end := wholeSeconds(r)
	for j, p := range levelsDrawn {
		var data []opts.LineData
		for i, iv := range r.Intervals {
			if iv.Second >= end {
				continue
			}
			if iv.Requests == 0 { // no latency that second: a gap, not a line across it
				data = append(data, opts.LineData{Value: []any{iv.Second, "-"}})
				continue
			}
			v := iv.P50Ms
			switch {
			case fromLog && p == 100:
				v = float64(r.IntervalHists[i].Max()) / 1000
			case fromLog:
				v = float64(r.IntervalHists[i].ValueAtQuantile(p)) / 1000
			case p == 99:
				v = iv.P99Ms
			}
			data = append(data, opts.LineData{Value: []any{iv.Second, round(math.Max(v, 0.001))}})
		}
		color, dash := levelColors[slices.Index(levels, p)], "solid"
		if p == 100 { // dashed, so a p99 as high as it (a second of few requests) shows through
			dash = "dashed"
		}
		so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: 1.5, Type: dash}), charts.WithItemStyleOpts(opts.ItemStyle{Color: color})}
		if j == 0 {
			so = append(so, warmupArea(r)...)
		}
		l.AddSeries(levelName(p), data, so...)
	}
	return l.RenderSnippet()
}

// spectrumPercentiles are the points of a latency distribution: evenly
// spaced in nines, so the tail gets as much room as the body.
var spectrumPercentiles = []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100}

// thousands writes a count with thousands separators: 25,080.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// outcomeWords names a histogram's outcome on a chart.
func outcomeWords(outcome string) string {
	switch outcome {
	case results.OutcomeOK:
		return "successful"
	case results.OutcomeThrottled:
		return "throttled (ServerBusy)"
	case results.OutcomeTimedOut:
		return "timed out (OperationTimedOut)"
	}
	return outcome
}

// spectrumChart draws the latency distribution of each operation and
// outcome the run's histograms hold ("op/outcome"), as a percentile
// spectrum: latency against the share of requests at or under it, in
// nines. Percentiles finer than the largest histogram resolves (a run of
// 1,000 requests has no p99.99) are left out.
func spectrumChart(id string, r *results.Run) render.ChartSnippet {
	type curve struct {
		name string
		h    *hdr.Histogram
	}
	var curves []curve
	var most int64
	names := slices.SortedFunc(maps.Keys(r.Histograms), func(a, b string) int { // each operation's successful requests first
		oa, a2, _ := strings.Cut(a, "/")
		ob, b2, _ := strings.Cut(b, "/")
		okFirst := func(o string) int {
			if o == results.OutcomeOK {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(oa, ob), cmp.Compare(okFirst(a2), okFirst(b2)), cmp.Compare(a2, b2))
	})
	for _, name := range names {
		op, outcome, _ := strings.Cut(name, "/")
		if outcome == "per-entity" {
			continue
		}
		h, err := r.Histogram(name)
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		curves = append(curves, curve{fmt.Sprintf("%s, %s: %s requests", op, outcomeWords(outcome), thousands(h.TotalCount())), h})
		most = max(most, h.TotalCount())
	}
	var ps []float64
	for _, p := range spectrumPercentiles {
		if p == 0 || p == 100 || float64(most)*(1-p/100) >= 1 {
			ps = append(ps, p)
		}
	}
	var labels, legend []string
	for _, p := range ps {
		switch p {
		case 0:
			labels = append(labels, "min")
		case 100:
			labels = append(labels, "max")
		default:
			labels = append(labels, strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	for _, c := range curves {
		legend = append(legend, c.name)
	}
	fr := wide(id, "Latency by percentile, per operation and outcome", "percentile of the operation's requests (spaced in nines)", "latency (ms, log scale)", "category", legend)
	l := charts.NewLine()
	l.SetGlobalOptions(fr.opts()...)
	l.SetGlobalOptions(fr.y(opts.YAxis{Type: "log"}))
	l.SetXAxis(labels)
	for i, c := range curves {
		var data []opts.LineData
		for _, p := range ps {
			v := float64(c.h.ValueAtQuantile(p)) / 1000
			switch p {
			case 0:
				v = float64(c.h.Min()) / 1000
			case 100:
				v = float64(c.h.Max()) / 1000
			}
			data = append(data, opts.LineData{Value: round(math.Max(v, 0.001))})
		}
		l.AddSeries(c.name, data, lineStyle(i, false)...)
	}
	return l.RenderSnippet()
}
