package charts

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// Cells a key-space chart draws at most: the record keeps more than a
// chart has pixels for, and a page's script carries every cell it draws.
const (
	keyRowsWide, keyColsWide   = 64, 120 // one run across the page
	keyRowsSmall, keyColsSmall = 32, 40  // one of several side by side
)

// heatColors run from few requests (pale) to many (dark blue), so that an
// idle stretch of the key space stays white.
var heatColors = []string{"#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"}

// KeySpace draws where runs' requests landed in the PartitionKey space over
// time, as Bigtable's Key Visualizer does: keys in key order up the chart
// (ranges of keys where there are more keys than rows), the run's seconds
// across it, each cell's color its requests per second, red circles where
// requests were throttled (the larger, the greater the cell's throttled
// share), and the engine balancer's splits (▲) and moves (◆) where and when
// they acted; on the engine, dashed lines mark where its range partitions
// began at the end of the run. One run gets a chart across the page;
// several (a sweep's, a figure's, candidates') get small charts side by
// side on one color scale, each named by label. Runs without a heat map
// (older records) are left out; none gives an empty snippet.
func KeySpace(id string, runs []*results.Run, label func(*results.Run) string) render.ChartSnippet {
	var drawn []*results.Run
	for _, r := range runs {
		if r.Heatmap != nil && len(r.Heatmap.Rows)+len(r.Heatmap.NoKey) > 0 {
			drawn = append(drawn, r)
		}
	}
	if len(drawn) == 0 {
		return render.ChartSnippet{}
	}
	small := len(drawn) > 1
	rows, cols := keyRowsWide, keyColsWide
	if small {
		rows, cols = keyRowsSmall, keyColsSmall
	}
	maps := make([]*results.Heatmap, len(drawn))
	top := 0.0 // the busiest cell's requests/s, over every run: one scale
	for i, r := range drawn {
		maps[i] = r.Heatmap.Coarsen(rows, cols)
		for _, row := range maps[i].Rows {
			for _, c := range row.Cells {
				top = math.Max(top, float64(c.Requests)/float64(maps[i].ColumnSec))
			}
		}
	}
	top = niceCeil(top)
	if !small {
		return keySpaceChart(id, label(drawn[0]), drawn[0], maps[0], top, false)
	}
	var snips []render.ChartSnippet
	for i, r := range drawn {
		snips = append(snips, keySpaceChart(fmt.Sprintf("%s_%d", id, i), label(r), r, maps[i], top, true))
	}
	return multiples(snips)
}

