package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/advise"
	"github.com/tablebench/tablebench/workloads/gctune"
)

// adviseFile is the record of an advise in its --out directory, from
// which report rebuilds its page; the runs' records are in runs/.
const adviseFile = "advise.json"

func adviseCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "advise", "[flags] FILE   (a workload file with target_rate, profiles and candidates; docs/advise.md)")
	cfg := advise.DefaultConfig()
	var out string
	var asJSON, quiet bool
	var thresholds thresholdFlags
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every random choice: keys, payloads, the engine's draws")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "each run's warm-up, model time (a workload's own warmup wins)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "each run's measured time, model time (a workload's own duration wins)")
	fs.IntVar(&cfg.Parallel, "parallel", 2, "runs at once, each in virtual time on a core")
	fs.StringVar(&out, "out", "", "directory to store the runs' records, advise.json and a page with the ranked tables and each candidate's heat map ('tablebench report DIR' rebuilds it)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (candidates[], winner per profile) instead of the tables")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	fs.Var(&thresholds, "threshold", strings.TrimSuffix(thresholdHelp, "; exit 4 if one fails")+"; checked on every candidate at the target, and the exit is 4 when a profile's winner (or, on a tie, every tied candidate) fails one")
	if err := parseWords(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 { // flags after the file
		file := fs.Arg(0)
		if err := parseWords(fs, fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q after %s: give one advise file", fs.Arg(0), file)
		}
		fs.Parse([]string{file})
	}
	if fs.NArg() != 1 {
		return usagef("give one advise file, as in 'tablebench advise designs.yaml' (docs/advise.md shows one)")
	}
	if cfg.Parallel < 1 {
		return usagef("--parallel %d: run at least 1 at a time", cfg.Parallel)
	}
	if cfg.Duration <= 0 || cfg.Warmup < 0 {
		return usagef("--duration must be above 0 and --warmup at least 0, such as --duration 50s --warmup 10s")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	f, err := advise.Parse(data)
	if err != nil {
		return usagef("%s: %v", fs.Arg(0), err)
	}
	// Every profile is resolved (a file read once) and every run planned
	// before anything runs, so bad input costs nothing.
	files := map[string]*profileFile{}
	engineFor := func(name string) targetFlags {
		return targetFlags{target: "engine", engineFlags: engineFlags{profile: name, presplit: true, balancer: "accelerated", latencyScale: 1, files: files}}
	}
	cfg.Profile = func(name string) (engine.Profile, error) {
		tf := engineFor(name)
		p, _, err := tf.resolveProfile()
		return p, err
	}
	cfg.NewTarget = func(name string, seed uint64) (workloads.Target, func(), error) {
		tf := engineFor(name)
		tg, release, err := tf.build(e.getenv, seed)
		return tg, release, err
	}
	for _, name := range f.Profiles {
		p, err := cfg.Profile(name)
		if err == nil {
			err = advise.Usable(name, p)
		}
		if err != nil {
			return usagef("%s: profiles: %v", fs.Arg(0), strings.TrimPrefix(err.Error(), "--profile: "))
		}
	}
	var ops []workloads.OpKind
	for _, c := range f.Candidates {
		s, err := c.Workload.Spec(workloads.DefaultSpec())
		if err != nil {
			return usagef("%s: candidate %s: %v", fs.Arg(0), c.Name, err)
		}
		ops = append(ops, s.Op)
		for _, m := range s.Mix {
			ops = append(ops, m.Op)
		}
	}
	if err := thresholds.checkOps(ops); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(filepath.Join(out, "runs"), 0o755); err != nil {
			return usagef("--out: cannot create %s: %v", out, err)
		}
	}
	defer virtualCores(cfg.Parallel)()
	if len(f.Profiles) > 0 { // every run is the engine's, in virtual time
		gctune.Use(gctune.Store)
		gctune.HugePages()
	}
	start := time.Now()
	if !quiet {
		fmt.Fprintf(e.stderr, "advise: %d candidates x %d profile(s) at %g requests/s, %v warm-up + %v measured each, %d at a time\n",
			len(f.Candidates), len(f.Profiles), f.TargetRate, cfg.Warmup, cfg.Duration, cfg.Parallel)
		cfg.Started = func(id string, _ *workloads.Coordinator) { fmt.Fprintf(e.stderr, "  running %s\n", id) }
	}
	rep, err := advise.Advise(ctx, cfg, f)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: nothing is ranked")
		}
		return usagef("%v", err)
	}
	failed := checkAdvice(rep, thresholds)
	if asJSON {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		rep.WriteText(e.stdout)
		writeAdviceThresholds(e.stdout, rep, len(thresholds) > 0)
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "advise: %d runs in %.1f s of wall time\n", len(rep.Runs()), time.Since(start).Seconds())
	}
	if out != "" {
		if err := storeAdvice(out, rep); err != nil {
			return fmt.Errorf("the advice above could not be stored in %s: %w", out, err)
		}
		if !asJSON {
			fmt.Fprintf(e.stdout, "page: %s\n", filepath.Join(out, "index.html"))
		}
	}
	if failed > 0 {
		return failedThresholds(failed)
	}
	return nil
}

