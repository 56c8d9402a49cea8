package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// compareMetrics are the metrics compare tests for every run.
var compareMetrics = []string{"entities-per-sec", "throttled-pct", "p50", "p95", "p99"}

const compareHelp = `DIR1 DIR2 [--tolerance 5%] [--out DIR]

Matches the runs of two result sets by ID (two runs' directories from
run --out: their runs, or the one run of each) and, for each run, tests whether
its entities/s, throttled share and p50, p95 and p99 latency (of successful
requests) differ beyond the runs' own noise: a Mann-Whitney U test of the
two runs' per-second samples (benchstat's test), from their intervals and
interval logs. A per-second latency reads every request of the second. A
difference is beyond noise when p < --alpha; seconds of one run are not
independent, so read a lone p near alpha with care, and expect about one
difference in 20 beyond noise by chance when two sets merely differ in seed.

Exit codes: 0 compared (whatever the differences), 1 failure, 2 bad input,
3 a regression beyond noise and beyond --tolerance: lower entities/s,
higher latency (by more than the tolerance, in percent of DIR1's), or a
higher throttled share (by more than the tolerance in percentage points).
Without --tolerance compare only reports.

Writes nothing unless --out DIR is given: then the overlaid charts
(index.html) and compare.csv go there, never inside DIR1 or DIR2.`

func compareCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "compare", compareHelp)
	out := fs.String("out", "", "directory for the overlaid charts and compare.csv, outside both inputs (default: none, print only)")
	tolText := fs.String("tolerance", "", "exit 3 if a run regresses beyond noise by more than this, such as 5% (points for the throttled share); default: report only")
	alpha := fs.Float64("alpha", results.DefaultAlpha, "significance level: a difference with p below it is beyond noise")
	var pos []string
	rest := args
	for len(rest) > 0 { // directories and flags in any order
		if err := parseWords(fs, rest); err != nil {
			return err
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
	tol := math.NaN()
	if *tolText != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(*tolText), "%"), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return usagef("--tolerance %q: give a percentage of 0 or more, such as 5%%", *tolText)
		}
		tol = v
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usagef("--alpha %v: give a significance level between 0 and 1, such as 0.05", *alpha)
	}
	if *out != "" {
		for _, in := range pos {
			if within(*out, in) {
				return usagef("--out %s is inside the input %s: give a directory outside both inputs, such as results/compare", *out, in)
			}
		}
	}
	a, err := readCompared(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	b, err := readCompared(pos[1])
	if err != nil {
		return usagef("%v", err)
	}
	if (a.Set.Mode == runDirMode) != (b.Set.Mode == runDirMode) {
		return usagef("%s is a %s and %s a %s: compare two suites, or two runs' directories (run --out)", pos[0], dirKind(a), pos[1], dirKind(b))
	}
	var figs []workloads.Figure
	if a.Set.Mode != runDirMode { // a run's directory draws no figure
		if figs, err = setFigures(&a.Set); err != nil { // refuses a set that mixes engine models, whose numbers compare nothing
			return err
		}
		if _, err := setFigures(&b.Set); err != nil {
			return err
		}
	}
	cmp := charts.NewComparison(a, b)
	if len(cmp.Pairs) == 0 && a.Set.Mode == runDirMode && len(a.Set.Runs) == 1 && len(b.Set.Runs) == 1 {
		// Two runs' directories: the question is how the one run differs
		// from the other, whatever each is named.
		cmp.Pairs = []charts.Pair{{A: a.Set.Runs[0], B: b.Set.Runs[0]}}
	}
	if len(cmp.Pairs) == 0 && a.Set.Mode == runDirMode {
		return usagef("%s holds %d run(s) and %s %d, none of one ID: give two runs' directories of one run each, or of runs with the same IDs", pos[0], len(a.Set.Runs), pos[1], len(b.Set.Runs))
	}
	if len(cmp.Pairs) == 0 {
		return fmt.Errorf("%s and %s have no run in common to compare", pos[0], pos[1])
	}
	var metrics []*results.Metric
	for _, name := range compareMetrics {
		m, err := results.LookupMetric(name)
		if err != nil {
			return err
		}
		metrics = append(metrics, m)
	}
	for i := range cmp.Pairs {
		p := &cmp.Pairs[i]
		if err := readHlogs(a, p.A, b, p.B); err != nil {
			return err
		}
		p.Diffs = results.CompareRun(p.A, p.B, metrics, *alpha)
		p.A.IntervalHists, p.B.IntervalHists = nil, nil // a suite's histograms are most of its memory
	}
	regressions := writeComparison(e.stdout, cmp, tol)
	if *out != "" {
		if err := cmp.Write(*out, workloads.DrawAll(figs, a.Set.Runs), workloads.DrawAll(figs, b.Set.Runs)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "charts: %s\n", filepath.Join(*out, "index.html"))
	}
	if regressions > 0 {
		return &regressionError{fmt.Sprintf("%d regression(s) beyond noise and the %g%% tolerance, marked REGRESSION above", regressions, tol)}
	}
	return nil
}

