package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
	"github.com/tablebench/tablebench/workloads/vm"
)

// specFlags binds a run spec's flags.
type specFlags struct {
	spec     workloads.Spec
	vmSize   string
	retry    workloads.RetryPolicy
	jobID    string
	workload string
	stdin    io.Reader // what --workload - reads
}

// nameFlag binds a flag to a spec field named from a workloads
// vocabulary; Spec.Validate refuses an unknown name with the known ones.
type nameFlag[T ~string] struct{ p *T }

func (f nameFlag[T]) String() string {
	if f.p == nil {
		return ""
	}
	return string(*f.p)
}

func (f nameFlag[T]) Set(v string) error { *f.p = T(v); return nil }

func (s *specFlags) register(fs *flag.FlagSet) {
	d := workloads.DefaultSpec()
	s.spec = d
	fs.Var(nameFlag[workloads.OpKind]{&s.spec.Op}, "op", "`operation`: "+workloads.Ops().Help())
	fs.IntVar(&s.spec.BatchSize, "batch-size", d.BatchSize, "entities per batch (1-100), or per query page")
	fs.Var(nameFlag[workloads.PartitionScheme]{&s.spec.Partition}, "partition", "the `scheme` of PartitionKeys: "+workloads.PartitionSchemes().Help())
	fs.IntVar(&s.spec.VMs, "vms", d.VMs, "client VMs")
	fs.IntVar(&s.spec.Threads, "threads", d.Threads, "worker threads per VM")
	fs.StringVar(&s.vmSize, "vm-size", "xl", "VM size the engine's client model charges: small (1 core) and xl (8 cores) with the 2010 client, modern (4 vCPUs with today's SDK), or cores:N[,serial:F] (default: the profile's client, xl under wa2010, modern under modern)")
	fs.IntVar(&s.spec.EntitySize, "entity-size", d.EntitySize, "bytes per entity by the service's size formula, one random Payload string (Payload, Payload2, ... beyond the 32K characters one string holds)")
	fs.DurationVar(&s.spec.Duration, "duration", d.Duration, "measured time, after the warm-up (model time on the engine)")
	fs.DurationVar(&s.spec.Warmup, "warmup", d.Warmup, "warm-up before measuring; 0 measures from the start")
	fs.Uint64Var(&s.spec.Seed, "seed", d.Seed, "seed of every random choice: keys, payloads, the engine's draws")
	s.retry = workloads.RetryNone
	fs.Var(nameFlag[workloads.RetryPolicy]{&s.retry}, "retry", "retry `policy`: "+workloads.RetryPolicies().Help())
	s.spec.Load = ""
	fs.Var(nameFlag[workloads.LoadMode]{&s.spec.Load}, "load", "load `mode`: "+workloads.LoadModes().Help()+"; default closed, open when --rate is set")
	fs.Float64Var(&s.spec.Rate, "rate", 0, "open load: requests per second, all threads together; 0 is closed load")
	fs.IntVar(&s.spec.Preload, "preload", d.Preload, "get and query: entities each thread loads (unmeasured) and reads back")
	fs.StringVar(&s.jobID, "job-id", "", "job ID, the first part of every RowKey (default tb, or a fresh one with --table)")
	fs.StringVar(&s.spec.Table, "table", "", "a table to share with other runs: created if absent, never deleted; runs with the same --seed and --partition shared then load one partition together (default: a fresh table per run, deleted at its end)")
	fs.DurationVar(&s.spec.RequestTimeout, "request-timeout", d.RequestTimeout, "how long a request may wait for its answer before it counts as a client timeout (target time); it bounds table setup too; 0 waits forever")
	fs.StringVar(&s.workload, "workload", "", "a workload `file` (YAML or JSON; - reads standard input) or preset name (tablebench workloads lists them): the run's operations, keys, rows, entities and load; flags given beside it override its fields")
	fs.Var(nameFlag[workloads.OverloadMode]{&s.spec.Overload}, "overload", "open load: what a request due while every thread is busy does: "+workloads.OverloadModes().Help()+" (default drop)")
}

