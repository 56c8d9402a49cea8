package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/casestudy"
)

// suiteFlags are the flags figures and sweep share.
type suiteFlags struct {
	tf       targetFlags
	quick    bool
	out      string
	resume   bool
	quiet    bool
	parallel int
	check    bool
	seed     uint64
	duration time.Duration
	warmup   time.Duration
	shf      shardFlags
	jobID    string
	// thresholds are a sweep's bars, checked against each of its runs.
	thresholds thresholdFlags

	endpoint  string // the Table endpoint the target flags name, "" for the engine
	confirmed bool   // the user has confirmed the plan
}

// register binds the flags of a suite; the case study's (figures) has
// modes and claims, a sweep has neither.
func (s *suiteFlags) register(fs *flagSet, figures bool) {
	s.tf.register(fs.FlagSet, false)
	if figures {
		fs.BoolVar(&s.quick, "quick", false, "shorter runs: 20 s measured after 5 s of warm-up (2 minutes where rare throttling is counted)")
		fs.BoolVar(&s.check, "check", false, "exit 1 if a claim fails or a run warns that its numbers cannot be trusted")
	} else {
		fs.BoolVar(&s.check, "check", false, "exit 1 if a run warns that its numbers cannot be trusted")
		fs.Var(&s.thresholds, "threshold", strings.Replace(thresholdHelp, "the run's numbers", "every run's numbers", 1))
	}
	fs.StringVar(&s.out, "out", "", "result directory (default results/<UTC time>, with results/latest pointing to it)")
	fs.BoolVar(&s.resume, "resume", false, "finish the suite in --out, made with the same settings (target, profile, time scale, presplit, balancer, seed, mode): skip runs stored with the same spec")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress on stderr")
	fs.IntVar(&s.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once (virtual time only; wall-time runs go one at a time)")
	fs.Uint64Var(&s.seed, "seed", 1, "seed of every run")
	fs.DurationVar(&s.duration, "duration", 0, "measured time of every run, overriding the mode's (0 keeps it)")
	fs.DurationVar(&s.warmup, "warmup", -1, "warm-up of every run, overriding the mode's (-1 keeps it)")
	s.shf.register(fs.FlagSet)
	fs.StringVar(&s.jobID, "job-id", "", "with --shard: the suite's job ID, the same in every shard; each run's is derived from it")
}

// shardPlan makes every run of the plan the same shard of itself, each run
// with a job ID of its own derived from the suite's, so the shards of each
// run meet in that run's table. A run of fewer VMs than shards is split
// into as many shards as it has VMs, and the shards beyond leave it out (a
// run of one VM is shard 0's alone, unsharded). --start-at aligns the first
// run; the rest meet as they come. It returns the runs this shard runs.
func (s *suiteFlags) shardPlan(plan []workloads.PlannedRun, getenv func(string) string) ([]workloads.PlannedRun, error) {
	k, n, start, err := s.shf.resolve(getenv)
	if err != nil {
		return nil, err
	}
	if n < 2 {
		return plan, nil
	}
	if s.tf.target != "table" {
		return nil, usagef("shards meet in the service's table: a sharded suite needs --target table (a served engine will do)")
	}
	if s.jobID == "" { // each run's is derived from it, and checked with the run's spec
		return nil, usagef("a sharded suite needs --job-id of 1 to 28 letters and digits, the same in every shard")
	}
	var mine []workloads.PlannedRun
	first := true
	for i, pr := range plan {
		pr.Spec.JobID = fmt.Sprintf("%sr%03d", s.jobID, i)
		runShards := min(n, pr.Spec.VMs)
		if k >= runShards {
			continue // this run has no VM for this shard
		}
		at := time.Time{}
		if first {
			at, first = start, false
		}
		s.shf.apply(&pr.Spec, k, runShards, at)
		if err := pr.Spec.Validate(); err != nil {
			return nil, usagef("%s: %v", pr.ID, err)
		}
		mine = append(mine, pr)
	}
	s.parallel = 1 // shards of one run must meet before the next run starts
	return mine, nil
}

// override applies --duration and --warmup to planned runs.
func (s *suiteFlags) override(plan []workloads.PlannedRun) error {
	if s.duration < 0 {
		return usagef("--duration %v must not be negative", s.duration)
	}
	if s.parallel < 1 {
		return usagef("--parallel %d: run at least 1 at a time", s.parallel)
	}
	for i := range plan {
		plan[i].Spec.Seed = s.seed
		plan[i].Spec.KeepTable = s.tf.keep
		if s.duration > 0 {
			plan[i].Spec.Duration = s.duration
		}
		if s.warmup >= 0 {
			plan[i].Spec.Warmup = s.warmup
		}
	}
	return nil
}

// targetFor returns the target flags of one planned run: an experiment's
// run may set up its own engine.
func (s *suiteFlags) targetFor(pr workloads.PlannedRun) (targetFlags, error) {
	tf := s.tf
	if tf.target != "engine" {
		return tf, nil
	}
	if p := pr.Engine.Profile; p != "" {
		tf.profile = p
	}
	if pr.Engine.Cold {
		tf.presplit = false
	}
	if b := pr.Engine.Balancer; b != "" {
		tf.balancer = b
	}
	if ru := pr.Engine.RU; ru > 0 {
		tf.ru, tf.ruMax = ru, 0
	}
	// --ru and --ru-max provision the cosmos profile's runs; an
	// experiment's run that chose another profile has none to provision.
	if p, err := engine.ProfileByName(tf.profile); err == nil && !p.RequestUnits() {
		tf.ru, tf.ruMax = 0, 0
	}
	// A suite of profile none would run for hours of wall time; say so
	// rather than start it.
	if p, _, err := tf.resolveProfile(); err != nil {
		return tf, err
	} else if tf.timeScale == 0 && !p.Model {
		return tf, usagef("--profile %s has no modelled time to run virtually: give --time-scale 1 to run the suite in wall time", tf.profile)
	}
	return tf, nil
}

// newTarget returns the suite's per-run target factory.
func (s *suiteFlags) newTarget(getenv func(string) string) func(workloads.PlannedRun) (workloads.Target, func(), error) {
	return func(pr workloads.PlannedRun) (workloads.Target, func(), error) {
		tf, err := s.targetFor(pr)
		if err != nil {
			return nil, nil, err
		}
		return tf.build(getenv, pr.Spec.Seed)
	}
}

// checkTarget checks the target flags of the suite and of each of its runs,
// building no target, so bad flags fail before anything runs; it notes the
// Table endpoint they name.
func (s *suiteFlags) checkTarget(getenv func(string) string, plan []workloads.PlannedRun) error {
	for _, pr := range append([]workloads.PlannedRun{{}}, plan...) {
		tf, err := s.targetFor(pr)
		if err != nil {
			return err
		}
		if tf.target == "table" { // every run names the same endpoint
			s.endpoint, err = tf.check(getenv)
			return err
		}
		if _, err := tf.check(getenv); err != nil {
			if pr.ID != "" { // an experiment's own engine
				err = fmt.Errorf("%s: %w", pr.ID, err)
			}
			return err
		}
	}
	return nil
}

// settings returns what the suite's numbers depend on besides its runs'
// specs, by flag: the target (and the endpoint it resolved to), the
// engine's model, the seed, the mode, the shard and the durations given.
// figures says whether the suite has modes (--quick).
func (s *suiteFlags) settings(figures bool, getenv func(string) string) (results.Settings, error) {
	set := results.Settings{results.SettingTarget: s.tf.target, "seed": strconv.FormatUint(s.seed, 10)}
	switch s.tf.target {
	case "engine":
		p, file, err := s.tf.resolveProfile()
		if err != nil {
			return nil, err
		}
		set["profile"], set["time-scale"], set["presplit"], set["balancer"] = p.Name, strconv.FormatFloat(s.tf.timeScale, 'g', -1, 64), strconv.FormatBool(s.tf.presplit), s.tf.balancer
		if file != nil && !file.Builtin { // two files may give one name to two models
			set[settingProfileSHA] = file.SHA256
		}
	default:
		set["endpoint"] = s.endpoint
	}
	if figures {
		set["quick"] = strconv.FormatBool(s.quick)
	}
	if s.duration > 0 {
		set["duration"] = s.duration.String()
	}
	if s.warmup >= 0 {
		set["warmup"] = s.warmup.String()
	}
	if k, n, _, err := s.shf.resolve(getenv); err != nil {
		return nil, err
	} else if n > 1 {
		set["shard"] = fmt.Sprintf("%d/%d", k, n)
	}
	return set, nil
}

// openOut opens the result directory, by default a new one under results/
// with results/latest pointing to it, for a suite of mode made with
// settings. It refuses to resume a suite made in another mode, with other
// settings or by another version: its runs and the new ones would mix two
// kinds of numbers in one set, and its claims compare them.
func (s *suiteFlags) openOut(mode string, settings results.Settings) (*results.Dir, error) {
	out := s.out
	if out == "" {
		if s.resume {
			return nil, usagef("--resume needs --out, the directory of the suite to finish")
		}
		var err error
		if out, err = freshDir("results", time.Now().UTC().Format("20060102T150405Z")); err != nil {
			return nil, usagef("--out: %v; give --out DIR", err)
		}
	}
	if s.resume {
		if _, err := os.Stat(filepath.Join(out, results.SetFile)); err != nil {
			return nil, usagef("--resume --out %s: there is no suite there to finish (no %s); leave out --resume to start one", out, results.SetFile)
		}
	}
	dir, err := results.OpenDir(out)
	if err != nil {
		return nil, usagef("--out: %v", err)
	}
	if err := dir.Lock(); err != nil {
		return nil, usagef("--out: %v", err)
	}
	if !s.resume && len(dir.Set.Runs) > 0 {
		dir.Close()
		return nil, usagef("--out %s already holds results: give --resume to finish them, or another directory", out)
	}
	if len(dir.Set.Runs) > 0 {
		if err := sameSuite(out, &dir.Set, mode, settings); err != nil {
			dir.Close()
			return nil, err
		}
	}
	dir.Set.Tablebench, dir.Set.Mode, dir.Set.Settings = version, mode, settings
	if s.out == "" {
		latest := filepath.Join(filepath.Dir(out), "latest") // beside the results, wherever they are
		os.Remove(latest)
		os.Symlink(filepath.Base(out), latest)
	}
	return dir, nil
}

// freshDir makes a new directory under parent named name, or name-2,
// name-3, ... when it is taken: two suites started in one second (a
// script's) must not land in one directory, where the second would be
// refused as a resume of the first.
func freshDir(parent, name string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		dir := filepath.Join(parent, name)
		if i > 1 {
			dir += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755) // the claim: two processes never get one name
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i >= 1000 {
			return "", err
		}
	}
}