// runDirMode is the mode compare gives a run's directory (run --out),
// read as a set of its runs.
const runDirMode = "run"

// readCompared reads a suite's result directory, or a run's as a set of
// the runs it holds.
func readCompared(path string) (*results.Dir, error) {
	if holdsSuite(path) {
		return results.ReadDir(path)
	}
	runs, err := readRunDir(path)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s holds no results: no %s and no run records there", path, results.SetFile)
	}
	return &results.Dir{Path: path, Set: results.Set{Mode: runDirMode, Runs: runs}}, nil
}

// dirKind names what a compared directory holds.
func dirKind(d *results.Dir) string {
	if d.Set.Mode == runDirMode {
		return "run's directory"
	}
	return "suite's result directory"
}

// readHlogs reads both runs' interval logs, for their per-second latency;
// a run stored without one is compared on the median and p99 its
// intervals store.
func readHlogs(a *results.Dir, ra *results.Run, b *results.Dir, rb *results.Run) error {
	for _, x := range []struct {
		d *results.Dir
		r *results.Run
	}{{a, ra}, {b, rb}} {
		if err := x.r.ReadHlog(x.d.HlogPath(x.r)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return usagef("%v", err)
		}
	}
	return nil
}

// writeComparison prints each run's differences with their verdicts and a
// summary, and returns how many are regressions beyond tol (NaN: none
// counted).
func writeComparison(w io.Writer, cmp *charts.Comparison, tol float64) int {
	fmt.Fprintf(w, "A = %s (%s), B = %s (%s)\n", cmp.A.Path, describeSet(&cmp.A.Set), cmp.B.Path, describeSet(&cmp.B.Set))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tmetric\tA\tB\tchange\tverdict")
	var total, beyond, worse, regressions int
	var worst []string
	for _, p := range cmp.Pairs {
		for i, d := range p.Diffs {
			id := ""
			if i == 0 {
				id = p.Name()
			}
			verdict := d.Verdict()
			total++
			if d.Beyond() {
				beyond++
				if d.Worse() {
					worse++
				}
			}
			if !math.IsNaN(tol) && d.Regression(tol) {
				regressions++
				verdict += "  REGRESSION"
				worst = append(worst, p.Name()+" "+d.Metric.Name+" "+d.ChangeText())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", id, d.Metric.Name, results.FormatValue(d.A, d.Metric.Unit), results.FormatValue(d.B, d.Metric.Unit), d.ChangeText(), verdict)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%s, %d differences: %d beyond noise (%d worse in B, %d better), %d within noise or untested\n",
		plural(len(cmp.Pairs), "run"), total, beyond, worse, beyond-worse, total-beyond)
	if !math.IsNaN(tol) {
		if regressions == 0 {
			fmt.Fprintf(w, "no regression beyond noise and the %g%% tolerance\n", tol)
		} else {
			fmt.Fprintf(w, "%d regression(s) beyond noise and the %g%% tolerance: %s\n", regressions, tol, strings.Join(worst, ", "))
		}
	}
	for _, c := range cmp.Claims {
		fmt.Fprintf(w, "%s: A %s (%s), B %s (%s)\n", c.ID, verdict(c.A.Pass), results.FormatValue(c.A.Measured, c.A.Unit), verdict(c.B.Pass), results.FormatValue(c.B.Measured, c.B.Unit))
	}
	return regressions
}

// within reports whether path is dir or lies inside it, symbolic links
// resolved as far as path exists.
func within(path, dir string) bool {
	p, d := realPath(path), realPath(dir)
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is path made absolute with the symbolic links of its longest
// existing part resolved.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
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
	return fmt.Sprintf("%s, %s, %s", s.Mode, target, plural(len(s.Runs), "run"))
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