// contradictions refuses spec flags that the other flags make meaningless.
func (s *specFlags) contradictions(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["batch-size"] && s.workload == "" && !s.spec.Op.Batched() {
		return usagef("--batch-size %d does nothing with --op %s: it sets the entities of a batch (--op batch) or of a query page (--op query); leave it out, or change --op", s.spec.BatchSize, s.spec.Op)
	}
	return nil
}

// resolve finishes the spec after parsing and validates it: the flags', or
// the workload's with the flags given beside it.
func (s *specFlags) resolve(fs *flag.FlagSet) (workloads.Spec, error) {
	sz, err := vm.ParseSize(s.vmSize)
	if err != nil {
		return s.spec, usagef("--vm-size: %v", err)
	}
	s.spec.VMSize = sz
	r, err := workloads.DefaultRetry(s.retry)
	if err != nil {
		return s.spec, usagef("--retry: %v", err)
	}
	s.spec.Retry = r
	switch {
	case s.jobID != "":
		s.spec.JobID = s.jobID
	case s.spec.Table != "" && s.spec.Shards < 2: // runs sharing a table must not write one another's rows
		var b [4]byte
		rand.Read(b[:])
		s.spec.JobID = "tb" + hex.EncodeToString(b[:])
	}
	if s.spec.Load == "" {
		s.spec.Load = workloads.LoadClosed
		if s.spec.Rate > 0 {
			s.spec.Load = workloads.LoadOpen
		}
	}
	if s.workload != "" {
		return s.fromWorkload(fs)
	}
	if err := s.spec.Validate(); err != nil {
		return s.spec, usagef("%v", err)
	}
	return s.spec, nil
}