// sameSuite refuses to add runs of mode made with settings to the stored
// set in out, unless the set was made the same way.
func sameSuite(out string, set *results.Set, mode string, settings results.Settings) error {
	fix := "use --out NEWDIR for a new set, or "
	switch {
	case set.Tablebench != version:
		return usagef("--out %s was made by tablebench %s, and this is %s: their numbers would mix in one set; %sfinish it with tablebench %s", out, set.Tablebench, version, fix, set.Tablebench)
	case set.Settings == nil:
		return usagef("--out %s does not record the settings it was made with (an earlier tablebench made it), so they cannot be checked against these: use --out NEWDIR", out)
	case set.Mode != mode && (set.Mode == "sweep" || mode == "sweep"):
		return usagef("--out %s holds %s, and this is %s: use --out NEWDIR", out, suiteKind(set.Mode), suiteKind(mode))
	}
	name, stored, given, differ := set.Settings.Diff(settings)
	if !differ {
		return nil
	}
	if name == settingProfileSHA {
		return usagef("--out %s was made with %s, and this --profile gives other parameters under its name (sha256 %.12s, not %.12s): the set would mix two models as one; %srerun with the file it was made with", out, profileText(set.Settings["profile"], stored), given, stored, fix)
	}
	return usagef("--out %s was made %s, and this one uses %s: the set would mix both; %srerun with %s", out, withFlag(name, stored), flagText(name, given), fix, flagText(name, stored))
}

