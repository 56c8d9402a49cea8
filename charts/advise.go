package charts

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// Advice is the page of a comparison of key designs (tablebench advise):
// per profile, its verdict, the ranked table with each candidate's reason,
// and the candidates' key-space heat maps side by side on one scale.
type Advice struct {
	Title, Subtitle string
	Profiles        []AdviceProfile
	// Paras say how the comparison was made.
	Paras []string
}

// AdviceProfile is one profile's part of an advice page.
type AdviceProfile struct {
	Name    string
	Verdict string
	Tie     bool // no candidate is better than the others at the target
	Head    []string
	Rows    [][]string
	// Why is each row's reason, in the rows' order.
	Why []string
	// Runs are the candidates' runs, in the rows' order, named by Names.
	Runs  []*results.Run
	Names []string
	// Hashed says that the service places keys by their hash (cosmos),
	// so that the key order of the heat map is not where the load lands.
	Hashed bool
}

// WriteAdvice renders an advice page as dir/index.html, with the echarts
// script in dir/assets.
func WriteAdvice(dir string, a *Advice) error {
	if err := copyAssets(dir); err != nil {
		return err
	}
	p := &page{Title: a.Title, Subtitle: a.Subtitle, Paras: a.Paras}
	for i, pr := range a.Profiles {
		class := "ok"
		if pr.Tie {
			class = "info"
		}
		p.Status = append(p.Status, status{class, "Profile " + pr.Name + ": " + pr.Verdict})
		// The reasons are sentences: a table of their own, under the
		// numbers, where they have the page's width.
		p.Lead = append(p.Lead, table{Caption: "Profile " + pr.Name + ": candidates ranked (= marks a tie)", Head: pr.Head, Rows: pr.Rows})
		why := table{Caption: "Profile " + pr.Name + ": why each ranks where it does", Head: []string{"rank", "candidate", "why"}}
		for j, row := range pr.Rows {
			why.Rows = append(why.Rows, []string{row[0], row[1], pr.Why[j]})
		}
		p.Lead = append(p.Lead, why)
		var most float64
		for _, r := range pr.Runs {
			most = math.Max(most, heatMax(r))
		}
		var snips []render.ChartSnippet
		for j, r := range pr.Runs {
			snips = append(snips, keyHeatmap(fmt.Sprintf("advise_%d_%d", i, j), pr.Names[j], r, most))
		}
		place := " A bright band is a hot key or range; a diagonal is keys in time order, whose newest range takes every write."
		if pr.Hashed {
			place = " A bright band is a hot key. This service places keys by their hash, so keys adjacent here are spread over its physical partitions: a diagonal of keys in time order lands on all of them."
		}
		p.Sections = append(p.Sections, section{Heading: "Where the load lands under " + pr.Name,
			Note:  "Each candidate's PartitionKey space, in key order from bottom to top (each row a range of keys named by its first, as Bigtable's Key Visualizer draws them), over the run's seconds, warm-up first; the colour is requests per second in the cell, on one scale for every candidate here." + place,
			Chart: multiples(snips)})
	}
	return writePage(filepath.Join(dir, "index.html"), p)
}

// heatCellsMax is the most cells a heat map holds.
const heatCellsMax = results.HeatmapRows * results.HeatmapColumns

// heatMax is the most requests per second of any cell of a run's heat map.
func heatMax(r *results.Run) float64 {
	h := r.Heatmap
	if h == nil {
		return 0
	}
	var most float64
	for _, row := range h.Rows {
		for _, c := range row.Cells {
			most = math.Max(most, float64(c.Requests)/float64(max(h.ColumnSec, 1)))
		}
	}
	return most
}

// keyHeatmap draws a run's key-space heat map: its rows of keys up the y
// axis in key order, its columns of seconds along x, requests per second
// as colour up to most.
func keyHeatmap(id, title string, r *results.Run, most float64) render.ChartSnippet {
	h := r.Heatmap
	var xs, ys []string
	var data []opts.HeatMapData
	if h != nil {
		for c := range h.Columns {
			xs = append(xs, fmt.Sprint(h.StartSec+c*h.ColumnSec))
		}
		for i, row := range h.Rows {
			label := row.Lo
			if len(label) > 10 {
				label = label[:9] + "…"
			}
			ys = append(ys, label)
			for _, c := range row.Cells {
				data = append(data, opts.HeatMapData{Value: [3]any{c.Column, i, round(float64(c.Requests) / float64(max(h.ColumnSec, 1)))}})
			}
		}
	}
	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(
		initOpts(id, 320, 330),
		charts.WithTitleOpts(opts.Title{Title: title, TitleStyle: &opts.TextStyle{FontSize: 13}}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true)}),
		charts.WithGridOpts(opts.Grid{Top: "36px", Left: "70px", Right: "10px", Bottom: "80px"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "second of the run", Type: "category", NameLocation: "middle", NameGap: 25}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: ys, AxisLabel: &opts.AxisLabel{FontSize: 9}}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithVisualMapOpts(opts.VisualMap{Calculable: opts.Bool(false), Min: 0, Max: float32(math.Max(most, 1)), Orient: "horizontal", Left: "center", Bottom: "0px",
			Text: []string{"requests/s", "0"}, InRange: &opts.VisualMapInRange{Color: []string{"#f7fbff", "#6baed6", "#08306b", "#d94801"}}}),
		charts.WithAnimation(false),
		// Drawn at once: a heat map holds up to 128 x 120 cells, which
		// echarts would otherwise draw a frame's worth at a time.
		charts.WithProgressiveThreshold(heatCellsMax),
	)
	hm.SetXAxis(xs)
	hm.AddSeries("requests/s", data)
	return hm.RenderSnippet()
}
