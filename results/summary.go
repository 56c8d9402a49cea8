package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteSummary writes a run's results for people.
func WriteSummary(w io.Writer, r *Run) {
	fmt.Fprintf(w, "run %s", r.ID)
	if r.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintf(w, ": %.1f s measured\n", r.MeasuredSec)
	fmt.Fprintf(w, "  entities/s       %.1f (%.1f sent)\n", r.EntitiesPerSec, r.EntitiesSentPerSec)
	fmt.Fprintf(w, "  requests/s       %.1f (%d billable transactions)\n", r.RequestsPerSec, r.Billable)
	if n := r.Totals.Errors[OutcomeRateLimited]; n > 0 {
		fmt.Fprintf(w, "  throttled        %.4f%% (%d RequestRateTooLarge, %d ServerBusy, %d OperationTimedOut)\n", r.ThrottledPct, n, r.Totals.Throttled-n, r.Totals.TimedOut)
	} else {
		fmt.Fprintf(w, "  throttled        %.4f%% (%d ServerBusy, %d OperationTimedOut)\n", r.ThrottledPct, r.Totals.Throttled, r.Totals.TimedOut)
	}
	if r.Totals.RequestUnits > 0 {
		fmt.Fprintf(w, "  request units    %.1f RU/s (%.1f RU charged)\n", r.RequestUnitsPerSec, r.Totals.RequestUnits)
	}
	if p := r.RetryAfterMs; p != nil {
		fmt.Fprintf(w, "  retry-after ms   p50 %.0f  p99 %.0f  max %.0f (what %d throttling answers asked to wait)\n", p.P50, p.P99, p.Max, p.Count)
	}
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "  errors           none")
	} else {
		var parts []string
		for _, code := range SortedErrors(r.Errors) {
			parts = append(parts, fmt.Sprintf("%s %d", code, r.Errors[code]))
		}
		fmt.Fprintf(w, "  errors           %s\n", strings.Join(parts, ", "))
	}
	if o := r.OpenLoad; o != nil {
		pct := 0.0
		if o.Due > 0 {
			pct = 100 * float64(o.Dropped) / float64(o.Due)
		}
		what := "dropped: no thread was free"
		if o.Overload == "queue" {
			what = "never sent: still queued at the end"
		}
		if o.Dropped == 0 {
			fmt.Fprintf(w, "  open load        %.1f requests/s intended, %.1f achieved; all %d due were sent\n",
				o.IntendedPerSec, o.AchievedPerSec, o.Due)
		} else {
			fmt.Fprintf(w, "  open load        %.1f requests/s intended, %.1f achieved; %d of %d due %s (%.1f%%)\n",
				o.IntendedPerSec, o.AchievedPerSec, o.Dropped, o.Due, what, pct)
		}
	}
	if r.Totals.Retries > 0 {
		fmt.Fprintf(w, "  retries          %d\n", r.Totals.Retries)
	}
	if r.Totals.LateStarts > 0 {
		fmt.Fprintf(w, "  late starts      %d (at most %.1f ms late)\n", r.Totals.LateStarts, r.MaxStartLagMs)
	}
	writeLatency(w, "latency ms", r.LatencyMs)
	writeOps(w, r)
	if l := r.HarnessLagMs; l != nil {
		fmt.Fprintf(w, "  harness lag ms   p50 %.2f, p99 %.2f, max %.2f (how late threads sent, in target time)\n", l.P50, l.P99, l.Max)
	}
	if r.Setup.MultiEntity() {
		writeLatency(w, "per entity ms", r.PerEntityMs)
	}
	if len(r.ClientCPUPct) > 0 {
		var parts []string
		for i, c := range r.ClientCPUPct {
			if i == 8 {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, fmt.Sprintf("%.0f%%", c))
		}
		fmt.Fprintf(w, "  client CPU       %s (modelled, per VM over the measured window: the busier of its cores and its serial section)\n", strings.Join(parts, " "))
	}
	if line := HottestText(r); line != "" {
		fmt.Fprintf(w, "  partitions       %s\n", line)
	}
	if n := len(r.Events); n > 0 {
		fmt.Fprintf(w, "  target events    %d (first: %s at %.0f s)\n", n, r.Events[0].Kind, r.Events[0].Second)
	}
}

