package results

import (
	"fmt"
	"io"
	"strings"
)

// Claim is a published claim checked against what was measured.
type Claim struct {
	ID        string  `json:"id"`
	Figure    int     `json:"figure"`
	Text      string  `json:"text"`    // the claim as published
	Reading   string  `json:"reading"` // how it is checked, chosen once
	Published float64 `json:"published"`
	Measured  float64 `json:"measured"`
	Unit      string  `json:"unit"`
	Tolerance string  `json:"tolerance"`
	Pass      bool    `json:"pass"`
	Detail    string  `json:"detail,omitempty"` // the other numbers the check used
	Note      string  `json:"note,omitempty"`   // why the model cannot meet it, when it does not
}

// FormatValue formats a claim's value with its unit.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "%":
		if v != 0 && v < 0.01 {
			return fmt.Sprintf("%.4f%%", v)
		}
		return fmt.Sprintf("%.2f%%", v)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	case "e/s":
		return fmt.Sprintf("%.0f e/s", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// WriteClaims writes the claims as a table for a terminal.
func WriteClaims(w io.Writer, claims []Claim) {
	pass := 0
	fmt.Fprintf(w, "%-6s %-4s  %-16s %-16s %-22s %s\n", "claim", "", "published", "measured", "tolerance", "what")
	for _, c := range claims {
		verdict := "FAIL"
		if c.Pass {
			verdict = "PASS"
			pass++
		}
		text := c.Text
		if len(text) > 70 {
			text = text[:67] + "..."
		}
		fmt.Fprintf(w, "%-6s %-4s  %-16s %-16s %-22s %s\n", c.ID, verdict, FormatValue(c.Published, c.Unit), FormatValue(c.Measured, c.Unit), c.Tolerance, text)
	}
	fmt.Fprintf(w, "%d of %d claims pass\n", pass, len(claims))
}

// ClaimsCSV writes the claims as CSV.
func ClaimsCSV(w io.Writer, claims []Claim) error {
	var b strings.Builder
	b.WriteString("id,figure,pass,published,measured,unit,tolerance,reading,detail\n")
	for _, c := range claims {
		fmt.Fprintf(&b, "%s,%d,%v,%g,%g,%s,%s,%s,%s\n", c.ID, c.Figure, c.Pass, c.Published, c.Measured, c.Unit,
			CSVField(c.Tolerance), CSVField(c.Reading), CSVField(c.Detail))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CSVField quotes a CSV field when it needs it.
func CSVField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
