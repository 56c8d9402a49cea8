package results

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
