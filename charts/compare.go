package charts

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

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

// Pair is one run in both sets, and how its metrics differ.
type Pair struct {
	A, B  *results.Run
	Diffs []results.Difference // filled by the caller, from results.CompareRun
}

// Name is the pair's run ID, or both IDs, A's then B's, when two runs'
// directories paired runs of different IDs.
func (p Pair) Name() string {
	if p.A.ID == p.B.ID {
		return p.A.ID
	}
	return p.A.ID + " vs " + p.B.ID
}

// ClaimPair is one claim as checked in both sets.
type ClaimPair struct {
	ID   string
	A, B results.CheckedClaim
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
			c.Pairs = append(c.Pairs, Pair{A: r, B: rb})
		}
	}
	claimsB := map[string]results.CheckedClaim{}
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

// aboutSide says where one side of a comparison is and, when it is a
// single run (two runs' directories compared), what that run did: the
// runs of a comparison are paired whatever they are, so the page says.
func aboutSide(name string, d *results.Dir) string {
	if len(d.Set.Runs) != 1 {
		return name + ": " + d.Path
	}
	r := d.Set.Runs[0]
	return fmt.Sprintf("%s: %s, run %s: %s, on %s.", name, d.Path, r.ID, describeSetup(r), describeTarget(r))
}

// Write renders the comparison into dir: one page with each figure's two
// result sets overlaid, and a table of every run.
// figsA and figsB are the same figures drawn from each set.
func (c *Comparison) Write(dir string, figsA, figsB []results.FigureData) error {
	if err := copyAssets(dir); err != nil {
		return err
	}
	p := &page{Title: "Comparison", Paras: []string{aboutSide("A", c.A), aboutSide("B", c.B)}}
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
	t := table{Caption: "Runs", Head: []string{"run", "metric", "A", "B", "change", "verdict"}}
	for _, pr := range c.Pairs {
		for i, d := range pr.Diffs {
			id := ""
			if i == 0 {
				id = pr.Name()
			}
			t.Rows = append(t.Rows, []string{id, d.Metric.Name, results.FormatValue(d.A, d.Metric.Unit), results.FormatValue(d.B, d.Metric.Unit), d.ChangeText(), d.Verdict()})
		}
	}
	p.Tables = append(p.Tables, t)
	if err := results.WriteFileAtomic(filepath.Join(dir, "compare.csv"), c.writeCSV); err != nil {
		return err
	}
	return writePage(filepath.Join(dir, "index.html"), p)
}

// writeCSV writes every run's metrics in both sets, with the p-value of
// their difference (empty where untested) and whether it is beyond noise.
func (c *Comparison) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"run", "metric", "a", "b", "change", "change_unit", "p", "beyond_noise", "seconds_a", "seconds_b"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, pr := range c.Pairs {
		for _, d := range pr.Diffs {
			unit, p := "%", ""
			if d.Metric.Unit == "%" {
				unit = "pts"
			}
			if !math.IsNaN(d.P) {
				p = g(d.P)
			}
			cw.Write([]string{pr.Name(), d.Metric.Name, g(d.A), g(d.B), g(d.Change()), unit, p, strconv.FormatBool(d.Beyond()), strconv.Itoa(d.N1), strconv.Itoa(d.N2)})
		}
	}
	cw.Flush()
	return cw.Error()
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
