package advise

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Ops returns the operations the report's candidates did, in a stable
// order.
func (r *Report) Ops() []string {
	var ops []string
	for _, row := range r.Candidates {
		for op := range row.LatencyMs {
			if !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// Table returns a profile's ranked table: its header and a row of cells
// per candidate, best first, as the text and the page show it.
func (r *Report) Table(profile string) (head []string, rows [][]string, why []string) {
	ops := r.Ops()
	head = []string{"rank", "candidate", "carries", "succeeded/s", "throttled"}
	for _, op := range ops {
		head = append(head, op+" p50/p99 ms")
	}
	head = append(head, "hottest partition: load / limit", "cost", "gives up")
	for _, row := range r.Candidates {
		if row.Profile != profile {
			continue
		}
		rank := fmt.Sprint(row.Rank)
		if row.Tie {
			rank += "="
		}
		carries := "no"
		if row.Carries {
			carries = "yes"
		}
		cells := []string{rank, row.Name, carries, Num(row.SuccessPerSec) + " of " + Num(row.TargetRate), fmt.Sprintf("%.2f%%", row.ThrottledPct)}
		for _, op := range ops {
			l, ok := row.LatencyMs[op]
			if !ok || l.Count == 0 {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, fmtMs(l.P50)+" / "+fmtMs(l.P99))
		}
		h := row.Hottest
		hot := "-"
		if h.Kind != "" {
			hot = fmt.Sprintf("%s %s: %s / %s %s (%.0f%%)", h.Kind, h.Key, Num(h.Load), Num(h.Limit), h.Unit, 100*h.Use())
		}
		cost := Num(float64(row.Billable)) + " transactions"
		if row.RequestUnits > 0 {
			cost = Num(row.RequestUnits) + " RU"
		}
		cells = append(cells, hot, cost, row.GivesUp)
		rows = append(rows, cells)
		why = append(why, row.Why)
	}
	return head, rows, why
}

// WriteText writes the report as text: per profile, its verdict, then the
// ranked table, each row followed by its reason.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "advise: %d candidates x %d profile(s) at %s requests/s; each run %gs warm-up then %gs measured, in virtual time, open load with enough simulated clients that they never limit\n",
		len(r.Candidates)/max(len(r.Profiles), 1), len(r.Profiles), Num(r.TargetRate), r.WarmupSec, r.MeasuredSec)
	for _, v := range r.Winner {
		fmt.Fprintf(w, "\nprofile %s: %s\n", v.Profile, v.Summary)
		head, rows, why := r.Table(v.Profile)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		// The last column (what the design gives up) goes under its row
		// with the reason: it is a sentence, not a number.
		fmt.Fprintln(tw, strings.Join(head[:len(head)-1], "\t"))
		for _, cells := range rows {
			fmt.Fprintln(tw, strings.Join(cells[:len(cells)-1], "\t"))
		}
		tw.Flush()
		for i, cells := range rows {
			fmt.Fprintf(w, "  %s %s: %s\n", cells[0], cells[1], why[i])
			fmt.Fprintf(w, "  %s gives up %s\n", strings.Repeat(" ", len(cells[0])+len(cells[1])+1), cells[len(cells)-1])
		}
		for _, row := range r.Candidates {
			if row.Profile == v.Profile && row.ClientLimited != "" {
				fmt.Fprintf(w, "  note: %s: the simulated client limited the run: %s\n", row.Name, row.ClientLimited)
			}
		}
	}
}