// settingProfileSHA is the setting that holds the hash of a profile read
// from a file, when it is not the built-in profile of its name.
const settingProfileSHA = "profile-sha256"

// profileText names a suite's profile and whether it came from a file.
func profileText(name, sha string) string {
	if sha == "" {
		return "profile " + name
	}
	return fmt.Sprintf("profile %s from a file (sha256 %.12s)", name, sha)
}

func suiteKind(mode string) string {
	if mode == "sweep" {
		return "a sweep"
	}
	return "figures"
}

// flagText is a setting as its flag is given, or its absence.
func flagText(name, value string) string {
	switch value {
	case "":
		return "no --" + name
	case "true":
		return "--" + name
	case "false":
		return "--" + name + "=false"
	}
	return "--" + name + " " + value
}

func withFlag(name, value string) string {
	if value == "" {
		return "without --" + name
	}
	return "with " + flagText(name, value)
}

func figuresCmd(ctx context.Context, e *env, args []string) error {
	return catalogCmd(ctx, e, args, "figures", "comma-separated figures to run, such as 3,8,15 (default all, 3-15)",
		"name figures, such as 3,8,15", func(only string) ([]workloads.Figure, error) {
			ids, err := workloads.ParseIDs(only)
			if err != nil {
				return nil, err
			}
			return workloads.Select(casestudy.Figures(), ids)
		})
}