// keySpaceChart draws one run's heat map h (coarsened from the record's)
// on a color scale up to top requests/s.
func keySpaceChart(id, title string, r *results.Run, h *results.Heatmap, top float64, small bool) render.ChartSnippet {
	fr := frame{id: id, title: title, width: 960, plot: 400, left: 150, right: 110, xName: "second of the run (warm-up included)", yName: "", xType: "category"}
	if small {
		fr = frame{id: id, title: title, width: 316, plot: 190, left: 20, right: 10, small: true, xType: "category", band: 22}
	}
	xs := make([]string, h.Columns)
	for c := range xs {
		xs[c] = fmt.Sprint(h.StartSec + c*h.ColumnSec)
	}
	ys := make([]string, 0, len(h.Rows)+1)   // the axis's labels
	tips := make([]string, 0, len(h.Rows)+1) // the tooltip's: whole ranges
	for _, row := range h.Rows {
		ys = append(ys, rowLabel(row))
		tip := "PartitionKey " + row.Lo
		if row.Hi != row.Lo {
			tip = "PartitionKeys " + row.Lo + " to " + row.Hi
		}
		tips = append(tips, tip)
	}
	noKey := -1
	if len(h.NoKey) > 0 { // requests without a key: a row of their own, below the keys
		noKey = 0
		ys = append([]string{"(no PartitionKey)"}, ys...)
		tips = append([]string{"requests without a PartitionKey"}, tips...)
	}
	if !small { // a few keys get rows of a readable height, not the whole plot
		fr.plot = min(fr.plot, max(120, 30*len(ys)))
	}
	rowAt := func(i int) int { return i + noKey + 1 } // a heat map row's place on the axis

	per := float64(h.ColumnSec)
	var cells []opts.HeatMapData
	var throttled []opts.ScatterData
	add := func(y int, cs results.HeatCells) {
		for _, c := range cs {
			cells = append(cells, opts.HeatMapData{Value: []any{c.Column, y, round(float64(c.Requests) / per), c.Requests, c.OK, c.Throttled}})
			if c.Throttled > 0 {
				throttled = append(throttled, opts.ScatterData{Value: []any{c.Column, y, round(float64(c.Throttled) / float64(c.Requests)), c.Requests, c.OK, c.Throttled}})
			}
		}
	}
	if noKey == 0 {
		add(0, h.NoKey)
	}
	for i, row := range h.Rows {
		add(rowAt(i), row.Cells)
	}

	if !small { // a small panel leaves its symbols to the page's words
		if len(throttled) > 0 {
			fr.legend = append(fr.legend, "throttled")
		}
		for _, ev := range r.Events {
			if name := "balancer " + ev.Kind; (ev.Kind == "split" || ev.Kind == "move") && !slices.Contains(fr.legend, name) {
				fr.legend = append(fr.legend, name)
			}
		}
	}
	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(fr.opts()...)
	yAxis := opts.YAxis{Type: "category", Data: ys, SplitArea: &opts.SplitArea{Show: opts.Bool(false)},
		AxisLabel: &opts.AxisLabel{Show: opts.Bool(!small), FontSize: 11}}
	switch { // a name no longer than its axis
	case small:
	case fr.plot >= 300:
		yAxis.Name = "PartitionKey in key order (a row's first key)"
	default:
		yAxis.Name = "PartitionKey"
	}
	hm.SetGlobalOptions(
		fr.y(yAxis),
		charts.WithXAxisOpts(opts.XAxis{Name: fr.xName, Type: "category", Data: xs, NameLocation: "middle", NameGap: 30, SplitArea: &opts.SplitArea{Show: opts.Bool(false)}}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: opts.FuncOpts(keyTooltip(xs, tips, h.ColumnSec))}),
		charts.WithVisualMapOpts(opts.VisualMap{Type: "continuous", Calculable: opts.Bool(false), Min: 0, Max: float32(top), Dimension: "2",
			Text: []string{fmt.Sprintf("%s requests/s", trimFloat(top)), "0"}, Orient: "horizontal", Right: "10px", Top: visualTop(small),
			InRange: &opts.VisualMapInRange{Color: heatColors}, Show: opts.Bool(true)}),
	)
	so := []charts.SeriesOpts{charts.WithItemStyleOpts(opts.ItemStyle{BorderWidth: 0})}
	lines := rangeLines(r, h, rowAt)
	if len(lines) > 0 {
		so = append(so, charts.WithMarkLineNameYAxisItemOpts(lines...))
	}
	// The end of the warm-up: the record's totals count what follows.
	if w := (int(r.Setup.Warmup.Seconds()) - h.StartSec) / h.ColumnSec; w > 0 && w < len(xs) && len(h.Rows) > 0 {
		so = append(so, charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: "measured from here", XAxis: xs[w]}))
		lines = append(lines, opts.MarkLineNameYAxisItem{})
	}
	if len(lines) > 0 {
		so = append(so, charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			LineStyle: &opts.LineStyle{Type: "dashed", Color: "#555555", Width: 1}, Label: &opts.Label{Show: opts.Bool(!small), Position: "end", Formatter: "{b}", Color: "#333333"}}))
	}
	hm.AddSeries("requests/s", cells, so...)
	if len(throttled) > 0 {
		rowPx := fr.plot / max(len(ys), 1) // a circle no taller than its row, within reason
		hm.Overlap(throttleScatter(throttled, min(max(rowPx, 5), 12)))
	}
	if ev := eventScatter(r, h, rowAt); ev != nil {
		hm.Overlap(ev)
	}
	snip := hm.RenderSnippet()
	// The color scale is the heat map's alone (series 0): the overlaid
	// markers keep their own colors. go-echarts has no field for that, nor
	// for the scale's size.
	snip.Script = strings.Replace(snip.Script, `"visualMap":[{`, fmt.Sprintf(`"visualMap":[{"seriesIndex":0,"itemWidth":12,"itemHeight":%d,`, visualLength(small)), 1)
	// Drawn at once, not a few hundred cells a frame: a page printed or
	// captured at load shows every cell.
	snip.Script = strings.Replace(snip.Script, `"type":"heatmap",`, `"type":"heatmap","progressive":0,`, 1)
	return snip
}

