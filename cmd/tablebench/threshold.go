package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// thresholdFlags are the repeatable --threshold flag: each is parsed as it
// is given, so a malformed one is refused before anything runs.
type thresholdFlags []results.Threshold

func (f *thresholdFlags) String() string {
	var s []string
	for _, t := range *f {
		s = append(s, t.Text)
	}
	return strings.Join(s, " ")
}

func (f *thresholdFlags) Set(v string) error {
	t, err := results.ParseThreshold(v)
	if err != nil {
		return err
	}
	*f = append(*f, t)
	return nil
}

const thresholdHelp = "a bar the run's numbers must clear, repeatable, such as p99<50ms, throttled<0.1%, entities_per_sec>=1800 or get.p99<20ms (an operation's); " +
	"latency of successful requests in ms, s or us, shares in %; exit 4 if one fails"

// register binds --threshold.
func (f *thresholdFlags) register(fs *flagSet) { fs.Var(f, "threshold", thresholdHelp) }

// checkOps refuses a threshold on an operation that none of the runs does:
// it could never be measured.
func (f thresholdFlags) checkOps(ops []workloads.OpKind) error {
	for _, t := range f {
		if t.Op == "" || slices.Contains(ops, workloads.OpKind(t.Op)) {
			continue
		}
		if err := workloads.Ops().Check(workloads.OpKind(t.Op)); err != nil {
			return usagef("--threshold %s: %v", t.Text, err)
		}
		var names []string
		for _, o := range ops {
			names = append(names, string(o))
		}
		return usagef("--threshold %s: no run here does %s requests (they do %s): name an operation they do, or leave out the %s. prefix", t.Text, t.Op, strings.Join(names, ", "), t.Op)
	}
	return nil
}

// check checks every threshold against a run, keeping the results in its
// record, and returns how many fail.
func (f thresholdFlags) check(r *results.Run) (failed int) {
	r.Thresholds = nil
	for _, t := range f {
		c := t.Check(r)
		r.Thresholds = append(r.Thresholds, c)
		if !c.Pass {
			failed++
		}
	}
	return failed
}

// writeThresholds prints a run's checked thresholds, one a line.
func writeThresholds(w io.Writer, checked []results.ThresholdResult) {
	if len(checked) == 0 {
		return
	}
	width := 0
	for _, c := range checked {
		width = max(width, len(c.Threshold))
	}
	fmt.Fprintln(w, "thresholds:")
	for _, c := range checked {
		fmt.Fprintf(w, "  %s  %-*s  measured %s\n", c.Verdict(), width, c.Threshold, c.MeasuredText())
	}
}

// failedThresholds is the error of a run that fails n thresholds.
func failedThresholds(n int) error {
	return &thresholdError{fmt.Sprintf("%d threshold(s) fail, marked FAIL above", n)}
}

// checkSweep checks every threshold against each run of a sweep and
// prints a line per threshold: passed by every run, or which runs failed
// it and what they measured. A threshold on an operation is checked on the
// runs that do it. It returns how many thresholds fail in some run.
func (f thresholdFlags) checkSweep(w io.Writer, runs []*results.Run) (failed int) {
	if len(f) == 0 {
		return 0
	}
	for _, r := range runs {
		r.Thresholds = nil
	}
	width := 0
	for _, t := range f {
		width = max(width, len(t.Text))
	}
	fmt.Fprintln(w, "thresholds:")
	for _, t := range f {
		var fails []string
		checked := 0
		for _, r := range runs {
			if t.Op != "" {
				if v, _ := r.OpRun(t.Op); v == nil {
					continue
				}
			}
			c := t.Check(r)
			r.Thresholds = append(r.Thresholds, c)
			checked++
			if !c.Pass {
				fails = append(fails, fmt.Sprintf("%s (%s)", r.ID, c.MeasuredText()))
			}
		}
		verdict := fmt.Sprintf("PASS  %-*s  in all %d runs", width, t.Text, checked)
		if len(fails) > 0 {
			failed++
			verdict = fmt.Sprintf("FAIL  %-*s  in %d of %d runs: %s", width, t.Text, len(fails), checked, strings.Join(fails, ", "))
		}
		fmt.Fprintln(w, "  "+verdict)
	}
	return failed
}