func experimentsCmd(ctx context.Context, e *env, args []string) error {
	return catalogCmd(ctx, e, args, "experiments", "comma-separated experiments to run: "+strings.Join(casestudy.ExperimentNames(), ", ")+" (default all)",
		"name experiments, such as retry,append", func(only string) ([]workloads.Figure, error) {
			names, err := list("--only", only)
			if err != nil {
				return nil, err
			}
			figs, err := casestudy.ExperimentFigures(names)
			if err != nil {
				return nil, err
			}
			return workloads.Select(casestudy.All(), figureIDs(figs))
		})
}

func figureIDs(figs []workloads.Figure) []int {
	var ids []int
	for _, f := range figs {
		ids = append(ids, f.ID)
	}
	return ids
}

// catalogCmd runs figures of a catalog: the case study's or the experiments.
func catalogCmd(ctx context.Context, e *env, args []string, name, onlyHelp, onlyHint string, pick func(only string) ([]workloads.Figure, error)) error {
	fs := newFlagSet(e, name, "[--only LIST] [--quick] [--out DIR] [--resume] [flags]")
	var sf suiteFlags
	sf.register(fs, true)
	only := fs.String("only", "", onlyHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := sf.tf.contradictions(fs.FlagSet); err != nil {
		return err
	}
	if *only == "" && given(fs.FlagSet, "only") {
		return usagef("--only is empty: %s, or leave the flag out for all of them", onlyHint)
	}
	figs, err := pick(*only)
	if err != nil {
		return usagef("--only: %v", err)
	}
	if name == "experiments" && sf.tf.target != "engine" {
		return usagef("the experiments set up the in-tree engine (profiles, cold tables, the balancer): they run on --target engine only")
	}
	mode := workloads.FullMode()
	if sf.quick {
		mode = workloads.QuickMode()
	}
	return sf.run(ctx, e, suiteRun{
		name: name, args: args, mode: mode.Name, figures: true, plan: workloads.Plan(figs, mode),
		record: func(set *results.Set) {
			for _, f := range figs {
				if !slices.Contains(set.Figures, f.ID) { // a resumed suite already lists its figures
					set.Figures = append(set.Figures, f.ID)
				}
			}
		},
		report: func(dir *results.Dir, _ []workloads.PlannedRun) ([]workloads.Figure, []results.CheckedClaim, []string, error) {
			all, err := setFigures(&dir.Set) // a directory may hold figures and experiments together
			if err != nil {
				return nil, nil, nil, err
			}
			dir.Set.Claims = casestudy.Check(all, dir.Set.Runs)
			return all, dir.Set.Claims, reportSummary(dir, &sf.tf, mode), nil
		},
	})
}

// suiteRun is what a suite command (figures, experiments, sweep) decides;
// suiteFlags.run does the rest the same way for each.
type suiteRun struct {
	name    string // the command
	args    []string
	mode    string // recorded in the set: full, quick or sweep
	figures bool   // the suite has modes and claims
	plan    []workloads.PlannedRun
	// record adds what the command records in the set, before any run.
	record func(set *results.Set)
	// report returns, once the runs are stored, the figures the report
	// draws, the claims it checks and its summary; it may record more.
	report func(dir *results.Dir, plan []workloads.PlannedRun) ([]workloads.Figure, []results.CheckedClaim, []string, error)
}

// run runs a suite: it applies the duration flags to the plan, takes this
// shard's runs, checks the target flags (building no target), names the
// process's GC policy, asks before a plan goes off this machine, opens the
// result directory, runs what is not stored yet, and writes the report.
func (s *suiteFlags) run(ctx context.Context, e *env, r suiteRun) error {
	plan := r.plan
	var ops []workloads.OpKind
	for _, pr := range plan {
		if !slices.Contains(ops, pr.Spec.Op) {
			ops = append(ops, pr.Spec.Op)
		}
	}
	if err := s.thresholds.checkOps(ops); err != nil {
		return err
	}
	if err := s.override(plan); err != nil {
		return err
	}
	plan, err := s.shardPlan(plan, e.getenv)
	if err != nil {
		return err
	}
	if err := s.checkTarget(e.getenv, plan); err != nil {
		return err
	}
	settings, err := s.settings(r.figures, e.getenv)
	if err != nil {
		return err
	}
	s.tf.tune()
	if !s.resume {
		if err := s.confirm(e, workloads.Specs(plan)); err != nil {
			return err
		}
	}
	dir, err := s.openOut(r.mode, settings)
	if err != nil {
		return err
	}
	defer dir.Close()
	dir.Set.Command = "tablebench " + r.name + " " + strings.Join(r.args, " ")
	r.record(&dir.Set)
	if err := runSuite(ctx, e, s, dir, plan); err != nil {
		return err
	}
	figs, claims, summary, err := r.report(dir, plan)
	if err != nil {
		return err
	}
	var verdicts bytes.Buffer // after the report, as a run prints them after its summary
	failed := s.thresholds.checkSweep(&verdicts, storedRuns(dir, plan))
	if err := dir.Save(); err != nil {
		return err
	}
	if err := finishReport(e, s, dir, figs, claims, summary); err != nil {
		return err
	}
	e.stdout.Write(verdicts.Bytes())
	if failed > 0 {
		return failedThresholds(failed)
	}
	return nil
}

// storedRuns returns the stored runs of a plan, in its order.
func storedRuns(dir *results.Dir, plan []workloads.PlannedRun) []*results.Run {
	var runs []*results.Run
	for _, pr := range plan {
		if r := dir.Find(pr.ID); r != nil {
			runs = append(runs, r)
		}
	}
	return runs
}

// confirm asks before a suite sends anything to a Table endpoint off this
// machine. A fresh suite asks before its result directory is made, so a
// declined one leaves nothing behind.
func (s *suiteFlags) confirm(e *env, specs []workloads.Spec) error {
	if err := s.tf.confirm(e, s.endpoint, specs); err != nil {
		return err
	}
	s.confirmed = true
	return nil
}

// runSuite runs what of plan is not stored yet, storing each run as it ends.
func runSuite(ctx context.Context, e *env, sf *suiteFlags, dir *results.Dir, plan []workloads.PlannedRun) error {
	var todo []workloads.PlannedRun
	var specs []workloads.Spec
	for _, pr := range plan {
		if r := dir.Find(pr.ID); r != nil && sf.resume && workloads.SameSpec(r, pr.Spec) && !dir.Missing(r) {
			if err := dir.CheckHlog(r); err != nil { // the run is kept: its log must be its own
				return usagef("--resume: %v", err)
			}
			continue
		}
		todo = append(todo, pr)
		specs = append(specs, pr.Spec)
	}
	if !sf.confirmed {
		if err := sf.confirm(e, specs); err != nil {
			return err
		}
	}
	if len(todo) < len(plan) && !sf.quiet {
		fmt.Fprintf(e.stderr, "resuming: %d of %d runs already stored\n", len(plan)-len(todo), len(plan))
	}
	parallel := sf.parallel
	if !sf.tf.virtual() {
		parallel = 1 // runs in wall time share the machine: one at a time keeps them honest
	} else {
		defer virtualCores(min(parallel, len(todo)))()
	}
	suite := &workloads.Suite{Runs: todo, NewTarget: sf.newTarget(e.getenv), Parallel: parallel,
		Finished: func(pr workloads.PlannedRun, r *results.Run) error {
			for _, w := range r.Warnings {
				fmt.Fprintf(e.stderr, "warning: run %s: %s\n", r.ID, w)
			}
			return dir.Add(r)
		}}
	wall := sf.tf.wallPerPlanned()
	if wall > 0 && !sf.quiet && len(todo) > 0 {
		fmt.Fprintf(e.stderr, "%d runs in wall time, one at a time: about %s of warm-up and measurement\n", len(todo), plannedWall(todo, wall).Round(time.Second))
	}
	wait := watchSuite(e, sf, suite, wall)
	start := time.Now()
	err := suite.Run(ctx)
	wait()
	planOrder(dir, plan)
	if err != nil {
		if serr := dir.Save(); serr != nil { // results.json is written every few seconds: now, before saying it holds them
			return fmt.Errorf("%w; and the runs that finished could not be listed in %s: %v", err, dir.Path, serr)
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: the runs that finished are stored in %s; finish them with --resume --out %s", dir.Path, dir.Path)
		}
		return fmt.Errorf("%w (the runs that finished are stored in %s)", err, dir.Path)
	}
	if !sf.quiet {
		fmt.Fprintf(e.stderr, "%d runs in %s\n", len(todo), time.Since(start).Round(time.Second))
	}
	return nil
}

// watchSuite shows a suite's progress on stderr, unless --quiet: bars on
// a terminal, a line per finished run in a log (as in CI), so a long suite
// is never silent. It returns what waits for the bars to finish drawing.
func watchSuite(e *env, sf *suiteFlags, suite *workloads.Suite, wall float64) (wait func()) {
	if sf.quiet || len(suite.Runs) == 0 {
		return func() {}
	}
	var finished func(pr workloads.PlannedRun, r *results.Run)
	wait = func() {}
	if e.terminal {
		prog := newSuiteProgress(e.stderr, suite.Runs, wall, suite.Parallel)
		suite.Started, wait = prog.started, prog.wait
		finished = func(pr workloads.PlannedRun, _ *results.Run) { prog.finished(pr) }
	} else {
		lines := newSuiteLines(e.stderr, suite.Runs, wall, suite.Parallel)
		suite.Started, finished = lines.started, lines.finished
	}
	inner := suite.Finished
	suite.Finished = func(pr workloads.PlannedRun, r *results.Run) error {
		finished(pr, r)
		return inner(pr, r)
	}
	return wait
}

// planOrder lists the stored runs in the plan's order, not in the order
// parallel runs happened to finish, so that a suite's results.json repeats
// exactly for its seed. Runs the plan does not name (stored by an earlier
// suite in the same directory) keep their order after it.
func planOrder(dir *results.Dir, plan []workloads.PlannedRun) {
	pos := make(map[string]int, len(plan))
	for i, pr := range plan {
		pos[pr.ID] = i
	}
	at := func(r *results.Run) int {
		if i, ok := pos[r.ID]; ok {
			return i
		}
		return len(plan)
	}
	slices.SortStableFunc(dir.Set.Runs, func(a, b *results.Run) int { return cmp.Compare(at(a), at(b)) })
}

func reportSummary(dir *results.Dir, tf *targetFlags, mode workloads.Mode) []string {
	target := "the in-tree engine, profile " + tf.profile
	clock := "in virtual time"
	if !tf.virtual() && tf.target == "engine" {
		clock = fmt.Sprintf("in wall time at scale %g", tf.timeScale)
	}
	if tf.target != "engine" {
		target, clock = "a Table endpoint", "in wall time"
	}
	what := "Reproduction of the case study's Figures 3-15"
	var exps bool
	for _, id := range dir.Set.Figures {
		exps = exps || id > 200
	}
	if exps {
		what = "The case study's figures and the experiments its advice calls for (X claims, written from its text; where the model disagrees, the claim's note says why)"
	}
	return []string{
		fmt.Sprintf("%s on %s, %s: %s mode, %v measured after %v of warm-up (%v where rare throttling is counted; experiments that outlast the balancer say on their pages how long they measure).",
			what, target, clock, mode.Name, mode.Duration, mode.Warmup, mode.Long),
		"Every run follows the published method unless its page says otherwise: synchronous threads, no retries and a 3 s pause after any error, GUID PartitionKeys, RowKeys JobID_VMID_WorkerID_Index, 1,024-byte entities with one random Payload string.",
		"Each claim is checked by the reading written beside it, chosen once before any result. Where the paper leaves a parameter unstated, the figure's page says what was chosen.",
		fmt.Sprintf("Results: %s (every run record and the claims), one .hlog per run, and a CSV per figure.", results.SetFile),
	}
}

// finishReport renders the report and prints the claims and where it is.
func finishReport(e *env, sf *suiteFlags, dir *results.Dir, figs []workloads.Figure, claims []results.CheckedClaim, summary []string) error {
	title := "tablebench: the Azure Tables case study, reproduced"
	if len(figs) > 0 && figs[0].ID > 200 {
		title = "tablebench: the Azure Tables case study's advice, tested"
	}
	if dir.Set.Mode == "sweep" && len(figs) == 1 {
		title = "tablebench sweep: " + figs[0].Title
	}
	drawn := workloads.DrawAll(figs, dir.Set.Runs)
	rep := charts.Build(title, &dir.Set, drawn, claims)
	rep.Summary = summary
	if err := rep.Write(dir.Path); err != nil {
		return err
	}
	if dir.Set.Mode == "sweep" { // a sweep has no claims: its points are its result
		for i := range drawn {
			fmt.Fprintln(e.stdout, drawn[i].Title)
			drawn[i].WriteTable(e.stdout, dir.Set.Runs)
		}
	}
	if len(claims) > 0 {
		results.WriteClaims(e.stdout, claims)
	}
	fmt.Fprintf(e.stdout, "report: %s\n", filepath.Join(dir.Path, "index.html"))
	warned, noted := 0, 0
	for _, r := range dir.Set.Runs {
		if len(r.Warnings) > 0 || r.Refused {
			warned++
		}
		if len(r.Notes) > 0 {
			noted++
		}
	}
	if noted > 0 {
		fmt.Fprintf(e.stderr, "note: %d run(s) saturate their modelled 2010 client, as their figures mean to (their pages say why): information, not a warning\n", noted)
	}
	if warned > 0 {
		fmt.Fprintf(e.stderr, "warning: %d run(s) warn that their numbers cannot be trusted (see their warnings in %s)\n", warned, results.SetFile)
	}
	if sf.check {
		for _, c := range claims {
			if !c.Pass {
				return errors.New("a claim fails; see the table above")
			}
		}
		if warned > 0 {
			return fmt.Errorf("%d run(s) warn that their numbers cannot be trusted", warned)
		}
	}
	return nil
}

func reportCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "report", "DIR   (a suite's result directory, or a run's from run --out)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.help()
			return err
		}
		return usagef("%v; see 'tablebench report -h'", err)
	}
	if fs.NArg() != 1 {
		return usagef("give one result directory, as in 'tablebench report results/latest'")
	}
	if holdsAdvice(fs.Arg(0)) { // an advise's directory (advise --out)
		page, err := rebuildAdvice(fs.Arg(0))
		if err != nil {
			return usagef("%v", err)
		}
		fmt.Fprintf(e.stdout, "report: %s\n", page)
		return nil
	}
	if !holdsSuite(fs.Arg(0)) { // a run's directory (run --out)
		page, err := writeRunPages(fs.Arg(0))
		if err != nil {
			return usagef("%v", err)
		}
		fmt.Fprintf(e.stdout, "report: %s\n", page)
		return nil
	}
	dir, err := results.ReadDir(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	if err := dir.Lock(); err != nil { // it rewrites the report: one writer at a time
		return usagef("%v", err)
	}
	defer dir.Close()
	figs, err := setFigures(&dir.Set)
	if err != nil {
		return err
	}
	claims := dir.Set.Claims
	if dir.Set.Mode != "sweep" {
		claims = casestudy.Check(figs, dir.Set.Runs)
	}
	sf := &suiteFlags{}
	return finishReport(e, sf, dir, figs, claims, []string{"Rebuilt from " + filepath.Join(dir.Path, results.SetFile) + " without running anything.", "Made by: " + dir.Set.Command})
}