// visualTop places the color scale: beside a wide chart's title, below a
// small one's.
func visualTop(small bool) string {
	if small {
		return "26px"
	}
	return "8px"
}

func visualLength(small bool) int {
	if small {
		return 90
	}
	return 160
}

// trimFloat writes a scale's top without trailing zeros.
func trimFloat(v float64) string { return fmt.Sprint(round(v)) }

// rowLabel names a heat map row on its axis by its first key, shortened
// to fit; the tooltip gives its whole range.
func rowLabel(row results.HeatRow) string {
	const n = 18
	if utf8.RuneCountInString(row.Lo) > n {
		return string([]rune(row.Lo)[:n-1]) + "…"
	}
	return row.Lo
}

// keyTooltip says what a cell holds: its seconds, its key range, and its
// requests by outcome. It is JavaScript inside the chart's options, which
// go-echarts writes as a JSON string: no double quotes and no newlines.
func keyTooltip(xs []string, rows []string, colSec int) string {
	return fmt.Sprintf(`function (p) {
  var v = p.value, xs = %s, ys = %s, w = %d;
  if (p.seriesType !== 'heatmap' && !(p.seriesName === 'throttled')) { return p.name; }
  var t = 'seconds ' + xs[v[0]] + '–' + (Number(xs[v[0]]) + w);
  return ys[v[1]] + '<br>' + t + ': ' + v[3] + ' requests (' + (v[3] / w).toFixed(1) + '/s), ' + v[4] + ' ok, ' + v[5] + ' throttled (' + (100 * v[5] / v[3]).toFixed(1) + '%%)';
}`, jsStrings(xs), jsStrings(rows), colSec)
}

// jsStrings writes strings as a JavaScript array of single-quoted
// strings. go-echarts writes a function as a JSON string, escapes and all,
// so that a backslash cannot escape anything: a character that would need
// one shows as "·" (the tooltip is for people, the record keeps the key).
func jsStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\'')
		for _, r := range s {
			if r < 0x20 || strings.ContainsRune(`\'"<>&`, r) || r == 0x2028 || r == 0x2029 || r == utf8.RuneError {
				r = '·'
			}
			b.WriteRune(r)
		}
		b.WriteByte('\'')
	}
	b.WriteByte(']')
	return b.String()
}

// throttleScatter marks the cells where requests were throttled: red
// circles up to size px across, larger for a larger throttled share.
func throttleScatter(data []opts.ScatterData, size int) *charts.Scatter {
	s := charts.NewScatter()
	s.AddSeries("throttled", data, charts.WithScatterChartOpts(opts.ScatterChart{
		SymbolSize: opts.FuncOpts(fmt.Sprintf("function (v) { return 2 + %d * Math.sqrt(v[2]); }", size-2))}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "rgba(214,39,40,0.45)", BorderColor: throttleColor, BorderWidth: 0.5}))
	return s
}

