package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// CheckedClaim is a published claim checked against what was measured: the
// verdict a claim's definition (package casestudy) gives on a result set.
type CheckedClaim struct {
	ID      string `json:"id"`
	Figure  int    `json:"figure"`
	Text    string `json:"text"`    // the claim as published
	Reading string `json:"reading"` // how it is checked, chosen once
	// Published is the number the case study printed, if it printed one;
	// a qualitative claim ("rises", "far sooner") has none.
	Published *float64 `json:"published,omitempty"`
	Measured  float64  `json:"measured"`
	Unit      string   `json:"unit"`
	// Tolerance is the reading's threshold in words; Min and Max bound the
	// measured value where the reading bounds it.
	Tolerance string   `json:"threshold"`
	Min       *float64 `json:"threshold_min,omitempty"`
	Max       *float64 `json:"threshold_max,omitempty"`
	// Margin is how far the measured value is inside its bounds, in % of
	// the nearest bound: positive passes by that much, negative fails. It is
	// left out where another condition of the reading decided.
	Margin *float64 `json:"margin_pct,omitempty"`
	Pass   bool     `json:"pass"`
	// DecidedBy names what settles the claim when it is not the service
	// model: "client model" where the harness's model of the VMs sets the
	// number, so the claim checks the client model, not the service.
	DecidedBy string `json:"decided_by,omitempty"`
	Detail    string `json:"detail,omitempty"` // the other numbers the check used
	Note      string `json:"note,omitempty"`   // why the model cannot meet it, when it does not
	// Marks place the published numbers on the claim's figure, so a chart
	// draws them beside what was measured; a number with no place there (a
	// ratio, a growth) has none.
	Marks []Mark `json:"marks,omitempty"`
}

// Where a Mark is drawn.
const (
	MarkY       = "y"       // on the figure's y axis, at X or as a level
	MarkY2      = "y2"      // on the figure's right axis
	MarkX       = "x"       // a line across the figure at Value on its x axis (a second of a timeline)
	MarkLatency = "latency" // on the latency-percentile chart, at Percentile
)

// Mark is one published number and where it belongs on a figure.
type Mark struct {
	On     string  `json:"on"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Series string  `json:"series,omitempty"` // the series it was measured on; empty: several
	// X is the x of the run it was measured on; nil where it bounds
	// several (a level across the figure).
	X          *float64 `json:"x,omitempty"`
	Percentile float64  `json:"percentile,omitempty"`
}

// Label is how a chart names the mark, with the number as printed:
// "published: 600 e/s", "published: 11%".
func (m Mark) Label() string {
	v := strconv.FormatFloat(m.Value, 'g', -1, 64)
	switch m.Unit {
	case "", "%", "x":
		return "published: " + v + m.Unit
	}
	return "published: " + v + " " + m.Unit
}

// PublishedText formats the published value, or says it was not printed.
func (c *CheckedClaim) PublishedText() string {
	if c.Published == nil {
		return "(not printed)"
	}
	return FormatValue(*c.Published, c.Unit)
}

// MarginText formats the margin.
func (c *CheckedClaim) MarginText() string {
	if c.Margin == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *c.Margin)
}

// SetMargin computes the margin of measured to the bounds; a verdict that
// disagrees with the bounds (another condition decided) leaves it out.
func (c *CheckedClaim) SetMargin() {
	c.Margin = nil
	m := math.Inf(1)
	if c.Min != nil {
		m = math.Min(m, 100*(c.Measured-*c.Min)/math.Abs(*c.Min))
	}
	if c.Max != nil {
		m = math.Min(m, 100*(*c.Max-c.Measured)/math.Abs(*c.Max))
	}
	if math.IsInf(m, 0) || math.IsNaN(m) || (m >= 0) != c.Pass {
		return
	}
	c.Margin = &m
}

// FormatValue formats a claim's value with its unit.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "%":
		if v != 0 && math.Abs(v) < 0.01 {
			return fmt.Sprintf("%.4f%%", v)
		}
		return fmt.Sprintf("%.2f%%", v)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	case "e/s":
		return fmt.Sprintf("%.0f e/s", v)
	case "req/s":
		return fmt.Sprintf("%.0f req/s", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// WriteClaims writes the claims as a table for a terminal: what the case
// study printed, the reading's threshold, what was measured and the margin.
// Columns are as wide as their widest cell, so nothing is cut.
func WriteClaims(w io.Writer, claims []CheckedClaim) {
	pass := 0
	rows := [][]string{{"claim", "", "published", "threshold", "measured", "margin", "what"}}
	for _, c := range claims {
		verdict := "FAIL"
		if c.Pass {
			verdict = "PASS"
			pass++
		}
		what := c.Text
		if c.DecidedBy != "" {
			what += " [decided by the " + c.DecidedBy + "]"
		}
		rows = append(rows, []string{c.ID, verdict, c.PublishedText(), c.Tolerance, FormatValue(c.Measured, c.Unit), c.MarginText(), what})
	}
	writeColumns(w, rows)
	fmt.Fprintf(w, "%d of %d claims pass\n", pass, len(claims))
}

// ClaimsCSV writes the claims as CSV.
func ClaimsCSV(w io.Writer, claims []CheckedClaim) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"id", "figure", "pass", "published", "measured", "unit", "threshold", "margin_pct", "decided_by", "reading", "detail"})
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	for _, c := range claims {
		cw.Write([]string{c.ID, strconv.Itoa(c.Figure), strconv.FormatBool(c.Pass), opt(c.Published), strconv.FormatFloat(c.Measured, 'g', -1, 64),
			c.Unit, c.Tolerance, opt(c.Margin), c.DecidedBy, c.Reading, c.Detail})
	}
	cw.Flush()
	return cw.Error()
}
