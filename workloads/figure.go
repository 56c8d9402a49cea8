package workloads

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tablebench/tablebench/results"
)

// Figure is one figure of a suite, the case study's (package casestudy) or
// a user's sweep, as data: its runs, how a run becomes a point, and how it
// is drawn.
type Figure struct {
	ID      int    `json:"id"`
	Name    string `json:"name"` // file stem, such as fig08
	Title   string `json:"title"`
	XLabel  string `json:"x_label"`
	YLabel  string `json:"y_label"`
	Y2Label string `json:"y2_label,omitempty"`
	Chart   string `json:"chart"` // one of results' chart kinds, such as results.ChartLine
	// Metric names what a run contributes to the figure, one of
	// results.Metrics, such as entities-per-sec, mean-latency or saturation
	// (entities/s and throttled %).
	Metric  string      `json:"metric"`
	Runs    []FigureRun `json:"runs,omitempty"`
	From    int         `json:"from,omitempty"`    // a figure derived from another's runs
	Choices []string    `json:"choices,omitempty"` // what the paper leaves unstated and what was chosen
	// Twin is another figure this one may repeat, and Coincide says why
	// series may coincide, for the page to say when they do.
	Twin     int    `json:"twin,omitempty"`
	Coincide string `json:"coincide,omitempty"`
	// ClientBound, when set, says why the figure measures the modelled
	// 2010 client on purpose: its runs that saturate their client note it
	// as information, not as a warning.
	ClientBound string `json:"client_bound,omitempty"`
}

// FigureRun is one run of a figure: its series, its x value and its spec.
// Long runs measure rare throttling and need more time to be counted.
type FigureRun struct {
	Series string  `json:"series"`
	X      float64 `json:"x"`
	Spec   Spec    `json:"spec"`
	Long   bool    `json:"long,omitempty"`
	// Measure, when set, is how long the run measures in quick and in full
	// mode, for runs that must outlast the load balancer.
	Measure Durations `json:"measure,omitzero"`
	// Engine sets up the in-tree engine for this run, where an experiment
	// needs another profile, a cold table or another balancer.
	Engine EngineSetup `json:"engine,omitzero"`
}

// Durations are a quick and a full mode's measured time.
type Durations struct {
	Quick, Full time.Duration
}

// EngineSetup overrides the suite's engine for one run; empty fields keep
// the suite's.
type EngineSetup struct {
	Profile  string `json:"profile,omitempty"`  // wa2010, modern, cosmos or none
	Cold     bool   `json:"cold,omitempty"`     // start the table in one range partition
	Balancer string `json:"balancer,omitempty"` // default, accelerated or off
	// RU is, under the cosmos profile, the table's provisioned throughput
	// in RU/s; 0 keeps the suite's.
	RU float64 `json:"ru,omitempty"`
}

// RunID returns the stable ID of a figure's run, used for its files and to
// resume a suite.
func RunID(fig int, series string, x float64) string {
	slug := strings.Map(func(r rune) rune {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			return r
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, series)
	return fmt.Sprintf("fig%02d-%s-x%g", fig, slug, x)
}

// Measured looks up the figure values of stored runs.
type Measured struct {
	runs map[string]*results.Run
	figs map[int]*Figure
}

// NewMeasured indexes runs by ID for a catalog's figures.
func NewMeasured(figs []Figure, runs []*results.Run) Measured {
	m := Measured{runs: map[string]*results.Run{}, figs: map[int]*Figure{}}
	for _, r := range runs {
		m.runs[r.ID] = r
	}
	for i := range figs {
		m.figs[figs[i].ID] = &figs[i]
	}
	return m
}

// Figure returns an indexed figure, or nil.
func (m Measured) Figure(id int) *Figure { return m.figs[id] }

// Run returns a figure's run, or nil.
func (m Measured) Run(fig int, series string, x float64) *results.Run {
	if f, ok := m.figs[fig]; ok && f.From != 0 {
		fig = f.From
	}
	return m.runs[RunID(fig, series, x)]
}

// Y returns a figure's y value at (series, x), and whether its run exists.
func (m Measured) Y(fig int, series string, x float64) (float64, bool) {
	f, ok := m.figs[fig]
	r := m.Run(fig, series, x)
	if !ok || r == nil {
		return 0, false
	}
	y, _ := metric(f.Metric, r, x)
	return y, true
}

// Check reports a figure whose metric is not one of results.Metrics.
func (f *Figure) Check() error {
	if _, err := results.LookupMetric(f.Metric); err != nil {
		return fmt.Errorf("figure %d (%s): %w", f.ID, f.Title, err)
	}
	return nil
}

// metric returns a run's y (and y2) for a figure's metric. Figures are
// checked where they are chosen (Select, SweepDef.Figure), so an unknown
// metric here is a catalog's bug: its points are NaN, never another
// metric's numbers.
func metric(name string, r *results.Run, x float64) (float64, float64) {
	m, err := results.LookupMetric(name)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	y, y2 := m.Value(r, x), 0.0
	if m.Y2 != "" {
		if m2, err := results.LookupMetric(m.Y2); err == nil {
			y2 = m2.Value(r, x)
		}
	}
	return y, y2
}

// Series and Point are a figure's lines, as results stores and draws them.
type (
	Series = results.Series
	Point  = results.Point
)

// Draw returns the figure ready to draw from stored runs: its series and the
// IDs of the runs it reads (another figure's, for a derived one).
func (f *Figure) Draw(m Measured) results.FigureData {
	d := results.FigureData{ID: f.ID, Name: f.Name, Title: f.Title, XLabel: f.XLabel, YLabel: f.YLabel, Y2Label: f.Y2Label,
		Chart: f.Chart, Choices: f.Choices, Twin: f.Twin, Coincide: f.Coincide, ClientBound: f.ClientBound, Series: f.Data(m)}
	src := f
	if f.From != 0 {
		if from, ok := m.figs[f.From]; ok {
			src = from
		}
	}
	for _, fr := range src.Runs {
		if r := m.Run(src.ID, fr.Series, fr.X); r != nil {
			d.RunIDs = append(d.RunIDs, r.ID)
		}
	}
	return d
}

// DrawAll draws each figure from runs.
func DrawAll(figs []Figure, runs []*results.Run) []results.FigureData {
	m := NewMeasured(figs, runs)
	out := make([]results.FigureData, len(figs))
	for i := range figs {
		out[i] = figs[i].Draw(m)
	}
	return out
}

// Data returns the figure's series from stored runs, in catalog order.
func (f *Figure) Data(m Measured) []Series {
	runs := f.Runs
	if f.From != 0 {
		runs = m.figs[f.From].Runs
	}
	var out []Series
	for _, fr := range runs {
		r := m.Run(f.ID, fr.Series, fr.X)
		if r == nil {
			continue
		}
		i := slices.IndexFunc(out, func(s Series) bool { return s.Name == fr.Series })
		if i < 0 {
			out = append(out, Series{Name: fr.Series})
			i = len(out) - 1
		}
		y, y2 := metric(f.Metric, r, fr.X)
		out[i].Points = append(out[i].Points, Point{X: fr.X, Y: y, Y2: y2, RunID: r.ID})
	}
	return out
}
