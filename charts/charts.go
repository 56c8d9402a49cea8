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
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// page is one HTML page of the report: its verdicts first, then its
// charts, then the detail.
type page struct {
	Title    string
	Subtitle string
	Nav      [][]link // rows of links; a link without Href names its row
	Claims   []results.CheckedClaim
	// Status and Thresholds are a run's verdicts: whether its numbers
	// hold, and the bars its user set.
	Status     []status
	Thresholds []results.ThresholdResult
	Lead       []table        // tables before the charts: a run's numbers
	Pages      map[int]string // a figure's page, where the claims link to it
	Choices    []string       // what was chosen where the case study is silent, after the first chart
	Sections   []section
	Figures    []figureRow
	Tables     []table
	Paras      []string // how the results were made, last
}

type link struct{ Href, Text string }

// status is a line of a run's verdict: Class is refused, warning, info
// or ok.
type status struct{ Class, Text string }

type section struct {
	Heading string
	Note    string
	Chart   render.ChartSnippet
}

type table struct {
	Caption string
	Head    []string
	Rows    [][]string
	Hrefs   []string // where a row's first cell links, if it does
}

// figureRow is a figure in the index: its page, what it shows, its verdicts.
type figureRow struct {
	Href, Title string
	Runs        int
	Verdict     string
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
nav { font-size: .9em; line-height: 1.6; border-bottom: 1px solid #ddd; padding-bottom: .4em; }
nav a { margin-right: .8em; } nav .group { color: #555; margin-right: .5em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
.PASS { color: #06660c; font-weight: bold; } .FAIL { color: #b00020; font-weight: bold; }
.note { color: #555; font-size: .9em; }
details summary { color: #555; cursor: pointer; font-size: .9em; }
.multiples { display: flex; flex-wrap: wrap; gap: 6px; }
.status { padding: .4em .7em; margin: .4em 0; border-left: 4px solid; }
.status.refused { border-color: #b00020; background: #fdecea; font-weight: bold; }
.status.warning { border-color: #e65100; background: #fff4e5; }
.status.info { border-color: #3b6fc6; background: #eef3fb; }
.status.ok { border-color: #2e7d32; background: #edf7ee; }
</style>
</head>
<body>
<nav>{{range .Nav}}<div>{{range .}}{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}<span class="group">{{.Text}}</span>{{end}}{{end}}</div>{{end}}</nav>
<h1>{{.Title}}</h1>
{{if .Subtitle}}<p class="note">{{.Subtitle}}</p>{{end}}
{{range .Status}}<p class="status {{.Class}}">{{.Text}}</p>
{{end}}{{if .Thresholds}}<table id="thresholds"><caption>Thresholds</caption><tr><th>threshold</th><th>verdict</th><th>measured</th></tr>
{{range .Thresholds}}<tr><td>{{.Threshold}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td class="num">{{.MeasuredText}}</td></tr>
{{end}}</table>{{end}}
{{range .Lead}}<table><caption>{{.Caption}}</caption><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Claims}}<table id="claims">
<tr><th>claim</th><th>verdict</th><th>published</th><th>measured</th><th>threshold</th><th>margin</th><th>claim as published</th></tr>
{{range .Claims}}<tr><td>{{with index $.Pages .Figure}}<a href="{{.}}">{{end}}{{.ID}}{{if index $.Pages .Figure}}</a>{{end}}</td><td class="{{if .Pass}}PASS{{else}}FAIL{{end}}">{{if .Pass}}PASS{{else}}FAIL{{end}}</td><td class="num">{{.PublishedText}}</td><td class="num">{{value .Measured .Unit}}</td><td>{{.Tolerance}}</td><td class="num">{{.MarginText}}</td><td>{{.Text}}{{if .DecidedBy}} <span class="note">[decided by the {{.DecidedBy}}]</span>{{end}}{{if .Note}}<br><span class="note">{{.Note}}</span>{{end}}<details><summary>how it is checked</summary><span class="note">{{.Reading}}{{if .Detail}}; {{.Detail}}{{end}}</span></details></td></tr>
{{end}}</table>{{end}}
{{range $i, $s := .Sections}}<h2>{{$s.Heading}}</h2>{{if $s.Note}}<p class="note">{{$s.Note}}</p>{{end}}
{{safeHTML $s.Chart.Element}}
{{if and (eq $i 0) $.Choices}}<h2>Choices where the case study is silent</h2><ul>{{range $.Choices}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}
{{if .Figures}}<h2>Figures</h2><table id="figures"><tr><th>figure</th><th>runs</th><th>claims</th></tr>
{{range .Figures}}<tr><td><a href="{{.Href}}">{{.Title}}</a></td><td class="num">{{.Runs}}</td><td>{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{range $t := .Tables}}<table><caption>{{$t.Caption}}</caption><tr>{{range $t.Head}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := $t.Rows}}<tr>{{range $j, $c := $row}}<td>{{if and (eq $j 0) $t.Hrefs}}<a href="{{index $t.Hrefs $i}}">{{$c}}</a>{{else}}{{$c}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Paras}}<h2>How these results were made</h2>{{range .Paras}}<p>{{.}}</p>{{end}}{{end}}
{{range .Sections}}{{safeHTML .Chart.Script}}
{{end}}
</body>
</html>
`))

func (p *page) write(w io.Writer) error { return pageTmpl.Execute(w, p) }

// initOpts returns the options every chart shares: a fixed ID, so pages
// are the same for the same results, assets from the report folder, and
// SVG so a browser (or a test) can see what was drawn.
func initOpts(id string, width, height int) charts.GlobalOpts {
	return charts.WithInitializationOpts(opts.Initialization{
		ChartID: id, AssetsHost: "assets/", Renderer: "svg", Width: px(width), Height: px(height), PageTitle: "tablebench",
	})
}

func px(n int) string { return strconv.Itoa(n) + "px" }

// frame is a chart's size, title and legend, fixed before its series are
// drawn: the legend is laid out in as many rows as its names need, never
// paged (a paged legend hides series), and the plot starts below it.
type frame struct {
	id, title    string
	width, plot  int      // px: the chart's width, the plot area's height
	left, right  int      // px: room for the axes' labels
	legend       []string // the series names the legend shows; nil: no legend
	small        bool     // a panel of small multiples: smaller title, no axis names
	band         int      // px kept between the title and the plot, for a color scale
	xName, yName string
	xType        string // value, category or log
}

// Text widths are estimated, not measured: echarts' 12 px sans-serif runs
// about 7 px a character at most for these labels.
const charPx = 7

// legendRows returns how many rows echarts wraps a legend of names into
// in a width.
func legendRows(names []string, width int) int {
	rows, used := 1, 0
	for _, n := range names {
		w := 25 + 5 + charPx*utf8.RuneCountInString(n) + 10 // symbol, gap, text, item gap
		if used > 0 && used+w > width {
			rows, used = rows+1, 0
		}
		used += w
	}
	return rows
}

// opts returns the frame's global options; its height follows from the
// legend's rows.
func (f frame) opts() []charts.GlobalOpts {
	titleSize, top := 16, 40
	if f.small {
		titleSize, top = 13, 28
	}
	legendTop := top
	if len(f.legend) > 0 {
		top += 24 * legendRows(f.legend, f.width-20)
	}
	top += 12 + f.band // the top tick's label, and any scale
	title := wrap(f.title, (f.width-20)/(titleSize/2+1))
	top += (titleSize + 6) * strings.Count(title, "\n")
	bottom := 30
	if f.xName != "" {
		bottom = 55
	}
	o := []charts.GlobalOpts{
		initOpts(f.id, f.width, top+f.plot+bottom),
		charts.WithTitleOpts(opts.Title{Title: title, TitleStyle: &opts.TextStyle{FontSize: titleSize, LineHeight: titleSize + 6}}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(len(f.legend) > 0), Top: px(legendTop), Type: "plain"}),
		charts.WithGridOpts(opts.Grid{Top: px(top), Left: px(f.left), Right: px(f.right), Bottom: px(bottom)}),
		charts.WithXAxisOpts(opts.XAxis{Name: f.xName, Type: f.xType, NameLocation: "middle", NameGap: 30}),
		f.y(opts.YAxis{Type: "value"}),
		charts.WithAnimation(false),
	}
	return o
}

// y sets the frame's left axis: named along its side, where a long name
// cannot run off the chart.
func (f frame) y(a opts.YAxis) charts.GlobalOpts {
	if a.Name == "" {
		a.Name = f.yName
	}
	a.NameLocation, a.NameGap = "middle", f.left-12
	return charts.WithYAxisOpts(a)
}

// y2 is a right axis of the frame, named along its side.
func (f frame) y2(a opts.YAxis) opts.YAxis {
	a.Position, a.NameLocation, a.NameGap = "right", "middle", f.right-20
	return a
}

// wrap breaks a title into lines of at most n characters, at spaces, so
// no title runs off its chart.
func wrap(title string, n int) string {
	if utf8.RuneCountInString(title) <= n {
		return title
	}
	if i := strings.LastIndex(title, ", "); i > 0 && i < n && utf8.RuneCountInString(title[i+2:]) <= n {
		return title[:i+1] + "\n" + title[i+2:] // a run's name before its x
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(title) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > n {
			lines, line = append(lines, line), w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// wide is the frame of a chart across the page.
func wide(id, title, xName, yName, xType string, legend []string) frame {
	return frame{id: id, title: title, width: 960, plot: 360, left: 80, right: 80, legend: legend, xName: xName, yName: yName, xType: xType}
}

// common returns a chart across the page with a legend of names.
func common(id, title, xName, yName, xType string, legend []string) []charts.GlobalOpts {
	return wide(id, title, xName, yName, xType, legend).opts()
}

// figureView is what one figure page shows: the figure's drawable data, the
// runs it draws from, its claims and the figure it may repeat.
type figureView struct {
	Figure results.FigureData
	Runs   []*results.Run // the figure's runs, in catalog order
	Claims []results.CheckedClaim
	Twin   *results.FigureData // the figure this one may repeat, if drawn
}

// lineStyles keep series apart: each its own dash and marker, and where
// series coincide the first drawn wide and pale under the others.
var (
	dashes  = []string{"solid", "dashed", "dotted"}
	symbols = []string{"circle", "triangle", "rect", "diamond", "roundRect", "pin"}
)

func lineStyle(i int, coinciding bool) []charts.SeriesOpts {
	width, size, opacity := float32(2), 8, float32(1)
	if i == 0 && coinciding {
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
func twinSeries(f *figureView) []results.Series {
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
func coincideNote(f *figureView) string {
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

// published is how a published number is drawn: dark, so it stands apart
// from every series' colour, with its number written beside it.
const publishedColor = "#222222"

// marksOn returns the marks of a figure's claims drawn on one axis.
func marksOn(claims []results.CheckedClaim, on string) []results.Mark {
	var out []results.Mark
	for _, c := range claims {
		for _, m := range c.Marks {
			if m.On == on {
				out = append(out, m)
			}
		}
	}
	return out
}

// markOpts draws published numbers on a series: a point where one run
// measured it, a level across the chart where it bounds several. A point
// whose number a level already writes is drawn without a second label; a
// point in the right part of the chart (from right on) is labelled on its
// left, so the label stays inside the chart.
// A prefix names the series where a chart of several would leave it unclear.
func markOpts(marks []results.Mark, point func(m results.Mark) []any, right float64, prefix string) []charts.SeriesOpts {
	var points []opts.MarkPointNameCoordItem
	var levels []opts.MarkLineNameYAxisItem
	leveled := map[float64]bool{}
	for _, m := range marks {
		if m.X == nil {
			levels = append(levels, opts.MarkLineNameYAxisItem{Name: m.Label(), YAxis: m.Value})
			leveled[m.Value] = true
		}
	}
	for _, m := range marks {
		if m.X == nil {
			continue
		}
		side := "right"
		if *m.X >= right {
			side = "left"
		}
		label := &opts.Label{Show: opts.Bool(true), Position: side, Formatter: prefix + m.Label(), Color: publishedColor, BackgroundColor: "rgba(255,255,255,0.85)"}
		if leveled[m.Value] {
			label = &opts.Label{Show: opts.Bool(false)}
		}
		points = append(points, opts.MarkPointNameCoordItem{Name: m.Label(), Coordinate: point(m), Symbol: "diamond", SymbolSize: 13,
			ItemStyle: &opts.ItemStyle{Color: "rgba(0,0,0,0)", BorderColor: publishedColor, BorderWidth: 2}, Label: label})
	}
	var out []charts.SeriesOpts
	if len(points) > 0 {
		out = append(out, charts.WithMarkPointNameCoordItemOpts(points...))
	}
	if len(levels) > 0 {
		out = append(out, charts.WithMarkLineNameYAxisItemOpts(levels...),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
				Label:     &opts.Label{Show: opts.Bool(true), Position: "insideStartTop", Formatter: "{b}", Color: publishedColor},
				LineStyle: &opts.LineStyle{Type: "dashed", Width: 1.5, Color: publishedColor}}))
	}
	return out
}

// marksFor returns the marks on a series: those measured on it, and those
// of no one series on the first.
func marksFor(marks []results.Mark, series string, first bool) []results.Mark {
	var out []results.Mark
	for _, m := range marks {
		if m.Series == series || m.Series == "" && first {
			out = append(out, m)
		}
	}
	return out
}

func xy(m results.Mark) []any { return []any{*m.X, m.Value} }

// rightPart returns the x from which a point is in the right third of
// the series' x range.
func rightPart(series []results.Series) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
		}
	}
	return lo + 0.67*(hi-lo)
}

// fitAxis says whether a y axis should fit its data rather than start at
// 0: when every value is positive and the lowest is above 60% of the
// highest, a zero baseline squeezes the differences into one band.
func fitAxis(series []results.Series, marks []results.Mark) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	for _, m := range marks {
		lo, hi = math.Min(lo, m.Value), math.Max(hi, m.Value)
	}
	return lo > 0 && lo > 0.6*hi
}

// mainChart renders the figure as it was published, with the numbers the
// case study printed marked beside what was measured.
func mainChart(f *figureView) render.ChartSnippet {
	fig := &f.Figure
	id := jsName(fig.Name) + "_main"
	switch fig.Chart {
	case results.ChartHistogram:
		return histogramChart(id, fig.Title, f.Runs, seriesNames(f), marksOn(f.Claims, results.MarkLatency))
	case results.ChartTimeline:
		return timelineChart(id, fig.Title, f.Runs, marksOn(f.Claims, results.MarkX))
	case results.ChartDual:
		l := charts.NewLine()
		fr := wide(id, fig.Title, fig.XLabel, fig.YLabel, "value", []string{"successful entities/s", "% throttled"})
		l.SetGlobalOptions(fr.opts()...)
		l.ExtendYAxis(fr.y2(opts.YAxis{Name: fig.Y2Label, Type: "value", Min: 0}))
		y, y2 := marksOn(f.Claims, results.MarkY), marksOn(f.Claims, results.MarkY2)
		right := rightPart(f.Figure.Series)
		for i, s := range f.Figure.Series {
			var ok, thr []opts.LineData
			for _, p := range s.Points {
				ok = append(ok, opts.LineData{Value: []any{p.X, round(p.Y)}})
				thr = append(thr, opts.LineData{Value: []any{p.X, round(p.Y2)}})
			}
			l.AddSeries("successful entities/s", ok, append([]charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true)})},
				markOpts(marksFor(y, s.Name, i == 0), xy, right, "")...)...)
			l.AddSeries("% throttled", thr, append([]charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1, ShowSymbol: opts.Bool(true)})},
				markOpts(marksFor(y2, s.Name, i == 0), xy, right, "")...)...)
		}
		return l.RenderSnippet()
	}
	series := f.Figure.Series
	for _, t := range twinSeries(f) {
		t.Name = fmt.Sprintf("Figure %d: %s", f.Twin.ID, t.Name)
		series = append(series, t)
	}
	var names []string
	for _, s := range series {
		names = append(names, s.Name)
	}
	marks := marksOn(f.Claims, results.MarkY)
	coinciding := coincideNote(f) != ""
	yName := fig.YLabel
	fit := fitAxis(series, marks)
	if fit {
		yName += " (axis fitted to the data, not from 0)"
	}
	l := charts.NewLine()
	fr := wide(id, fig.Title, fig.XLabel, yName, "value", names)
	l.SetGlobalOptions(fr.opts()...)
	if fit {
		l.SetGlobalOptions(fr.y(opts.YAxis{Type: "value", Scale: opts.Bool(true)}))
	}
	for i, s := range series {
		var data []opts.LineData
		for _, p := range s.Points {
			data = append(data, opts.LineData{Value: []any{p.X, round(p.Y)}})
		}
		l.AddSeries(s.Name, data, append(lineStyle(i, coinciding), markOpts(marksFor(marks, s.Name, i == 0), xy, rightPart(series), "")...)...)
	}
	return l.RenderSnippet()
}

func seriesNames(f *figureView) []string {
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
// rest. A published latency is a line at its bin.
func histogramChart(id, title string, runs []*results.Run, names []string, marks []results.Mark) render.ChartSnippet {
	hi := 0.0
	for _, r := range runs {
		hi = math.Max(hi, 1.25*float64(r.Merged("/ok").ValueAtQuantile(99))/1000)
	}
	for _, m := range marks {
		hi = math.Max(hi, 1.1*m.Value)
	}
	width := niceStep(hi / 40)
	n := int(math.Ceil(hi/width)) + 1
	var labels []string
	for i := range n - 1 {
		labels = append(labels, strconv.FormatFloat(float64(i)*width, 'f', -1, 64))
	}
	labels = append(labels, "≥"+strconv.FormatFloat(float64(n-1)*width, 'f', -1, 64))
	b := charts.NewBar()
	b.SetGlobalOptions(common(id, title, "latency (ms), bins of "+strconv.FormatFloat(width, 'f', -1, 64)+" ms", "requests", "category", names)...)
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
		so := []charts.SeriesOpts{charts.WithBarChartOpts(opts.BarChart{BarGap: "0%"})}
		var lines []opts.MarkLineNameXAxisItem
		for _, m := range marks {
			if m.Series == names[i] {
				lines = append(lines, opts.MarkLineNameXAxisItem{Name: fmt.Sprintf("%s: %s (p%g)", names[i], m.Label(), m.Percentile), XAxis: labels[min(int(m.Value/width), n-1)]})
			}
		}
		if len(lines) > 0 {
			so = append(so, charts.WithMarkLineNameXAxisItemOpts(lines...), charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
				Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "insideEndTop", Color: publishedColor},
				LineStyle: &opts.LineStyle{Type: "dashed", Width: 1.5, Color: publishedColor}}))
		}
		b.AddSeries(names[i], data, so...)
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

// levels are the percentiles drawn against a figure's x: few enough to
// tell apart by colour, the tail included.
var levels = []float64{50, 90, 99, 99.9, 100}

// levelColors tell the percentiles apart and read in order, median to max.
var levelColors = []string{"#1b9e77", "#7570b3", "#d95f02", "#e7298a", "#444444"}

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

func levelName(p float64) string {
	if p == 100 {
		return "max"
	}
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

func latencyAt(r *results.Run, p float64) float64 {
	h := r.Merged("/ok")
	v := float64(h.ValueAtQuantile(p)) / 1000
	if p == 100 {
		v = float64(h.Max()) / 1000
	}
	return round(math.Max(v, 0.001))
}

// percentileChart draws the latency percentiles of a figure's runs. Where
// the figure's x is a quantity (VMs, threads, batch size), each series gets
// a panel of p50, p90, p99, p99.9 and max against that x, so the tail's
// growth with load reads directly; otherwise (histograms, timelines) each
// run is a curve over the percentiles.
func percentileChart(id string, f *figureView) render.ChartSnippet {
	marks := marksOn(f.Claims, results.MarkLatency)
	if f.Figure.Chart == results.ChartHistogram || f.Figure.Chart == results.ChartTimeline {
		return percentileCurves(id, f, marks)
	}
	names, groups := bySeries(f.Runs)
	width := 477
	if len(names) == 1 {
		width = 960
	}
	var legend []string
	for _, p := range levels {
		legend = append(legend, levelName(p))
	}
	var snips []render.ChartSnippet
	for i, name := range names {
		title := name
		if len(names) == 1 {
			title = "Latency percentiles against " + xWords(f.Figure.XLabel)
		}
		fr := frame{id: fmt.Sprintf("%s_%d", id, i), title: title, width: width, plot: 300, left: 66, right: 30, legend: legend,
			xName: f.Figure.XLabel, yName: "latency (ms, log scale)", xType: "value"}
		l := charts.NewLine()
		l.SetGlobalOptions(fr.opts()...)
		l.SetGlobalOptions(fr.y(opts.YAxis{Type: "log"}))
		for j, p := range levels {
			var data []opts.LineData
			for _, r := range groups[name] {
				data = append(data, opts.LineData{Value: []any{r.X, latencyAt(r, p)}})
			}
			so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true)}),
				charts.WithLineStyleOpts(opts.LineStyle{Color: levelColors[j], Width: 2}), charts.WithItemStyleOpts(opts.ItemStyle{Color: levelColors[j]})}
			var mine []results.Mark
			for _, m := range marksFor(marks, name, i == 0) {
				if m.Percentile == p && m.X != nil {
					mine = append(mine, m)
				}
			}
			l.AddSeries(levelName(p), data, append(so, markOpts(mine, xy, rightPart(f.Figure.Series), "")...)...)
		}
		snips = append(snips, l.RenderSnippet())
	}
	if len(snips) == 1 {
		return snips[0]
	}
	return multiples(snips)
}

// percentileCurves draws each run's latency over the percentiles, one
// curve per run, with a published latency at its percentile.
func percentileCurves(id string, f *figureView, marks []results.Mark) render.ChartSnippet {
	var labels, legend []string
	for _, p := range percentiles {
		labels = append(labels, strings.TrimPrefix(levelName(p), "p"))
	}
	for _, r := range f.Runs {
		legend = append(legend, runLabel(f, r))
	}
	l := charts.NewLine()
	fr := wide(id, "Latency percentiles of each run", "percentile", "latency (ms, log scale)", "category", legend)
	l.SetGlobalOptions(fr.opts()...)
	l.SetGlobalOptions(fr.y(opts.YAxis{Type: "log"}))
	l.SetXAxis(labels)
	for i, r := range f.Runs {
		var data []opts.LineData
		for _, p := range percentiles {
			data = append(data, opts.LineData{Value: latencyAt(r, p)})
		}
		mine := marksFor(marks, r.Series, false)
		so := markOpts(mine, func(m results.Mark) []any {
			return []any{strings.TrimPrefix(levelName(m.Percentile), "p"), m.Value}
		}, math.Inf(1), legend[i]+": ")
		l.AddSeries(legend[i], data, append([]charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true)})}, so...)...)
	}
	return l.RenderSnippet()
}

// overlayMax is the most runs drawn over one another per second: past it
// their noise tangles, and each run gets a small panel of its own.
const overlayMax = 2

// overTimeChart draws a per-second value of each run: one chart for a run
// or two, else one small panel per run on a shared scale.
func overTimeChart(id, title, yName string, f *figureView, value func(results.Interval) float64) render.ChartSnippet {
	runs := f.Runs
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
	if len(runs) <= overlayMax {
		var legend []string
		for _, r := range runs {
			legend = append(legend, runLabel(f, r))
		}
		l := charts.NewLine()
		l.SetGlobalOptions(common(id, title, "second (warm-up included)", yName, "value", legend)...)
		for i, r := range runs {
			l.AddSeries(legend[i], points(r), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
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
		fr := frame{id: fmt.Sprintf("%s_%d", id, i), title: runLabel(f, r), width: 316, plot: 130, left: 55, right: 15, small: true, xType: "value"}
		l.SetGlobalOptions(fr.opts()...)
		l.SetGlobalOptions(fr.y(opts.YAxis{Type: "value", Min: 0, Max: niceCeil(top)}))
		l.AddSeries(runLabel(f, r), points(r), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
		snips = append(snips, l.RenderSnippet())
	}
	return multiples(snips)
}

// niceCeil rounds a chart's top up to a round number near it, so small
// multiples share a scale that their data fills.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// wholeSeconds returns how many whole seconds of a run, warm-up included,
// its intervals cover; the seconds after are partial.
func wholeSeconds(r *results.Run) int {
	return int((r.Setup.Warmup.Seconds() + r.MeasuredSec) + 1e-9)
}

// xWords is a figure's x label without its unit: "batch size".
func xWords(label string) string {
	name, _, _ := strings.Cut(label, " (")
	return name
}

// xText names an x of a figure in the figure's own words: "16 XL VMs",
// "50 threads in all", "batch size 20", "client timeout 45 ms".
func xText(label string, x float64) string {
	n := strconv.FormatFloat(x, 'f', -1, 64)
	name, unit, hasUnit := strings.Cut(label, " (")
	unit = strings.TrimSuffix(unit, ")")
	switch {
	case name == "":
		return "x = " + n
	case hasUnit && unit == "entities":
		return name + " " + n
	case hasUnit:
		return name + " " + n + " " + unit
	}
	if x == 1 {
		name = strings.NewReplacer("VMs", "VM", "threads", "thread").Replace(name)
	}
	return n + " " + name
}

// runLabel names a run as its figure does: its series, and its x in the
// figure's words where the series has more than one run.
func runLabel(f *figureView, r *results.Run) string {
	if r.Series == "" {
		return r.ID
	}
	names, groups := bySeries(f.Runs)
	if len(groups[r.Series]) == 1 {
		return r.Series
	}
	if len(names) == 1 {
		return xText(f.Figure.XLabel, r.X)
	}
	return r.Series + ", " + xText(f.Figure.XLabel, r.X)
}

// figurePage builds a figure's page: its verdicts first, then the figure,
// what was chosen where the case study is silent, and each run's detail.
func figurePage(f *figureView, nav [][]link) *page {
	fig := &f.Figure
	p := &page{Title: fmt.Sprintf("Figure %d: %s", fig.ID, fig.Title), Nav: nav, Claims: f.Claims}
	if fig.ID >= 100 {
		p.Title = fig.Title
	}
	if n := len(f.Claims); n > 0 {
		pass := 0
		for _, c := range f.Claims {
			if c.Pass {
				pass++
			}
		}
		p.Subtitle = fmt.Sprintf("%d of %d claims pass. Diamonds and dashed lines on the charts mark the numbers the case study published.", pass, n)
	}
	p.Choices = fig.Choices
	if fig.ClientBound != "" {
		p.Subtitle = strings.TrimSpace(p.Subtitle + " " + clientBoundNote(f)) // beside the verdicts: it says what the numbers describe
	}
	p.Sections = append(p.Sections, section{Heading: "The figure", Note: coincideNote(f), Chart: mainChart(f)})
	if len(f.Runs) > 0 {
		perRun := ""
		if len(f.Runs) > overlayMax {
			perRun = fmt.Sprintf(" %d runs: one panel per run, all on one scale; x is the second of the run, warm-up included.", len(f.Runs))
		}
		p.Sections = append(p.Sections,
			section{Heading: "Latency percentiles", Note: "Successful requests, from each run's HDR histogram.", Chart: percentileChart(jsName(fig.Name)+"_pct", f)},
			section{Heading: "Throughput over time", Note: strings.TrimSpace(perRun), Chart: overTimeChart(jsName(fig.Name)+"_tput", "Successful entities per second", "entities/s", f,
				func(iv results.Interval) float64 { return float64(iv.Entities) })},
			section{Heading: "Throttling over time", Note: "Requests answered 503 ServerBusy, 429 RequestRateTooLarge or 500 OperationTimedOut, per second." + perRun,
				Chart: overTimeChart(jsName(fig.Name)+"_thr", "Throttled requests per second", "requests/s", f,
					func(iv results.Interval) float64 { return float64(iv.Throttled) })})
		if chargesRU(f.Runs) {
			p.Sections = append(p.Sections, section{Heading: "Request units over time", Note: "Request units the service charged per second (x-ms-request-charge), refused requests' included." + perRun,
				Chart: overTimeChart(jsName(fig.Name)+"_ru", "Request units charged per second", "RU/s", f,
					func(iv results.Interval) float64 { return iv.RequestUnits })})
		}
		if sec, ok := keySpaceSection(f); ok {
			p.Sections = append(p.Sections, sec)
		}
	}
	t := table{Caption: "Runs", Head: []string{"series", "x", "entities/s", "requests/s", "throttled", "p50 ms", "p99 ms", "errors", "run"}}
	ru := chargesRU(f.Runs)
	if ru {
		t.Head = slices.Insert(t.Head, 5, "RU/s", "retry-after p99 ms")
	}
	for _, r := range f.Runs {
		row := []string{r.Series, strconv.FormatFloat(r.X, 'g', -1, 64), fmt.Sprintf("%.1f", r.EntitiesPerSec), fmt.Sprintf("%.1f", r.RequestsPerSec),
			fmt.Sprintf("%.4f%%", r.ThrottledPct), fmt.Sprintf("%.1f", r.LatencyMs.P50), fmt.Sprintf("%.1f", r.LatencyMs.P99), errorsText(r.Errors), r.ID}
		if ru {
			ra := "-"
			if r.RetryAfterMs != nil {
				ra = fmt.Sprintf("%.0f", r.RetryAfterMs.P99)
			}
			row = slices.Insert(row, 5, fmt.Sprintf("%.1f", r.RequestUnitsPerSec), ra)
		}
		t.Rows = append(t.Rows, row)
	}
	p.Tables = append(p.Tables, t)
	return p
}

// clientBoundNote says, as information, that the figure measures its
// modelled client on purpose, and how many of its runs saturated it.
func clientBoundNote(f *figureView) string {
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
func claimsChart(claims []results.CheckedClaim) render.ChartSnippet {
	b := charts.NewBar()
	fr := wide("claims_margin", "Margin of each claim to its threshold: right passes, left fails", "margin (% of the threshold; bars stop at 100)", "claim", "value", nil)
	fr.plot = max(200, 22*len(claims))
	b.SetGlobalOptions(fr.opts()...)
	b.SetGlobalOptions(fr.y(opts.YAxis{Type: "category"}))
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
		text := ""
		if v != *c.Margin { // a bar stopped at the chart's edge: its label inside it, off the claims' names
			pos, text = "inside", "#ffffff"
		}
		bars = append(bars, opts.BarData{Value: round(v), ItemStyle: &opts.ItemStyle{Color: color},
			Label: &opts.Label{Show: opts.Bool(true), Position: pos, Color: text, Formatter: fmt.Sprintf("%+.1f%%", *c.Margin)}})
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
	figures []figureView
	Claims  []results.CheckedClaim
}

// Write renders the report into dir: index.html, one page per figure and
// the embedded echarts script in dir/assets.
func (r *Report) Write(dir string) error {
	if err := copyAssets(dir); err != nil {
		return err
	}
	nav := navRows(r.figures)
	idx := &page{Title: r.Title, Nav: nav, Paras: r.Summary, Claims: r.Claims, Pages: map[int]string{}}
	if len(r.Claims) > 0 {
		idx.Subtitle = passText(r.Claims, "published claims pass") + "."
		idx.Sections = append(idx.Sections, section{Heading: "Claims at a glance", Chart: claimsChart(r.Claims)})
	}
	for _, f := range r.figures {
		verdict := "none checked"
		if len(f.Claims) > 0 {
			verdict = passText(f.Claims, "pass")
		}
		idx.Pages[f.Figure.ID] = f.Figure.Name + ".html"
		title := f.Figure.Title
		if f.Figure.ID < 100 {
			title = fmt.Sprintf("Figure %d: %s", f.Figure.ID, title)
		}
		idx.Figures = append(idx.Figures, figureRow{Href: f.Figure.Name + ".html", Title: title, Runs: len(f.Runs), Verdict: verdict})
	}
	if err := writePage(filepath.Join(dir, "index.html"), idx); err != nil {
		return err
	}
	for i := range r.figures {
		f := &r.figures[i]
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

// passText counts the claims that pass: "3 of 4 pass".
func passText(claims []results.CheckedClaim, what string) string {
	pass := 0
	for _, c := range claims {
		if c.Pass {
			pass++
		}
	}
	return fmt.Sprintf("%d of %d %s", pass, len(claims), what)
}

// figLabel names a figure's page where a short name is wanted: the case
// study's by number, any other by what it shows.
func figLabel(f results.FigureData) string {
	if f.ID < 100 {
		return fmt.Sprintf("Fig %d", f.ID)
	}
	return f.Title
}

// navRows links every page by what it shows: the case study's figures by
// number on one row; other figures whose titles share a topic before a
// colon on a row of their own, named by the rest; a figure alone on its
// topic by the topic.
func navRows(figs []figureView) [][]link {
	rows := [][]link{{{Href: "index.html", Text: "index"}}}
	var study []link
	topic := func(f results.FigureData) (string, string) {
		t, rest, _ := strings.Cut(f.Title, ": ")
		return t, rest
	}
	for i := 0; i < len(figs); {
		f := figs[i].Figure
		if f.ID < 100 {
			study = append(study, link{Href: f.Name + ".html", Text: figLabel(f)})
			i++
			continue
		}
		t, _ := topic(f)
		j := i + 1
		for j < len(figs) && figs[j].Figure.ID >= 100 {
			if u, _ := topic(figs[j].Figure); u != t {
				break
			}
			j++
		}
		if j == i+1 {
			rows = append(rows, []link{{Href: f.Name + ".html", Text: t}})
		} else {
			row := []link{{Text: t + ":"}}
			for _, g := range figs[i:j] {
				_, rest := topic(g.Figure)
				row = append(row, link{Href: g.Figure.Name + ".html", Text: rest})
			}
			rows = append(rows, row)
		}
		i = j
	}
	if len(study) > 0 {
		rows[0] = append(rows[0], study...)
	}
	return rows
}

func writePage(path string, p *page) error {
	return results.WriteFileAtomic(path, p.write)
}

// writeCSV writes a figure's plotted series and, for each point, its run's
// value of every metric that has a column (results.Metrics: latency of
// successful requests). y2 is written only for a figure that draws it.
func writeCSV(w io.Writer, f *figureView) error {
	cw := csv.NewWriter(w)
	dual := f.Figure.Chart == results.ChartDual
	head := []string{"series", "x", "y"}
	if dual {
		head = append(head, "y2")
	}
	head = append(head, "run")
	var cols []*results.Metric
	for i := range results.Metrics {
		if m := &results.Metrics[i]; m.Column != "" {
			cols = append(cols, m)
			head = append(head, m.Column)
		}
	}
	cw.Write(head)
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
			row := []string{s.Name, g(p.X), g(p.Y)}
			if dual {
				row = append(row, g(p.Y2))
			}
			row = append(row, p.RunID)
			for _, m := range cols {
				row = append(row, g(m.Value(r, p.X)))
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// Build assembles the report's figures from a result set and the figures
// drawn from it.
func Build(title string, set *results.Set, figs []results.FigureData, claims []results.CheckedClaim) *Report {
	byID := map[string]*results.Run{}
	for _, r := range set.Runs {
		byID[r.ID] = r
	}
	rep := &Report{Title: title, Set: set, Claims: claims}
	for _, f := range figs {
		fv := figureView{Figure: f}
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
			rep.figures = append(rep.figures, fv)
		}
	}
	return rep
}

// timelineChart draws each run's successful entities/s per second (blue,
// left axis) and its throttled requests per second (red, right axis), with
// the balancer's splits and moves as dashed lines: one panel per run, on
// shared scales, so no run's events or throttling hide another's.
func timelineChart(id, title string, runs []*results.Run, marks []results.Mark) render.ChartSnippet {
	var topOK, topThr float64
	for _, r := range runs {
		for _, iv := range r.Intervals {
			topOK, topThr = math.Max(topOK, float64(iv.Entities)), math.Max(topThr, float64(iv.Throttled))
		}
	}
	var snips []render.ChartSnippet
	for i, r := range runs {
		pid, ptitle, plot := fmt.Sprintf("%s_%d", id, i), r.Series, 220
		if len(runs) == 1 {
			pid, ptitle, plot = id, title, 340
		}
		fr := wide(pid, ptitle, "second of the run (warm-up included); dashed: the balancer's splits and moves", "entities/s", "value", []string{"entities/s", "throttled requests/s"})
		fr.plot = plot
		l := charts.NewLine()
		l.SetGlobalOptions(fr.opts()...)
		l.SetGlobalOptions(fr.y(opts.YAxis{Type: "value", Min: 0, Max: niceCeil(topOK)}))
		l.ExtendYAxis(fr.y2(opts.YAxis{Name: "throttled requests/s", Type: "value", Min: 0, Max: niceCeil(topThr)}))
		var ok, thr []opts.LineData
		end := wholeSeconds(r)
		for _, iv := range r.Intervals {
			if iv.Second >= end {
				continue
			}
			ok = append(ok, opts.LineData{Value: []any{iv.Second, iv.Entities}})
			thr = append(thr, opts.LineData{Value: []any{iv.Second, iv.Throttled}})
		}
		so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 1.5, Color: okColor}), charts.WithItemStyleOpts(opts.ItemStyle{Color: okColor})}
		if ev := eventMarks(r, end); len(ev) > 0 {
			so = append(so, charts.WithMarkLineNameXAxisItemOpts(ev...),
				charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "end"},
					LineStyle: &opts.LineStyle{Type: "dashed", Color: "#555555"}}))
		}
		l.AddSeries("entities/s", ok, so...)
		tso := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), YAxisIndex: 1}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 1, Color: throttleColor}), charts.WithItemStyleOpts(opts.ItemStyle{Color: throttleColor}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Color: throttleColor, Opacity: opts.Float(0.25)})}
		var pub []opts.MarkLineNameXAxisItem
		for _, m := range marksFor(marks, r.Series, i == 0) {
			pub = append(pub, opts.MarkLineNameXAxisItem{Name: m.Label(), XAxis: m.Value})
		}
		if len(pub) > 0 {
			tso = append(tso, charts.WithMarkLineNameXAxisItemOpts(pub...),
				charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "insideEndTop", Color: publishedColor},
					LineStyle: &opts.LineStyle{Type: "dashed", Width: 1.5, Color: publishedColor}}))
		}
		l.AddSeries("throttled requests/s", thr, tso...)
		snips = append(snips, l.RenderSnippet())
	}
	if len(snips) == 1 {
		return snips[0]
	}
	return multiples(snips)
}

// Throughput is blue and throttling red wherever both are drawn.
const (
	okColor       = "#3b6fc6"
	throttleColor = "#d62728"
)

// eventMarks draws every split and move of a run, labelling only the first
// of events close in time with what they were ("split", "2 moves") so that
// labels do not overlap: within a tenth of the run, about the width of a
// label on the chart.
func eventMarks(r *results.Run, seconds int) []opts.MarkLineNameXAxisItem {
	gap := math.Max(10, float64(seconds)/10)
	var out []opts.MarkLineNameXAxisItem
	for i := 0; i < len(r.Events); {
		j, counts, kinds := i, map[string]int{}, []string(nil)
		for ; j < len(r.Events) && r.Events[j].Second-r.Events[i].Second < gap; j++ {
			k := r.Events[j].Kind
			if counts[k] == 0 {
				kinds = append(kinds, k)
			}
			counts[k]++
		}
		var words []string
		for _, k := range kinds {
			if counts[k] > 1 {
				words = append(words, fmt.Sprintf("%d %ss", counts[k], k))
			} else {
				words = append(words, k)
			}
		}
		for e := i; e < j; e++ {
			name := ""
			if e == i {
				name = strings.Join(words, ", ")
			}
			out = append(out, opts.MarkLineNameXAxisItem{Name: name, XAxis: math.Round(r.Events[e].Second)})
		}
		i = j
	}
	return out
}

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

// chargesRU reports whether any run was charged request units: their
// charts and columns appear only then.
func chargesRU(runs []*results.Run) bool {
	for _, r := range runs {
		if r.Totals.RequestUnits > 0 {
			return true
		}
	}
	return false
}