// fromWorkload returns the workload's spec with the spec flags the command
// line set, and the settings a workload does not hold (seed, job, table,
// shard, request timeout), as the flags give them.
func (s *specFlags) fromWorkload(fs *flag.FlagSet) (workloads.Spec, error) {
	parsed, err := readWorkload(s.workload, s.stdin)
	if err != nil {
		return s.spec, usagef("--workload: %v", err)
	}
	f := &s.spec
	base := workloads.DefaultSpec()
	base.Seed, base.JobID, base.Table, base.RequestTimeout = f.Seed, f.JobID, f.Table, f.RequestTimeout
	base.Shard, base.Shards, base.StartAt, base.Rendezvous = f.Shard, f.Shards, f.StartAt, f.Rendezvous
	base.VMSize = f.VMSize // the profile's client, or --vm-size: a workload's own vm_size overrides it
	w, err := parsed.Workload.Spec(base)
	if err != nil {
		return s.spec, usagef("--workload: %v", parsed.Located(err))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for name, apply := range overrides {
		if set[name] {
			apply(&w, f)
		}
	}
	if set["rate"] && !set["load"] && f.Rate > 0 {
		w.Load, w.Stages = workloads.LoadOpen, nil
	}
	if err := w.Validate(); err != nil {
		// Where the file is at fault on its own, its field and line say
		// so, whatever flags stand beside it; the flags are named only
		// where the file alone is valid.
		if _, ferr := parsed.Spec(base); ferr != nil {
			return w, usagef("--workload: %v", ferr)
		}
		if set := flagsSet(set); len(set) > 0 {
			return w, usagef("--workload with %s: %v", strings.Join(set, " "), err)
		}
		return w, usagef("--workload: %v", parsed.Located(err))
	}
	return w, nil
}

// flagsSet lists the spec flags that were set, as --name.
func flagsSet(set map[string]bool) []string {
	var out []string
	for name := range overrides {
		if set[name] {
			out = append(out, "--"+name)
		}
	}
	slices.Sort(out)
	return out
}

// overrides copy a spec flag's value over a workload's, for the flags the
// command line sets beside --workload.
var overrides = map[string]func(w, f *workloads.Spec){
	"op":          func(w, f *workloads.Spec) { w.Op, w.Mix = f.Op, nil },
	"batch-size":  func(w, f *workloads.Spec) { w.BatchSize = f.BatchSize },
	"partition":   func(w, f *workloads.Spec) { w.Partition = f.Partition },
	"vms":         func(w, f *workloads.Spec) { w.VMs = f.VMs },
	"threads":     func(w, f *workloads.Spec) { w.Threads = f.Threads },
	"vm-size":     func(w, f *workloads.Spec) { w.VMSize = f.VMSize },
	"entity-size": func(w, f *workloads.Spec) { w.EntitySize, w.EntityMax = f.EntitySize, 0 },
	"duration":    func(w, f *workloads.Spec) { w.Duration = f.Duration },
	"warmup":      func(w, f *workloads.Spec) { w.Warmup = f.Warmup },
	"retry":       func(w, f *workloads.Spec) { w.Retry = f.Retry },
	"load":        func(w, f *workloads.Spec) { w.Load = f.Load },
	"rate":        func(w, f *workloads.Spec) { w.Rate = f.Rate },
	"preload":     func(w, f *workloads.Spec) { w.Preload = f.Preload },
	"overload":    func(w, f *workloads.Spec) { w.Overload = f.Overload },
}

// readWorkload reads --workload's argument: - is standard input, a preset's
// name a preset, anything else a file.
func readWorkload(arg string, stdin io.Reader) (*workloads.ParsedWorkload, error) {
	var data []byte
	var err error
	switch {
	case arg == "-":
		if stdin == nil {
			return nil, fmt.Errorf("no standard input to read")
		}
		data, err = io.ReadAll(stdin)
	default:
		data, err = os.ReadFile(arg)
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(arg, "/.") {
			p, perr := workloads.LookupPreset(arg)
			if perr != nil {
				return nil, perr
			}
			return p.Workload()
		}
	}
	if err != nil {
		return nil, err
	}
	return workloads.ParseWorkload(data)
}

// runFlags are run's flags: a spec, a target, a shard and what to do with
// the result.
type runFlags struct {
	spec                 specFlags
	target               targetFlags
	shard                shardFlags
	out                  string
	asJSON, quiet, check bool
	thresholds           thresholdFlags
}

func newRunFlags(e *env) (*flagSet, *runFlags) {
	fs := newFlagSet(e, "run", "[flags]")
	r := &runFlags{}
	r.spec.register(fs.FlagSet)
	r.target.register(fs.FlagSet, true)
	r.shard.register(fs.FlagSet)
	fs.StringVar(&r.out, "out", "", "directory to store the run record (JSON), its HdrHistogram interval log (.hlog) and its page (index.html; 'tablebench report DIR' rebuilds it)")
	fs.BoolVar(&r.asJSON, "json", false, "print one JSON object with the results instead of the summary")
	fs.BoolVar(&r.quiet, "quiet", false, "no progress and no configuration lines on stderr")
	fs.BoolVar(&r.check, "check", false, "exit 1 if the run warns that its numbers cannot be trusted (an endpoint that stalled or failed, a saturated modelled client)")
	r.thresholds.register(fs)
	return fs, r
}

// resolve checks the flags against one another and returns the run's spec.
func (r *runFlags) resolve(fs *flagSet, getenv func(string) string, stdin io.Reader) (workloads.Spec, error) {
	if err := r.target.contradictions(fs.FlagSet); err != nil {
		return workloads.Spec{}, err
	}
	k, n, startAt, err := r.shard.resolve(getenv)
	if err != nil {
		return workloads.Spec{}, err
	}
	if n > 1 && r.target.target != "table" {
		return workloads.Spec{}, usagef("shards meet in the service's table: a sharded run needs --target table (a served engine will do)")
	}
	r.shard.apply(&r.spec.spec, k, n, startAt)
	r.spec.stdin = stdin
	if !given(fs.FlagSet, "vm-size") && r.target.target == "engine" {
		p, _, err := r.target.resolveProfile()
		if err != nil {
			return workloads.Spec{}, err
		}
		if p.Model { // only a model charges the client
			r.spec.vmSize = enginetarget.ClientSize(p).Name
		}
	}
	spec, err := r.spec.resolve(fs.FlagSet)
	if err != nil {
		return spec, err
	}
	if err := r.spec.contradictions(fs.FlagSet); err != nil {
		return spec, err
	}
	if err := r.thresholds.checkOps([]workloads.OpKind{spec.Op}); err != nil {
		return spec, err
	}
	spec.KeepTable = r.target.keep
	if r.out != "" {
		if err := os.MkdirAll(r.out, 0o755); err != nil {
			return spec, usagef("--out: cannot create %s: %v", r.out, err)
		}
	}
	return spec, nil
}

func runCmd(ctx context.Context, e *env, args []string) error {
	fs, r := newRunFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	spec, err := r.resolve(fs, e.getenv, e.stdin)
	if err != nil {
		return err
	}
	tf := &r.target
	if tf.virtual() {
		defer virtualCores(1)()
	}
	tf.tune() // before the target is built: gctune.HugePages wants a small heap
	tg, release, err := tf.build(e.getenv, spec.Seed)
	if err != nil {
		return err
	}
	defer release()
	coord, err := workloads.NewCoordinator(spec, tg)
	if err != nil {
		return usagef("%v", err)
	}
	if err := tf.confirm(e, endpointOf(tg), []workloads.Spec{spec}); err != nil {
		return err
	}
	if !r.quiet {
		tf.describe(e.stderr, tg)
		fmt.Fprintln(e.stderr, "spec:", describeSpec(spec, modelsClient(tg)))
		if d := describeShard(spec); d != "" {
			fmt.Fprintln(e.stderr, "shard:", d, "- waiting for the other shards")
		}
	}
	stop := r.watch(e, coord, tg, spec)
	res, err := coord.Run(ctx)
	stop()
	if err != nil && res == nil {
		return err
	}
	return r.report(e, res, err)
}

// watch shows the run's progress on stderr, unless --quiet: a bar on a
// terminal, a line per interval in a log (as in CI), so a long run is
// never silent. It returns what stops it.
func (r *runFlags) watch(e *env, coord *workloads.Coordinator, tg workloads.Target, spec workloads.Spec) (stop func()) {
	var phase func(workloads.Phase)
	switch {
	case r.quiet:
		return func() {}
	case e.terminal:
		stop, phase = startProgress(e.stderr, coord, tg.Clock(), spec.Warmup+spec.Duration)
	default:
		stop, phase = startLines(e.stderr, coord, tg.Clock(), lineEvery)
	}
	coord.OnPhase(phase)
	return stop
}

// report checks the run's thresholds, prints its result, then stores it
// with its page: a store that fails (a full disk) loses nothing the user
// has not seen. It returns the run's error, runErr, why its numbers do not
// hold, or the thresholds they fail.
func (r *runFlags) report(e *env, res *results.Run, runErr error) error {
	failed := r.thresholds.check(res)
	if r.asJSON {
		if err := writeJSONSummary(e.stdout, res); err != nil {
			return err
		}
	} else {
		results.WriteSummary(e.stdout, res)
		writeThresholds(e.stdout, res.Thresholds)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	if r.asJSON { // the record holds them; a pipeline's log shows them too
		writeThresholds(e.stderr, res.Thresholds)
	}
	if r.out != "" {
		if err := store(r.out, res); err != nil {
			return fmt.Errorf("the results above could not be stored in %s: %w", r.out, err)
		}
		if !r.asJSON {
			fmt.Fprintf(e.stdout, "stored in %s\n", filepath.Join(r.out, res.ID+".json"))
		}
		if holdsSuite(r.out) { // its report is the suite's
			fmt.Fprintf(e.stderr, "note: %s holds a suite's results, so the run's page is not written there: give the run a directory of its own\n", r.out)
		} else if page, err := writeRunPages(r.out); err != nil {
			return fmt.Errorf("the results above are stored in %s, but their page could not be written: %w", r.out, err)
		} else if !r.asJSON {
			fmt.Fprintf(e.stdout, "page: %s\n", page)
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case res.Interrupted:
		return fmt.Errorf("interrupted: the results above cover %.1f s measured", res.MeasuredSec)
	case res.Refused:
		return fmt.Errorf("refused: the harness could not keep time at this time scale, so the numbers above do not hold (see the warning)")
	case r.check && len(res.Warnings) > 0:
		return fmt.Errorf("check failed: %d warning(s) above say the numbers cannot be trusted", len(res.Warnings))
	case failed > 0:
		return failedThresholds(failed)
	}
	return nil
}

// modelsClient reports whether the harness models the target's client VMs.
func modelsClient(tg workloads.Target) bool {
	m, ok := tg.(workloads.ClientModeler)
	return ok && m.ModelsClient()
}

// describeSpec is one line of the spec's effective values. VM sizes are
// named only where the client is modelled: against a real endpoint the
// threads are this process's.
func describeSpec(s workloads.Spec, modelled bool) string {
	op := string(s.Op)
	if s.Op == workloads.OpBatch {
		op = fmt.Sprintf("batch of %d", s.BatchSize)
	}
	if len(s.Mix) > 0 {
		var parts []string
		for _, m := range s.Mix {
			parts = append(parts, fmt.Sprintf("%s %g", m.Op, m.Weight))
		}
		op = "mix of " + strings.Join(parts, ", ")
	}
	if s.Workload != "" {
		op = "workload " + s.Workload + ": " + op
	}
	partitions := string(s.Partition)
	if s.Partition == workloads.PartitionFixed {
		k := s.Keys
		pick := string(k.Pick.Distribution)
		if k.Pick.Theta != 0 {
			pick += fmt.Sprintf(" %g", k.Pick.Theta)
		}
		if k.Pick.Distribution == workloads.DistHotspot {
			pick += fmt.Sprintf(" %g/%g", k.Pick.HotData, k.Pick.HotOps)
		}
		partitions = fmt.Sprintf("%d fixed (%s, %s names", k.Count, pick, k.Names)
		if k.Buckets > 1 {
			partitions += fmt.Sprintf(", %d buckets at %s", k.Buckets, k.BucketAt)
		}
		partitions += ")"
	}
	load := "closed loop"
	if s.Load == workloads.LoadOpen {
		load = fmt.Sprintf("open loop at %g requests/s", s.Rate)
		for _, st := range s.Stages {
			load += fmt.Sprintf(", to %g over %v", st.Rate, st.For)
		}
		if s.Overload == workloads.OverloadQueue {
			load += " (queued under overload)"
		}
	}
	vms := fmt.Sprintf("%d %s VM(s)", s.VMs, s.VMSize.Name)
	if !modelled {
		vms = fmt.Sprintf("%d VM(s) of this process", s.VMs)
	}
	size := strconv.Itoa(s.EntitySize)
	if s.EntityMax > 0 {
		size += "-" + strconv.Itoa(s.EntityMax)
	}
	return fmt.Sprintf("%s, %s partitions, %s x %d threads, %s-byte entities, %v after %v warm-up, retry %s, %s, seed %d",
		op, partitions, vms, s.Threads, size, s.Duration, s.Warmup, s.Retry.Policy, load, s.Seed)
}

// store writes a run's record and interval log into dir.
func store(dir string, res *results.Run) error {
	if err := results.WriteFileAtomic(filepath.Join(dir, res.ID+".json"), func(w io.Writer) error { return results.Write(w, res) }); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, res.ID+".hlog"), res.WriteHlog)
}

// writeJSONSummary prints the run record without its encoded histograms,
// intervals, heat map and key sketch, unless it is a shard's, which merge
// needs whole.
func writeJSONSummary(w interface{ Write([]byte) (int, error) }, res *results.Run) error {
	c := *res
	if c.Shard == nil {
		c.Histograms = nil
		c.Intervals = nil
		c.Heatmap = nil
		if c.Partitions != nil {
			p := *c.Partitions
			p.Sketch = ""
			c.Partitions = &p
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