// eventScatter marks the balancer's splits (▲) and moves (◆) in the
// column of their second and the row of the key they acted at: a split's
// key, a move's range start. Events that name no key are left out.
func eventScatter(r *results.Run, h *results.Heatmap, rowAt func(int) int) *charts.Scatter {
	var splits, moves []opts.ScatterData
	for _, ev := range r.Events {
		key := ev.Lo
		if len(ev.At) > 0 {
			key = ev.At[0]
		}
		if (key == "" && ev.Hi == "" && len(ev.At) == 0) || len(h.Rows) == 0 {
			continue // no key to place it at
		}
		col := int(math.Floor((ev.Second - float64(h.StartSec)) / float64(h.ColumnSec)))
		if col < 0 || col >= h.Columns {
			continue
		}
		d := opts.ScatterData{Name: fmt.Sprintf("%s at %.0f s: %s", ev.Kind, ev.Second, ev.Detail), Value: []any{col, rowAt(rowOf(h, key))}}
		switch ev.Kind {
		case "split":
			splits = append(splits, d)
		case "move":
			moves = append(moves, d)
		}
	}
	if len(splits)+len(moves) == 0 {
		return nil
	}
	s := charts.NewScatter()
	style := func(symbol string) []charts.SeriesOpts {
		return []charts.SeriesOpts{charts.WithScatterChartOpts(opts.ScatterChart{Symbol: symbol, SymbolSize: 11}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#222222", BorderColor: "#ffffff", BorderWidth: 1})}
	}
	if len(splits) > 0 {
		s.AddSeries("balancer split", splits, style("triangle")...)
	}
	if len(moves) > 0 {
		s.AddSeries("balancer move", moves, style("diamond")...)
	}
	return s
}

// rowOf returns the heat map row that holds key, or the first row after
// it (the last row past every row).
func rowOf(h *results.Heatmap, key string) int {
	for i, row := range h.Rows {
		if key <= row.Hi {
			return i
		}
	}
	return len(h.Rows) - 1
}

// maxRangeLines is the most range partitions drawn: past it the lines
// would hide the heat map, and the note counts them instead.
const maxRangeLines = 24

// rangeLines marks the rows where the target's range partitions began at
// the end of the run, each named by its server.
func rangeLines(r *results.Run, h *results.Heatmap, rowAt func(int) int) []opts.MarkLineNameYAxisItem {
	ps := r.RangePartitions
	if len(ps) < 2 || len(ps) > maxRangeLines || len(h.Rows) == 0 {
		return nil
	}
	var out []opts.MarkLineNameYAxisItem
	last := -1
	for _, p := range ps[1:] { // the first starts the key space
		row := rowAt(rowOf(h, p.Lo))
		if row == last {
			continue
		}
		last = row
		out = append(out, opts.MarkLineNameYAxisItem{Name: fmt.Sprintf("server %d from here", p.Server), YAxis: row})
	}
	return out
}

// KeySpaceHow says how to read a key-space chart, for a page to print
// beside it: small charts side by side carry no legend.
const KeySpaceHow = "Keys in key order up each chart (a row holds one key, or a range of keys where there are more keys than rows), the run's seconds across it. " +
	"Color: requests per second in each cell; red circles: throttled requests, larger for a larger share; ▲ and ◆: the balancer's splits and moves; " +
	"dashed lines: where the engine's range partitions began at the end of the run."

// KeySpaceNote says in words what a run's key-space chart shows: how many
// keys, the hottest, and the target's range partitions at the end.
func KeySpaceNote(r *results.Run) string {
	var parts []string
	if s := results.HottestText(r); s != "" {
		parts = append(parts, "PartitionKeys: "+s+".")
	}
	if n := len(r.RangePartitions); n > 0 {
		servers := map[int]bool{}
		for _, p := range r.RangePartitions {
			servers[p.Server] = true
		}
		s := fmt.Sprintf("At the end the table was in %d range partitions on %d servers", n, len(servers))
		if n > maxRangeLines {
			s += " (too many to draw)"
		} else if n > 1 {
			s += " (dashed lines: where each began)"
		}
		parts = append(parts, s+".")
	}
	return strings.Join(parts, " ")
}

// keySpaceSection is a figure page's key-space heat map: of one run, so
// that a page of many runs stays light: the most throttled (the last of
// equals, at the figure's largest x), where the load's place matters most.
func keySpaceSection(f *figureView) (section, bool) {
	var pick *results.Run
	for _, r := range f.Runs {
		if r.Heatmap == nil {
			continue
		}
		if pick == nil || throttledOf(r) >= throttledOf(pick) {
			pick = r
		}
	}
	if pick == nil {
		return section{}, false
	}
	why := "The figure's one run."
	if len(f.Runs) > 1 {
		why = fmt.Sprintf("Run %s, the most throttled of the figure's %d runs.", pick.ID, len(f.Runs))
		if throttledOf(pick) == 0 {
			why = fmt.Sprintf("Run %s, the last of the figure's %d runs (none was throttled).", pick.ID, len(f.Runs))
		}
	}
	note := why + " " + KeySpaceHow + " " + KeySpaceNote(pick)
	return section{Heading: "Where the load landed in the key space", Note: strings.TrimSpace(note),
		Chart: KeySpace(jsName(f.Figure.Name)+"_keys", []*results.Run{pick}, func(r *results.Run) string { return "Requests by PartitionKey over time: " + runLabel(f, r) })}, true
}

func throttledOf(r *results.Run) int64 { return r.Totals.Throttled + r.Totals.TimedOut }
