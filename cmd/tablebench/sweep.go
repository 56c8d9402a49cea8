package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// listFlags are a sweep's parameters, each a comma-separated list.
type listFlags struct {
	vms, threads, vmSize, op, batch, partition, entitySize, rate string
}

// sweepFlags define a sweep: in list flags, or in a file.
type sweepFlags struct {
	lists                                    listFlags
	x, y, name, title, retry, file, workload string
}

func (s *sweepFlags) register(fs *flagSet) {
	lf := &s.lists
	fs.StringVar(&lf.vms, "vms", "", "VM counts, such as 1,2,4,8")
	fs.StringVar(&lf.threads, "threads", "", "threads per VM, such as 10,30")
	fs.StringVar(&lf.vmSize, "vm-size", "", "VM sizes: small, xl, modern, cores:N[,serial:F] (default: the profile's client, xl under wa2010, modern under modern)")
	fs.StringVar(&lf.op, "op", "", "operations: "+workloads.Ops().Or())
	fs.StringVar(&lf.batch, "batch-size", "", "batch sizes, such as 1,20,100")
	fs.StringVar(&lf.partition, "partition", "", "partition schemes: "+workloads.PartitionSchemes().Or())
	fs.StringVar(&lf.entitySize, "entity-size", "", "entity sizes in bytes, such as 256,1024,4096")
	fs.StringVar(&lf.rate, "rate", "", "open-loop rates in requests/s (0 is closed loop)")
	fs.StringVar(&s.x, "x", "", "the x axis: vms, threads, batch-size, entity-size or rate (default: the first listed with more than one value)")
	fs.StringVar(&s.y, "y", "entities-per-sec", "the y axis: "+results.MetricNames(results.SweepMetric)+" (latency: of successful requests, ms)")
	fs.StringVar(&s.name, "name", "sweep", "the sweep's name; it names its page")
	fs.StringVar(&s.title, "title", "", "the chart's title")
	fs.StringVar(&s.retry, "retry", "", "retry policy of every run: "+workloads.RetryPolicies().Or()+" (default none, or the workload's)")
	fs.StringVar(&s.workload, "workload", "", "a workload `file` or preset every run starts from; the lists apply over it (a sweep file can sweep its fields too: docs/workloads.md)")
	fs.StringVar(&s.file, "file", "", "a YAML or JSON file defining the sweep instead of the list flags (the README shows a complete one)")
}

// def returns the sweep the flags define, with the suite's durations
// (sf) where they are given.
func (s *sweepFlags) def(sf *suiteFlags) (workloads.SweepDef, error) {
	lf := s.lists
	if s.file != "" {
		if lf != (listFlags{}) {
			return workloads.SweepDef{}, usagef("give the sweep either in --file or in list flags, not both")
		}
		data, err := os.ReadFile(s.file)
		if err != nil {
			return workloads.SweepDef{}, usagef("--file: %v", err)
		}
		def, err := workloads.ParseSweepFile(data)
		if err != nil {
			return def, usagef("%v", err)
		}
		if def.Workload != "" && !filepath.IsAbs(def.Workload) && !isPreset(def.Workload) { // a file beside the sweep's
			def.Workload = filepath.Join(filepath.Dir(s.file), def.Workload)
		}
		return def, readSweepWorkload(&def)
	}
	var err error
	def := workloads.SweepDef{Name: s.name, Title: s.title, X: s.x, Y: s.y, Retry: s.retry, Workload: s.workload}
	if err := readSweepWorkload(&def); err != nil {
		return def, err
	}
	if sf.duration > 0 {
		def.Duration = sf.duration.String()
	}
	if sf.warmup >= 0 {
		def.Warmup = sf.warmup.String()
	}
	if def.Ops, err = list("--op", lf.op); err != nil {
		return def, err
	}
	if def.Partitions, err = list("--partition", lf.partition); err != nil {
		return def, err
	}
	if def.VMSizes, err = list("--vm-size", lf.vmSize); err != nil {
		return def, err
	}
	if def.VMs, err = ints("--vms", lf.vms); err == nil {
		if def.Threads, err = ints("--threads", lf.threads); err == nil {
			if def.BatchSizes, err = ints("--batch-size", lf.batch); err == nil {
				if def.EntitySizes, err = ints("--entity-size", lf.entitySize); err == nil {
					def.Rates, err = floats("--rate", lf.rate)
				}
			}
		}
	}
	if err != nil {
		return def, err
	}
	if lf == (listFlags{}) {
		return def, usagef("a sweep needs at least one list, such as --vms 1,2,4 or --batch-size 1,20,100, or --file (see the README's sweep example)")
	}
	return def, nil
}

func sweepCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "sweep", "[--vms 1,2,4,8] [--threads 10,30] [--vm-size small,xl] [--op batch] [--batch-size 1,20,100] [--partition guid,shared] | --file sweep.yaml")
	var sf suiteFlags
	sf.register(fs, false)
	var sw sweepFlags
	sw.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := sf.tf.contradictions(fs.FlagSet); err != nil {
		return err
	}
	def, err := sw.def(&sf)
	if err != nil {
		return err
	}
	if len(def.VMSizes) == 0 && sf.tf.target == "engine" { // the profile's client, as run's
		p, _, err := sf.tf.resolveProfile()
		if err != nil {
			return err
		}
		if p.Model {
			def.VMSizes = []string{enginetarget.ClientSize(p).Name}
		}
	}
	fig, err := def.Figure()
	if err != nil {
		return usagef("%v", err)
	}
	raw, _ := json.Marshal(def)
	return sf.run(ctx, e, suiteRun{
		name: "sweep", args: args, mode: "sweep", plan: fig.Plan(),
		record: func(set *results.Set) { set.Sweep = raw },
		report: func(dir *results.Dir, plan []workloads.PlannedRun) ([]workloads.Figure, []results.CheckedClaim, []string, error) {
			summary := []string{fmt.Sprintf("A sweep of %d runs: %s.", len(plan), fig.Title), "Made by: " + dir.Set.Command}
			return []workloads.Figure{fig}, nil, summary, nil
		},
	})
}

// isPreset reports whether name is a preset workload's.
func isPreset(name string) bool {
	_, err := workloads.LookupPreset(name)
	return err == nil
}

// readSweepWorkload keeps the text of the sweep's workload in its
// definition, so that the stored sweep rebuilds without the file.
func readSweepWorkload(def *workloads.SweepDef) error {
	if def.Workload == "" {
		return nil
	}
	if p, err := workloads.LookupPreset(def.Workload); err == nil {
		def.WorkloadFile = p.File
		return nil
	}
	data, err := os.ReadFile(def.Workload)
	if err != nil {
		return usagef("workload: %v", err)
	}
	if _, err := workloads.ParseWorkload(data); err != nil {
		return usagef("workload %s: %v", def.Workload, err)
	}
	def.WorkloadFile = string(data)
	return nil
}

// list splits a flag's comma-separated list. An empty item (1,,2 or a
// trailing comma) is refused: it is a typo whose meaning is not clear.
func list(flag, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, usagef("%s %q: an item of the list is empty; give a list such as %s", flag, s, listExample(flag))
		}
		out = append(out, p)
	}
	return out, nil
}

// listExample is an example of a list for flag, for a refusal.
func listExample(flag string) string {
	switch flag {
	case "--op":
		return "insert,batch"
	case "--partition":
		return "guid,shared"
	case "--vm-size":
		return "small,xl"
	case "--rate":
		return "0,100,500"
	case "--only":
		return "retry,append"
	}
	return "1,2,4"
}

func ints(flag, s string) ([]int, error) {
	items, err := list(flag, s)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range items {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, usagef("%s: %q is not a whole number; give a list such as 1,2,4", flag, p)
		}
		out = append(out, n)
	}
	return out, nil
}

func floats(flag, s string) ([]float64, error) {
	items, err := list(flag, s)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, p := range items {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return nil, usagef("%s: %q is not a number; give a list such as 0,100,500", flag, p)
		}
		out = append(out, n)
	}
	return out, nil
}
