package charts

import (
	"fmt"
	"path/filepath"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/tablebench/tablebench/results"
)

// Comparison is two result sets side by side.
type Comparison struct {
	A, B   *results.Dir
	Pairs  []Pair      // runs in both, in A's order
	Claims []ClaimPair // claims checked in both
}

// Pair is one run in both sets.
type Pair struct{ A, B *results.Run }

// ClaimPair is one claim as checked in both sets.
type ClaimPair struct {
	ID   string
	A, B results.Claim
}

// NewComparison matches two result sets' runs by ID.
func NewComparison(a, b *results.Dir) *Comparison {
	c := &Comparison{A: a, B: b}
	byID := map[string]*results.Run{}
	for _, r := range b.Set.Runs {
		byID[r.ID] = r
	}
	for _, r := range a.Set.Runs {
		if rb, ok := byID[r.ID]; ok {
			c.Pairs = append(c.Pairs, Pair{r, rb})
		}
	}
	claimsB := map[string]results.Claim{}
	for _, cl := range b.Set.Claims {
		claimsB[cl.ID] = cl
	}
	for _, cl := range a.Set.Claims {
		if cb, ok := claimsB[cl.ID]; ok {
			c.Claims = append(c.Claims, ClaimPair{cl.ID, cl, cb})
		}
	}
	return c
}

// Write renders the comparison into dir: one page with each figure's two
// result sets overlaid, and a table of every run.
// figsA and figsB are the same figures drawn from each set.
func (c *Comparison) Write(dir string, figsA, figsB []results.FigureData) error {
	if err := copyAssets(dir); err != nil {
		return err
	}
	p := &page{Title: "Comparison", Paras: []string{"A: " + c.A.Path, "B: " + c.B.Path}}
	for i, f := range figsA {
		if i >= len(figsB) || figsB[i].ID != f.ID {
			continue
		}
		sa, sb := f.Series, figsB[i].Series
		if len(sa) == 0 || len(sb) == 0 || f.Chart == results.ChartHistogram {
			continue
		}
		p.Sections = append(p.Sections, section{Heading: f.Title, Chart: overlay(f, sa, sb)})
	}
	t := table{Caption: "Runs", Head: []string{"run", "A e/s", "B e/s", "B/A", "A throttled", "B throttled", "A p50 ms", "B p50 ms", "A p99 ms", "B p99 ms"}}
	for _, pr := range c.Pairs {
		t.Rows = append(t.Rows, []string{pr.A.ID, fmt.Sprintf("%.1f", pr.A.EntitiesPerSec), fmt.Sprintf("%.1f", pr.B.EntitiesPerSec),
			fmt.Sprintf("%.3f", pr.B.EntitiesPerSec/pr.A.EntitiesPerSec), fmt.Sprintf("%.3f%%", pr.A.ThrottledPct), fmt.Sprintf("%.3f%%", pr.B.ThrottledPct),
			fmt.Sprintf("%.1f", pr.A.LatencyMs.P50), fmt.Sprintf("%.1f", pr.B.LatencyMs.P50), fmt.Sprintf("%.1f", pr.A.LatencyMs.P99), fmt.Sprintf("%.1f", pr.B.LatencyMs.P99)})
	}
	p.Tables = append(p.Tables, t)
	return writePage(filepath.Join(dir, "index.html"), p)
}

func overlay(f results.FigureData, sa, sb []results.Series) render.ChartSnippet {
	var names []string
	for _, s := range sa {
		names = append(names, "A: "+s.Name)
	}
	for _, s := range sb {
		names = append(names, "B: "+s.Name)
	}
	l := charts.NewLine()
	l.SetGlobalOptions(common(jsName(f.Name)+"_compare", f.Title, f.XLabel, f.YLabel, "value", names)...)
	add := func(prefix string, ss []results.Series, dashed bool) {
		for _, s := range ss {
			var data []opts.LineData
			for _, p := range s.Points {
				data = append(data, opts.LineData{Value: []any{p.X, round(p.Y)}})
			}
			style := opts.LineStyle{}
			if dashed {
				style.Type = "dashed"
			}
			l.AddSeries(prefix+s.Name, data, charts.WithLineStyleOpts(style), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true)}))
		}
	}
	add("A: ", sa, false)
	add("B: ", sb, true)
	return l.RenderSnippet()
}
