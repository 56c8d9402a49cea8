package results

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chart kinds of a figure.
const (
	ChartHistogram = "histogram" // latency histograms, one series per run
	ChartLine      = "line"      // y against x, one line per series
	ChartDual      = "dual"      // y on the left axis, y2 on the right
	ChartTimeline  = "timeline"  // each run's entities/s and throttling per second, its events marked
)

// Series is one line of a figure.
type Series struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
}

// Point is one point of a series, from one stored run.
type Point struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Y2    float64 `json:"y2,omitempty"`
	RunID string  `json:"run"`
}

// FigureData is a figure ready to draw: its labels, the choices it made
// where the paper is silent, its series and the runs it draws from. The
// figure catalog computes it from stored runs; it is all a renderer needs.
type FigureData struct {
	ID      int      `json:"id"`
	Name    string   `json:"name"` // file stem, such as fig08
	Title   string   `json:"title"`
	XLabel  string   `json:"x_label"`
	YLabel  string   `json:"y_label"`
	Y2Label string   `json:"y2_label,omitempty"`
	Chart   string   `json:"chart"`
	Choices []string `json:"choices,omitempty"`
	// Twin is another figure this one may repeat, and Coincide why series
	// may coincide; a renderer shows coinciding series so both stay visible.
	Twin     int    `json:"twin,omitempty"`
	Coincide string `json:"coincide,omitempty"`
	// ClientBound says why the figure measures the modelled client on
	// purpose, when it does; its runs' notes say which saturated it.
	ClientBound string   `json:"client_bound,omitempty"`
	Series      []Series `json:"series"`
	RunIDs      []string `json:"runs"` // in catalog order
}

// WriteTable writes a figure's points as a table, one row per point in
// series order: its series, x and y with the figure's labels, and beside
// them the run's successful entities/s, throttled share and the p50 and
// p99 of successful requests, as its page reads them, so that a sweep
// printed in a log says what its page shows. A run that warns is marked;
// its warnings are in the record.
func (f *FigureData) WriteTable(w io.Writer, runs []*Run) {
	byID := make(map[string]*Run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	head := []string{"series", f.XLabel, f.YLabel, "entities/s", "throttled", "p50 ms", "p99 ms", ""}
	if f.Y2Label != "" {
		head = slices.Insert(head, 3, f.Y2Label)
	}
	// A column that repeats y says nothing twice.
	same := slices.Index(head[3:], f.YLabel) + 3
	rows := [][]string{head}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range f.Series {
		for _, p := range s.Points {
			row := []string{s.Name, num(p.X), fmt.Sprintf("%.4g", p.Y)}
			if f.Y2Label != "" {
				row = append(row, fmt.Sprintf("%.4g", p.Y2))
			}
			r := byID[p.RunID]
			if r == nil {
				rows = append(rows, append(row, "", "", "", "", "(no run)"))
				continue
			}
			mark := ""
			if len(r.Warnings) > 0 || r.Refused {
				mark = "warns"
			}
			rows = append(rows, append(row, fmt.Sprintf("%.0f", r.EntitiesPerSec), fmt.Sprintf("%.2f%%", r.ThrottledPct),
				fmt.Sprintf("%.1f", r.SuccessLatencyMs.P50), fmt.Sprintf("%.1f", r.SuccessLatencyMs.P99), mark))
		}
	}
	if same >= 3 {
		for i := range rows {
			rows[i] = slices.Delete(rows[i], same, same+1)
		}
	}
	writeColumns(w, rows)
}

// writeColumns writes rows as left-aligned columns two spaces apart.
func writeColumns(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