func writeLatency(w io.Writer, name string, p Percentiles) {
	fmt.Fprintf(w, "  %-16s p50 %.1f  p90 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n", name, p.P50, p.P90, p.P95, p.P99, p.P999, p.Max, p.Mean)
}

// writeOps writes a line for each operation of a mix: its share of
// requests, its rate, its throttling and misses, and its latency.
func writeOps(w io.Writer, r *Run) {
	if len(r.Ops) == 0 {
		return
	}
	width := 0
	for op := range r.Ops {
		width = max(width, len(op))
	}
	for _, op := range r.OpNames() {
		s := r.Ops[op]
		share := 0.0
		if r.Totals.Requests > 0 {
			share = 100 * float64(s.Requests) / float64(r.Totals.Requests)
		}
		extra := ""
		if n := s.Throttled + s.TimedOut; n > 0 {
			extra += fmt.Sprintf(", %d throttled", n)
		}
		if s.Missed > 0 {
			extra += fmt.Sprintf(", %d missed", s.Missed)
		}
		if n := s.Errors[OutcomeConflict]; n > 0 {
			extra += fmt.Sprintf(", %d conflicts", n)
		}
		if other := otherErrors(s.Counts); other > 0 {
			extra += fmt.Sprintf(", %d other errors", other)
		}
		fmt.Fprintf(w, "  %-*s %*s %5.1f%% of requests, %.1f entities/s%s; ms p50 %.1f  p99 %.1f  max %.1f\n",
			width, op, 15-width, "", share, s.EntitiesPerSec, extra, s.LatencyMs.P50, s.LatencyMs.P99, s.LatencyMs.Max)
	}
}

// otherErrors counts the errors that are neither throttling nor misses.
func otherErrors(c Counts) int64 {
	var n int64
	for code, v := range c.Errors {
		if !Throttling(code) && code != OutcomeMissed && code != OutcomeConflict {
			n += v
		}
	}
	return n
}

// HottestText says in a line how many PartitionKeys a run's measured
// requests touched and where they landed most: "17 touched (exact);
// hottest p000017: 31% of requests, 12% of them throttled; next p000003
// 9.0%, p000042 5.0%". A count that may overstate says "at most", and
// gives no throttled share, which would mean nothing. Empty for a record
// without keys.
func HottestText(r *Run) string {
	p := r.Partitions
	if p == nil || r.Totals.Requests == 0 || len(p.Top) == 0 {
		return ""
	}
	how := "exact"
	if !p.DistinctExact {
		how = "estimated"
	}
	pct := func(n, of int64) string {
		v := 100 * float64(n) / float64(of)
		if v >= 10 || v == 0 {
			return fmt.Sprintf("%.0f%%", v)
		}
		return fmt.Sprintf("%.1f%%", v)
	}
	share := func(k KeyLoad) string {
		if k.Error > 0 {
			return "at most " + pct(k.Requests, r.Totals.Requests)
		}
		return pct(k.Requests, r.Totals.Requests)
	}
	top := p.Top[0]
	s := fmt.Sprintf("%d touched (%s); ", p.Distinct, how)
	if 100*top.Requests < r.Totals.Requests {
		s += "none takes 1% of requests; "
	}
	s += fmt.Sprintf("hottest %s: %s of requests", shortKey(top.Key), share(top))
	if top.Error == 0 {
		s += fmt.Sprintf(", %s of them throttled", pct(top.Throttled, top.Requests))
	}
	var next []string
	for _, k := range p.Top[1:min(len(p.Top), 3)] {
		next = append(next, shortKey(k.Key)+" "+share(k))
	}
	if len(next) > 0 {
		s += "; next " + strings.Join(next, ", ")
	}
	return s
}

// shortKey shortens a long key for a line of text, keeping its start and
// end.
func shortKey(k string) string {
	r := []rune(k)
	if len(r) <= 40 {
		return k
	}
	return string(r[:28]) + "…" + string(r[len(r)-8:])
}