// setFigures returns the figures a stored set covers (catalog figures, or
// its sweep's figure), once its runs are found to be of one engine model.
func setFigures(set *results.Set) ([]workloads.Figure, error) {
	var figs []workloads.Figure
	if set.Mode == "sweep" {
		f, err := workloads.SweepFromJSON(set.Sweep)
		if err != nil {
			return nil, fmt.Errorf("the stored sweep cannot be read: %w", err)
		}
		figs = []workloads.Figure{f}
	} else {
		var err error
		if figs, err = workloads.Select(casestudy.All(), set.Figures); err != nil {
			return nil, err
		}
	}
	return figs, sameProfile(set, figs)
}

// sameProfile checks that every run of a set on the engine ran on the
// set's profile, unless its figure (an experiment) chose another: a set
// that mixes profiles would draw and compare the two as one.
func sameProfile(set *results.Set, figs []workloads.Figure) error {
	chosen := map[string]bool{} // runs whose figure chooses their profile
	for _, pr := range workloads.Plan(figs, workloads.QuickMode()) {
		chosen[pr.ID] = pr.Engine.Profile != ""
	}
	want, wantSHA := set.Settings["profile"], set.Settings[settingProfileSHA]
	from := "the set was made with --profile " + want
	if wantSHA != "" {
		from = "the set was made with " + profileText(want, wantSHA)
	}
	for _, r := range set.Runs {
		if r.Env.Target != "engine" || chosen[r.ID] {
			continue
		}
		if want == "" { // a set that does not record its settings: the first run's
			want, wantSHA, from = r.Env.Profile, r.Env.ProfileSHA256, "run "+r.ID+" ran on "+profileText(r.Env.Profile, r.Env.ProfileSHA256)
		}
		if r.Env.Profile != want || r.Env.ProfileSHA256 != wantSHA {
			return usagef("run %s ran on %s, but %s: the set mixes two engine models; run them again into one --out", r.ID, profileText(r.Env.Profile, r.Env.ProfileSHA256), from)
		}
	}
	return nil
}
