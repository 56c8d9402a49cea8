package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"text/tabwriter"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

func compareCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "compare", "DIR1 DIR2 [--out DIR]")
	out := fs.String("out", "", "directory for the comparison's charts (default DIR2/compare)")
	tol := fs.Float64("within", 10, "report how many runs' throughput differ by at most this many percent")
	var pos []string
	rest := args
	for len(rest) > 0 { // directories and flags in any order
		if err := fs.Parse(rest); err != nil {
			return parse(fs, rest)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) != 2 {
		return usagef("give two result directories, as in 'tablebench compare results/quick results/full'")
	}
	a, err := results.ReadDir(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	b, err := results.ReadDir(pos[1])
	if err != nil {
		return usagef("%v", err)
	}
	cmp := charts.NewComparison(a, b)
	if len(cmp.Pairs) == 0 {
		return fmt.Errorf("%s and %s have no run in common to compare", pos[0], pos[1])
	}
	writeComparison(e.stdout, cmp, *tol)
	figs, err := setFigures(&a.Set)
	if err != nil {
		return err
	}
	if _, err := setFigures(&b.Set); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(b.Path, "compare")
	}
	if err := cmp.Write(dir, workloads.DrawAll(figs, a.Set.Runs), workloads.DrawAll(figs, b.Set.Runs)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "charts: %s\n", filepath.Join(dir, "index.html"))
	return nil
}

func writeComparison(w io.Writer, cmp *charts.Comparison, tol float64) {
	fmt.Fprintf(w, "A = %s (%s), B = %s (%s)\n", cmp.A.Path, describeSet(&cmp.A.Set), cmp.B.Path, describeSet(&cmp.B.Set))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tA e/s\tB e/s\tB/A\tA throttled\tB throttled\tA p50\tB p50\tB/A\tA p99\tB p99\tB/A\t")
	within, worst := 0, 0.0
	for _, p := range cmp.Pairs {
		r := ratio(p.B.EntitiesPerSec, p.A.EntitiesPerSec)
		if d := 100 * math.Abs(r-1); d <= tol {
			within++
		} else if math.IsNaN(d) {
			continue
		}
		worst = math.Max(worst, 100*math.Abs(r-1))
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.3f\t%.3f%%\t%.3f%%\t%.1f\t%.1f\t%.3f\t%.1f\t%.1f\t%.3f\t\n", p.A.ID,
			p.A.EntitiesPerSec, p.B.EntitiesPerSec, r, p.A.ThrottledPct, p.B.ThrottledPct,
			p.A.LatencyMs.P50, p.B.LatencyMs.P50, ratio(p.B.LatencyMs.P50, p.A.LatencyMs.P50),
			p.A.LatencyMs.P99, p.B.LatencyMs.P99, ratio(p.B.LatencyMs.P99, p.A.LatencyMs.P99))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d of %d runs' throughput within %g%%; the largest difference %.1f%%\n", within, len(cmp.Pairs), tol, worst)
	for _, c := range cmp.Claims {
		fmt.Fprintf(w, "%s: A %s (%s), B %s (%s)\n", c.ID, verdict(c.A.Pass), results.FormatValue(c.A.Measured, c.A.Unit), verdict(c.B.Pass), results.FormatValue(c.B.Measured, c.B.Unit))
	}
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

func ratio(b, a float64) float64 {
	if a == 0 {
		if b == 0 {
			return 1
		}
		return math.NaN()
	}
	return b / a
}

func describeSet(s *results.Set) string {
	target, profile := s.Settings[results.SettingTarget], s.Settings["profile"] // what the set was made with
	if target == "" && len(s.Runs) > 0 {                                        // a set that does not record it
		target, profile = s.Runs[0].Env.Target, s.Runs[0].Env.Profile
	}
	if target == "" {
		target = "?"
	}
	if profile != "" {
		target += " " + profile
	}
	return fmt.Sprintf("%s, %s, %d runs", s.Mode, target, len(s.Runs))
}