// checkAdvice checks every threshold on each candidate at the target and
// returns how many a profile's winner fails (on a tie, how many every
// tied candidate fails): advise recommends the winner, and a pipeline
// asks whether the design it would deploy clears its bars.
func checkAdvice(rep *advise.Report, ts thresholdFlags) (failed int) {
	if len(ts) == 0 {
		return 0
	}
	byName := map[string]*results.Run{}
	for _, r := range rep.Runs() {
		byName[r.ID] = r
	}
	for i := range rep.Candidates {
		row := &rep.Candidates[i]
		r := byName[row.Run]
		for _, t := range ts {
			if t.Op != "" {
				if v, _ := r.OpRun(t.Op); v == nil {
					continue
				}
			}
			row.Thresholds = append(row.Thresholds, t.Check(r))
		}
		r.Thresholds = row.Thresholds
	}
	for _, v := range rep.Winner {
		leaders := v.Tied
		if v.Winner != "" {
			leaders = []string{v.Winner}
		}
		for _, t := range ts {
			all := len(leaders) > 0
			for _, row := range rep.Candidates {
				if row.Profile != v.Profile || !contains(leaders, row.Name) {
					continue
				}
				pass := true
				for _, c := range row.Thresholds {
					if c.Threshold == t.Text && !c.Pass {
						pass = false
					}
				}
				all = all && !pass
			}
			if all {
				failed++
			}
		}
	}
	return failed
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// writeAdviceThresholds prints each candidate's thresholds, a line each.
func writeAdviceThresholds(w io.Writer, rep *advise.Report, any bool) {
	if !any {
		return
	}
	fmt.Fprintln(w, "\nthresholds (the exit is 4 when a profile's winner, or every tied candidate, fails one):")
	for _, row := range rep.Candidates {
		for _, c := range row.Thresholds {
			fmt.Fprintf(w, "  %s  %s/%s  %s  measured %s\n", c.Verdict(), row.Profile, row.Name, c.Threshold, c.MeasuredText())
		}
	}
}

// storeAdvice writes the runs' records into dir/runs, the report as
// dir/advise.json, and its page.
func storeAdvice(dir string, rep *advise.Report) error {
	for _, r := range rep.Runs() {
		if err := store(filepath.Join(dir, "runs"), r); err != nil {
			return err
		}
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, adviseFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}); err != nil {
		return err
	}
	return writeAdvicePage(dir, rep)
}

// holdsAdvice reports whether dir holds an advise's results.
func holdsAdvice(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, adviseFile))
	return err == nil
}

// rebuildAdvice rebuilds an advise's page from dir, running nothing.
func rebuildAdvice(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, adviseFile))
	if err != nil {
		return "", err
	}
	var rep advise.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return "", fmt.Errorf("%s: %v", filepath.Join(dir, adviseFile), err)
	}
	if err := rep.Attach(func(id string) (*results.Run, error) {
		f, err := os.Open(filepath.Join(dir, "runs", id+".json"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return results.ReadRun(f)
	}); err != nil {
		return "", err
	}
	if err := writeAdvicePage(dir, &rep); err != nil {
		return "", err
	}
	return filepath.Join(dir, "index.html"), nil
}

// writeAdvicePage writes the page of an advise into dir.
func writeAdvicePage(dir string, rep *advise.Report) error {
	a := &charts.Advice{Title: "Which key design?",
		Subtitle: fmt.Sprintf("%d candidates at %s requests/s under %s: each run %gs warm-up then %gs measured, in virtual time.",
			len(rep.Candidates)/max(len(rep.Profiles), 1), advise.Num(rep.TargetRate), strings.Join(rep.Profiles, ", "), rep.WarmupSec, rep.MeasuredSec),
		Paras: []string{
			"Each candidate ran under each profile on the in-tree engine, in virtual time, as an open load at the target rate with enough simulated clients (threads for half a second of waiting, VMs at most 40% busy) that the client never limits; a run where it did says so.",
			"Ranks go by the share of the offered requests that succeeded, then the throttled share, then the p99 latency; two candidates share a rank (=) unless their per-second samples differ beyond noise (a Mann-Whitney U test, as compare uses) and by a margin worth acting on. docs/advise.md says more.",
			"The records are in runs/ and the ranking in advise.json, beside this page; 'tablebench report' on this directory rebuilds it without running anything.",
		}}
	byID := map[string]*results.Run{}
	for _, r := range rep.Runs() {
		byID[r.ID] = r
	}
	for _, v := range rep.Winner {
		head, rows, why := rep.Table(v.Profile)
		ap := charts.AdviceProfile{Name: v.Profile, Verdict: v.Summary, Tie: v.Winner == "", Head: head, Rows: rows, Why: why}
		ap.Hashed = v.Hashed
		for _, row := range rep.Candidates {
			if row.Profile == v.Profile {
				ap.Runs = append(ap.Runs, byID[row.Run])
				ap.Names = append(ap.Names, row.Name)
			}
		}
		a.Profiles = append(a.Profiles, ap)
	}
	return charts.WriteAdvice(dir, a)
}
