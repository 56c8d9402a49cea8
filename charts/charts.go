// Package charts renders stored results as an offline HTML report: one page
// per figure that looks like the published figure, latency percentile
// curves and per-second throughput and throttling of each run, and an index
// with the claims table. Pages load echarts from the report's own assets
// folder, never from the network, and are the same for the same results.
//
// In tablebench's data flow (spec -> coordinator -> target -> recorder ->
// results -> charts) it is the last stage: it reads stored results, and the
// figure catalog for how each figure is drawn, and runs nothing.
package charts

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// page is one HTML page of the report.
type page struct {
	Title    string
	Subtitle string
	Nav      []link
	Paras    []string
	Claims   []results.Claim
	Sections []section
	Tables   []table
}

type link struct{ Href, Text string }

type section struct {
	Heading string
	Note    string
	Chart   render.ChartSnippet
}

type table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"safeJS":   func(s string) template.JS { return template.JS(s) },
	"safeHTML": func(s string) template.HTML { return template.HTML(s) },
	"value":    results.FormatValue,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<script src="assets/echarts.min.js"></script>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
nav a { margin-right: .8em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
.PASS { color: #06660c; font-weight: bold; } .FAIL { color: #b00020; font-weight: bold; }
.note { color: #555; font-size: .9em; }
.multiples { display: flex; flex-wrap: wrap; gap: 6px; }
</style>
</head>
<body>
<nav>{{range .Nav}}<a href="{{.Href}}">{{.Text}}</a>{{end}}</nav>
<h1>{{.Title}}</h1>
{{if .Subtitle}}<p class="note">{{.Subtitle}}</p>{{end}}
{{range .Paras}}<p>{{.}}</p>{{end}}
{{if .Claims}}<table id="claims">
<tr><th>claim</th><th></th><th>published</th><th>threshold</th><th>measured</th><th>margin</th><th>claim as published; how it is checked</th></tr>
{{range .Claims}}<tr><td>{{.ID}}</td><td class="{{if .Pass}}PASS{{else}}FAIL{{end}}">{{if .Pass}}PASS{{else}}FAIL{{end}}</td><td>{{.PublishedText}}</td><td>{{.Tolerance}}</td><td>{{value .Measured .Unit}}</td><td>{{.MarginText}}</td><td>{{.Text}}{{if .DecidedBy}} <span class="note">[decided by the {{.DecidedBy}}]</span>{{end}}<br><span class="note">{{.Reading}}{{if .Detail}}; {{.Detail}}{{end}}{{if .Note}}<br>{{.Note}}{{end}}</span></td></tr>
{{end}}</table>{{end}}
{{range .Sections}}<h2>{{.Heading}}</h2>{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{safeHTML .Chart.Element}}
{{end}}
{{range .Tables}}<table><caption>{{.Caption}}</caption><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{range .Sections}}{{safeHTML .Chart.Script}}
{{end}}
</body>
</html>
`))

func (p *page) write(w io.Writer) error { return pageTmpl.Execute(w, p) }

// init returns the options every chart shares: a fixed ID, so pages are
// the same for the same results, assets from the report folder, and SVG so
// a browser (or a test) can see what was drawn.
func initOpts(id string, height string) charts.GlobalOpts {
	return charts.WithInitializationOpts(opts.Initialization{
		ChartID: id, AssetsHost: "assets/", Renderer: "svg", Width: "960px", Height: height, PageTitle: "tablebench",
	})
}

func common(id, title, xName, yName string, xType string) []charts.GlobalOpts {
	return commonIn(opts.Grid{Top: "80", Left: "80", Right: "80"}, id, title, xName, yName, xType)
}

// commonIn is common with the plot area in grid (echarts adds grids, so a
// chart must be given its one grid once).
func commonIn(grid opts.Grid, id, title, xName, yName string, xType string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		initOpts(id, "480px"),
		charts.WithTitleOpts(opts.Title{Title: title}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "30", Type: "scroll"}),
		charts.WithGridOpts(grid),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: xType, NameLocation: "middle", NameGap: 30}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Type: "value"}),
		charts.WithAnimation(false),
	}
}

// Figure is what one figure page shows.
type Figure struct {
	Figure results.FigureData
	Runs   []*results.Run // the figure's runs, in catalog order
	Claims []results.Claim
	Twin   *results.FigureData // the figure this one may repeat, if drawn
}

// lineStyles keep series apart where they coincide: the first drawn wide
// and solid, the next thinner, dashed or dotted, each with its own marker.
var (
	dashes  = []string{"solid", "dashed", "dotted"}
	symbols = []string{"circle", "triangle", "rect", "diamond", "roundRect", "pin"}
)

func lineStyle(i int) []charts.SeriesOpts {
	width, size, opacity := float32(2), 8, float32(1)
	if i == 0 {
		width, size, opacity = 7, 14, 0.45
	}
	return []charts.SeriesOpts{
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), Symbol: symbols[i%len(symbols)], SymbolSize: size}),
		charts.WithLineStyleOpts(opts.LineStyle{Type: dashes[i%len(dashes)], Width: width, Opacity: opts.Float(opacity)}),
	}
}

// coincide reports whether two series have the same x values and y values
// within 1% at every one of them.
func coincide(a, b results.Series) bool {
	if len(a.Points) == 0 || len(a.Points) != len(b.Points) {
		return false
	}
	for i, p := range a.Points {
		q := b.Points[i]
		if p.X != q.X || math.Abs(p.Y-q.Y) > 0.01*math.Max(math.Abs(p.Y), math.Abs(q.Y)) ||
			math.Abs(p.Y2-q.Y2) > 0.01*math.Max(math.Abs(p.Y2), math.Abs(q.Y2)) {
			return false
		}
	}
	return true
}

// twinSeries returns the twin figure's series that coincide with this
// figure's series of the same name.
func twinSeries(f *Figure) []results.Series {
	if f.Twin == nil {
		return nil
	}
	var out []results.Series
	for _, s := range f.Figure.Series {
		for _, t := range f.Twin.Series {
			if t.Name == s.Name && coincide(s, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// coincideNote says which series coincide, how they are drawn, and why.
func coincideNote(f *Figure) string {
	var parts []string
	ss := f.Figure.Series
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			if coincide(ss[i], ss[j]) {
				parts = append(parts, fmt.Sprintf("The %s and %s series coincide (within 1%% at every x): both are drawn, %s dashed over %s.", ss[i].Name, ss[j].Name, ss[j].Name, ss[i].Name))
			}
		}
	}
	for _, t := range twinSeries(f) {
		parts = append(parts, fmt.Sprintf("This figure's %s series coincides with Figure %d's (within 1%% at every x), drawn beside it as \"Figure %d: %s\".", t.Name, f.Twin.ID, f.Twin.ID, t.Name))
	}
	if len(parts) == 0 {
		return ""
	}
	why := f.Figure.Coincide
	if why == "" {
		why = "the runs measured the same; the choices above say what the figure varies"
	}
	return strings.Join(parts, " ") + " Why: " + why + "."
}

// mainChart renders the figure as it was published.
func mainChart(f *Figure) render.ChartSnippet {
	fig := &f.Figure
	id := jsName(fig.Name) + "_main"
	switch fig.Chart {
	case results.ChartHistogram:
		return histogramChart(id, fig.Title, f.Runs, seriesNames(f))
	case results.ChartTimeline:
		return timelineChart(id, fig.Title, f.Runs)
	case results.ChartDual:
		l := charts.NewLine()
		l.SetGlobalOptions(common(id, fig.Title, fig.XLabel, fig.YLabel, "value")...)
		l.ExtendYAxis(opts.YAxis{Name: fig.Y2Label, Type: "value", Position: "right", Min: 0})
		for _, s := range f.Figure.Series {
			var ok, thr []opts.LineData
			for _, p := range s.Points {
				ok = append(ok, opts.LineData{Value: []any{p.X, round(p.Y)}})
				thr = append(thr, opts.LineData{Value: []any{p.X, round(p.Y2)}})
			}
			l.AddSeries("successful entities/s", ok, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true)}))
			l.AddSeries("% throttled", thr, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1, ShowSymbol: opts.Bool(true)}))
		}
		return l.RenderSnippet()
	}
	l := charts.NewLine()
	l.SetGlobalOptions(common(id, fig.Title, fig.XLabel, fig.YLabel, "value")...)
	series := f.Figure.Series
	for _, t := range twinSeries(f) {
		t.Name = fmt.Sprintf("Figure %d: %s", f.Twin.ID, t.Name)
		series = append(series, t)
	}
	for i, s := range series {
		var data []opts.LineData
		for _, p := range s.Points {
			data = append(data, opts.LineData{Value: []any{p.X, round(p.Y)}})
		}
		l.AddSeries(s.Name, data, lineStyle(i)...)
	}
	return l.RenderSnippet()
}

func seriesNames(f *Figure) []string {
	var names []string
	for _, r := range f.Runs {
		names = append(names, r.Series)
	}
	return names
}

func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

// histogramChart draws latency histograms (requests per latency bin). The
// bins cover the runs' 99th percentiles; the rare tail beyond (commit
// hiccups) is counted in a last bin of its own, so it does not flatten the
// rest.
func histogramChart(id, title string, runs []*results.Run, names []string) render.ChartSnippet {
	hi := 0.0
	for _, r := range runs {
		hi = math.Max(hi, 1.25*float64(r.Merged("/ok").ValueAtQuantile(99))/1000)
	}
	width := niceStep(hi / 40)
	n := int(math.Ceil(hi/width)) + 1
	var labels []string
	for i := range n - 1 {
		labels = append(labels, strconv.FormatFloat(float64(i)*width, 'f', -1, 64))
	}
	labels = append(labels, "≥"+strconv.FormatFloat(float64(n-1)*width, 'f', -1, 64))
	b := charts.NewBar()
	b.SetGlobalOptions(common(id, title, "latency (ms), bins of "+strconv.FormatFloat(width, 'f', -1, 64)+" ms", "requests", "category")...)
	b.SetXAxis(labels)
	for i, r := range runs {
		counts := make([]int64, n)
		for _, bar := range r.Merged("/ok").Distribution() {
			if bar.Count > 0 {
				ms := float64(bar.From+bar.To) / 2 / 1000
				counts[min(int(ms/width), n-1)] += bar.Count
			}
		}
		data := make([]opts.BarData, n)
		for j, c := range counts {
			data[j] = opts.BarData{Value: c}
		}
		b.AddSeries(names[i], data, charts.WithBarChartOpts(opts.BarChart{BarGap: "0%"}))
	}
	return b.RenderSnippet()
}

// niceStep rounds a bin width up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

var percentiles = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 100}

// maxLines is the most runs one chart draws as lines; past it a chart
// becomes small multiples, so no colour is reused and no legend pages.
const maxLines = 8

// multiples lays out small charts side by side as one snippet.
func multiples(snips []render.ChartSnippet) render.ChartSnippet {
	var el, js strings.Builder
	el.WriteString(`<div class="multiples">`)
	for _, s := range snips {
		el.WriteString(s.Element)
		js.WriteString(s.Script)
	}
	el.WriteString(`</div>`)
	return render.ChartSnippet{Element: el.String(), Script: js.String()}
}

// bySeries groups runs by their series, in order of first appearance.
func bySeries(runs []*results.Run) (names []string, groups map[string][]*results.Run) {
	groups = map[string][]*results.Run{}
	for _, r := range runs {
		if _, ok := groups[r.Series]; !ok {
			names = append(names, r.Series)
		}
		groups[r.Series] = append(groups[r.Series], r)
	}
	return names, groups
}

// ramp returns n colours from light to dark, so lines ordered by x read in
// order without a legend lookup.
func ramp(n int) []string {
	out := make([]string, n)
	for i := range out {
		t := 0.0
		if n > 1 {
			t = float64(i) / float64(n-1)
		}
		out[i] = hsl(215-35*t, 0.7, 0.72-0.5*t)
	}
	return out
}

func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	return fmt.Sprintf("#%02x%02x%02x", int(math.Round((r+m)*255)), int(math.Round((g+m)*255)), int(math.Round((b+m)*255)))
}

// percentileChart draws each run's latency at fixed percentiles: one chart,
// or past maxLines runs one panel per series with its runs shaded by x.
func percentileChart(id string, runs []*results.Run) render.ChartSnippet {
	if len(runs) <= maxLines {
		return percentilePanel(id, "Latency percentiles of each run", "960px", "480px", runs, nil)
	}
	names, groups := bySeries(runs)
	width := "477px"
	if len(names) == 1 {
		width = "960px"
	}
	var snips []render.ChartSnippet
	for i, name := range names {
		g := groups[name]
		snips = append(snips, percentilePanel(fmt.Sprintf("%s_%d", id, i), "Latency percentiles: "+name+" (light to dark: x rising)", width, "400px", g, ramp(len(g))))
	}
	return multiples(snips)
}

func percentilePanel(id, title, width, height string, runs []*results.Run, colors []string) render.ChartSnippet {
	var labels []string
	for _, p := range percentiles {
		if p == 100 {
			labels = append(labels, "max")
		} else {
			labels = append(labels, strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	l := charts.NewLine()
	grid := opts.Grid{Top: "80", Left: "80", Right: "80"}
	if colors != nil {
		grid = opts.Grid{Top: "150", Left: "70", Right: "30"}
	}
	l.SetGlobalOptions(commonIn(grid, id, title, "percentile", "latency (ms)", "category")...)
	l.SetGlobalOptions(charts.WithYAxisOpts(opts.YAxis{Name: "latency (ms)", Type: "log"}), sized(id, width, height))
	if colors != nil {
		l.SetGlobalOptions(charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "30"}))
	}
	l.SetXAxis(labels)
	for i, r := range runs {
		h := r.Merged("/ok")
		var data []opts.LineData
		for _, p := range percentiles {
			v := float64(h.ValueAtQuantile(p)) / 1000
			if p == 100 {
				v = float64(h.Max()) / 1000
			}
			data = append(data, opts.LineData{Value: round(math.Max(v, 0.001))})
		}
		var so []charts.SeriesOpts
		if colors != nil {
			so = append(so, charts.WithLineStyleOpts(opts.LineStyle{Color: colors[i]}), charts.WithItemStyleOpts(opts.ItemStyle{Color: colors[i]}))
		}
		l.AddSeries(runLabel(r), data, so...)
	}
	return l.RenderSnippet()
}

// sized sets a chart's size, keeping its fixed ID and local assets.
func sized(id, width, height string) charts.GlobalOpts {
	return charts.WithInitializationOpts(opts.Initialization{
		ChartID: id, AssetsHost: "assets/", Renderer: "svg", Width: width, Height: height, PageTitle: "tablebench",
	})
}

// overTimeChart draws a per-second value of each run: one chart, or past
// maxLines runs one small panel per run on a shared scale.
func overTimeChart(id, title, yName string, runs []*results.Run, value func(results.Interval) float64) render.ChartSnippet {
	points := func(r *results.Run) []opts.LineData {
		var data []opts.LineData
		end := wholeSeconds(r)
		for _, iv := range r.Intervals {
			if iv.Second >= end { // a partial last second would draw as a drop
				continue
			}
			data = append(data, opts.LineData{Value: []any{iv.Second, round(value(iv))}})
		}
		return data
	}
	if len(runs) <= maxLines {
		l := charts.NewLine()
		l.SetGlobalOptions(common(id, title, "second (warm-up included)", yName, "value")...)
		for _, r := range runs {
			l.AddSeries(runLabel(r), points(r), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
		}
		return l.RenderSnippet()
	}
	var top float64
	for _, r := range runs {
		for _, iv := range r.Intervals {
			top = math.Max(top, value(iv))
		}
	}
	var snips []render.ChartSnippet
	for i, r := range runs {
		l := charts.NewLine()
		pid := fmt.Sprintf("%s_%d", id, i)
		l.SetGlobalOptions(sized(pid, "316px", "190px"),
			charts.WithTitleOpts(opts.Title{Title: runLabel(r), TitleStyle: &opts.TextStyle{FontSize: 12}}),
			charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
			charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
			charts.WithGridOpts(opts.Grid{Top: "30", Left: "55", Right: "10", Bottom: "25"}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value"}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Min: 0, Max: niceCeil(top)}),
			charts.WithAnimation(false))
		l.AddSeries(runLabel(r), points(r), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
		snips = append(snips, l.RenderSnippet())
	}
	return multiples(snips)
}

// niceCeil rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// wholeSeconds returns how many whole seconds of a run, warm-up included,
// its intervals cover; the seconds after are partial.
func wholeSeconds(r *results.Run) int {
	var spec struct {
		Warmup string `json:"warmup"`
	}
	json.Unmarshal(r.Spec, &spec)
	warm, _ := time.ParseDuration(spec.Warmup)
	return int((warm.Seconds() + r.MeasuredSec) + 1e-9)
}

func runLabel(r *results.Run) string {
	if r.Series == "" {
		return r.ID
	}
	return fmt.Sprintf("%s, x=%g", r.Series, r.X)
}

// figurePage builds a figure's page.
func figurePage(f *Figure, nav []link) *page {
	fig := &f.Figure
	p := &page{Title: fmt.Sprintf("Figure %d: %s", fig.ID, fig.Title), Nav: nav, Claims: f.Claims}
	if fig.ID >= 100 {
		p.Title = fig.Title
	}
	for _, c := range fig.Choices {
		p.Paras = append(p.Paras, "Choice: "+c+".")
	}
	if fig.ClientBound != "" {
		p.Paras = append(p.Paras, clientBoundNote(f))
	}
	p.Sections = append(p.Sections, section{Heading: "The figure", Note: coincideNote(f), Chart: mainChart(f)})
	if len(f.Runs) > 0 {
		perRun := ""
		if len(f.Runs) > maxLines {
			perRun = fmt.Sprintf(" %d runs: one panel per run, all on one scale; x is the second of the run, warm-up included.", len(f.Runs))
		}
		p.Sections = append(p.Sections,
			section{Heading: "Latency percentiles", Note: "Successful requests, from each run's HDR histogram.", Chart: percentileChart(jsName(fig.Name)+"_pct", f.Runs)},
			section{Heading: "Throughput over time", Note: strings.TrimSpace(perRun), Chart: overTimeChart(jsName(fig.Name)+"_tput", "Successful entities per second", "entities/s", f.Runs,
				func(iv results.Interval) float64 { return float64(iv.Entities) })},
			section{Heading: "Throttling over time", Note: "Requests answered 503 ServerBusy or 500 OperationTimedOut, per second." + perRun,
				Chart: overTimeChart(jsName(fig.Name)+"_thr", "Throttled requests per second", "requests/s", f.Runs,
					func(iv results.Interval) float64 { return float64(iv.Throttled) })})
	}
	t := table{Caption: "Runs", Head: []string{"series", "x", "entities/s", "requests/s", "throttled", "p50 ms", "p99 ms", "errors", "run"}}
	for _, r := range f.Runs {
		t.Rows = append(t.Rows, []string{r.Series, strconv.FormatFloat(r.X, 'g', -1, 64), fmt.Sprintf("%.1f", r.EntitiesPerSec), fmt.Sprintf("%.1f", r.RequestsPerSec),
			fmt.Sprintf("%.4f%%", r.ThrottledPct), fmt.Sprintf("%.1f", r.LatencyMs.P50), fmt.Sprintf("%.1f", r.LatencyMs.P99), errorsText(r.Errors), r.ID})
	}
	p.Tables = append(p.Tables, t)
	return p
}

// clientBoundNote says, as information, that the figure measures its
// modelled client on purpose, and how many of its runs saturated it.
func clientBoundNote(f *Figure) string {
	n := 0
	for _, r := range f.Runs {
		if len(r.Notes) > 0 {
			n++
		}
	}
	return fmt.Sprintf("Client-bound on purpose: %s. %d of its %d runs saturated their modelled 2010 client, so their numbers describe the client, not the service; each run's record notes it.",
		f.Figure.ClientBound, n, len(f.Runs))
}

func errorsText(m map[string]int64) string {
	var parts []string
	for _, k := range results.SortedErrors(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// claimsChart shows each claim's margin to its threshold, signed so that
// right is always better: how much room a pass has, how far a fail missed.
// Bars stop at ±100% so small margins stay visible; the label gives the
// full value.
func claimsChart(claims []results.Claim) render.ChartSnippet {
	b := charts.NewBar()
	opts0 := common("claims_margin", "Margin of each claim to its threshold: right passes, left fails", "margin (% of the threshold; bars stop at 100)", "claim", "value")
	opts0 = append(opts0,
		charts.WithYAxisOpts(opts.YAxis{Name: "claim", Type: "category"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		initOpts("claims_margin", "640px"))
	b.SetGlobalOptions(opts0...)
	var names []string
	var bars []opts.BarData
	for i := len(claims) - 1; i >= 0; i-- { // the first claim on top
		c := claims[i]
		if c.Margin == nil {
			continue
		}
		color, pos := "#2e7d32", "right"
		if !c.Pass {
			color, pos = "#c62828", "left"
		}
		names = append(names, c.ID)
		v := max(-100, min(100, *c.Margin))
		bars = append(bars, opts.BarData{Value: round(v), ItemStyle: &opts.ItemStyle{Color: color},
			Label: &opts.Label{Show: opts.Bool(true), Position: pos, Formatter: fmt.Sprintf("%+.1f%%", *c.Margin)}})
	}
	b.SetXAxis(names)
	b.AddSeries("margin", bars)
	b.XYReversal()
	return b.RenderSnippet()
}

// Report is a result set to render.
type Report struct {
	Title   string
	Summary []string // paragraphs for the index
	Set     *results.Set
	Figures []Figure
	Claims  []results.Claim
}

// Write renders the report into dir: index.html, one page per figure and
// the embedded echarts script in dir/assets.
func (r *Report) Write(dir string) error {
	if err := copyAssets(dir); err != nil {
		return err
	}
	nav := []link{{Href: "index.html", Text: "index"}}
	for _, f := range r.Figures {
		nav = append(nav, link{Href: f.Figure.Name + ".html", Text: figLabel(f.Figure)})
	}
	idx := &page{Title: r.Title, Nav: nav, Paras: r.Summary, Claims: r.Claims}
	if len(r.Claims) > 0 {
		pass := 0
		for _, c := range r.Claims {
			if c.Pass {
				pass++
			}
		}
		idx.Subtitle = fmt.Sprintf("%d of %d published claims pass.", pass, len(r.Claims))
		idx.Sections = append(idx.Sections, section{Heading: "Claims at a glance", Chart: claimsChart(r.Claims)})
	}
	t := table{Caption: "Figures", Head: []string{"figure", "title", "runs", "choices"}}
	for _, f := range r.Figures {
		t.Rows = append(t.Rows, []string{figLabel(f.Figure), f.Figure.Title, strconv.Itoa(len(f.Runs)), strings.Join(f.Figure.Choices, "; ")})
	}
	idx.Tables = append(idx.Tables, t)
	if err := writePage(filepath.Join(dir, "index.html"), idx); err != nil {
		return err
	}
	for i := range r.Figures {
		f := &r.Figures[i]
		if err := writePage(filepath.Join(dir, f.Figure.Name+".html"), figurePage(f, nav)); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.Figure.Name+".csv"), func(w io.Writer) error { return writeCSV(w, f) }); err != nil {
			return err
		}
	}
	return results.WriteFileAtomic(filepath.Join(dir, "claims.csv"), func(w io.Writer) error { return results.ClaimsCSV(w, r.Claims) })
}

// copyAssets puts echarts into dir/assets, where the pages load it from.
func copyAssets(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, "assets", "echarts.min.js"), func(w io.Writer) error { _, err := w.Write(EChartsJS); return err })
}

func figLabel(f results.FigureData) string {
	if f.ID >= 100 {
		return f.Name
	}
	return fmt.Sprintf("Fig %d", f.ID)
}

func writePage(path string, p *page) error {
	return results.WriteFileAtomic(path, p.write)
}

// writeCSV writes a figure's plotted series.
func writeCSV(w io.Writer, f *Figure) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"series", "x", "y", "y2", "run", "entities_per_sec", "requests_per_sec", "throttled_pct", "p50_ms", "p99_ms"})
	byID := map[string]*results.Run{}
	for _, r := range f.Runs {
		byID[r.ID] = r
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, s := range f.Figure.Series {
		for _, p := range s.Points {
			r := byID[p.RunID]
			if r == nil {
				continue
			}
			cw.Write([]string{s.Name, g(p.X), g(p.Y), g(p.Y2), p.RunID,
				g(r.EntitiesPerSec), g(r.RequestsPerSec), g(r.ThrottledPct), g(r.LatencyMs.P50), g(r.LatencyMs.P99)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// Build assembles the report's figures from a result set and the figures
// drawn from it.
func Build(title string, set *results.Set, figs []results.FigureData, claims []results.Claim) *Report {
	byID := map[string]*results.Run{}
	for _, r := range set.Runs {
		byID[r.ID] = r
	}
	rep := &Report{Title: title, Set: set, Claims: claims}
	for _, f := range figs {
		fv := Figure{Figure: f}
		for i := range figs {
			if f.Twin != 0 && figs[i].ID == f.Twin && len(figs[i].Series) > 0 {
				fv.Twin = &figs[i]
			}
		}
		for _, id := range f.RunIDs {
			if r := byID[id]; r != nil {
				fv.Runs = append(fv.Runs, r)
			}
		}
		for _, c := range claims {
			if c.Figure == f.ID {
				fv.Claims = append(fv.Claims, c)
			}
		}
		if len(fv.Runs) > 0 {
			rep.Figures = append(rep.Figures, fv)
		}
	}
	return rep
}

// timelineChart draws each run's successful entities/s per second, with
// its target's splits and moves marked where they happened, and its
// throttled requests per second on the right axis.
func timelineChart(id, title string, runs []*results.Run) render.ChartSnippet {
	l := charts.NewLine()
	l.SetGlobalOptions(common(id, title, "second of the run (warm-up included); dashed lines: the balancer's splits and moves", "entities/s", "value")...)
	l.ExtendYAxis(opts.YAxis{Name: "throttled requests/s", Type: "value", Position: "right", Min: 0})
	for i, r := range runs {
		var ok, thr []opts.LineData
		end := wholeSeconds(r)
		for _, iv := range r.Intervals {
			if iv.Second >= end {
				continue
			}
			ok = append(ok, opts.LineData{Value: []any{iv.Second, iv.Entities}})
			thr = append(thr, opts.LineData{Value: []any{iv.Second, iv.Throttled}})
		}
		var marks []opts.MarkLineNameXAxisItem
		for _, ev := range r.Events {
			marks = append(marks, opts.MarkLineNameXAxisItem{Name: ev.Kind, XAxis: math.Round(ev.Second)})
		}
		color := palette[i%len(palette)]
		so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: color}), charts.WithItemStyleOpts(opts.ItemStyle{Color: color})}
		if len(marks) > 0 {
			so = append(so, charts.WithMarkLineNameXAxisItemOpts(marks...),
				charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}"}, LineStyle: &opts.LineStyle{Type: "dashed", Color: color}}))
		}
		l.AddSeries(r.Series+": entities/s", ok, so...)
		l.AddSeries(r.Series+": throttled/s", thr, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), YAxisIndex: 1}),
			charts.WithLineStyleOpts(opts.LineStyle{Type: "dotted", Width: 1, Color: color}), charts.WithItemStyleOpts(opts.ItemStyle{Color: color}))
	}
	return l.RenderSnippet()
}

// palette is echarts' default series colours, so a run's throttling and its
// events take its throughput's colour.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// jsName makes a figure's name fit a chart ID, which the page also uses as
// a JavaScript variable name: letters, digits and underscores only.
func jsName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}
