package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// listFlags are a sweep's parameters, each a comma-separated list.
type listFlags struct {
	vms, threads, vmSize, op, batch, partition, entitySize, rate string
}

func sweepCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "sweep", "[--vms 1,2,4,8] [--threads 10,30] [--vm-size small,xl] [--op batch] [--batch-size 1,20,100] [--partition guid,shared] | --file sweep.yaml")
	var sf suiteFlags
	sf.register(fs, false)
	var lf listFlags
	fs.StringVar(&lf.vms, "vms", "", "VM counts, such as 1,2,4,8")
	fs.StringVar(&lf.threads, "threads", "", "threads per VM, such as 10,30")
	fs.StringVar(&lf.vmSize, "vm-size", "", "VM sizes: small, xl, cores:N[,serial:F]")
	fs.StringVar(&lf.op, "op", "", "operations: insert, get, batch, upsert, query")
	fs.StringVar(&lf.batch, "batch-size", "", "batch sizes, such as 1,20,100")
	fs.StringVar(&lf.partition, "partition", "", "partition schemes: guid, shared, append, prepend")
	fs.StringVar(&lf.entitySize, "entity-size", "", "entity sizes in bytes, such as 256,1024,4096")
	fs.StringVar(&lf.rate, "rate", "", "open-loop rates in requests/s (0 is closed loop)")
	x := fs.String("x", "", "the x axis: vms, threads, batch-size, entity-size or rate (default: the first listed with more than one value)")
	y := fs.String("y", "entities-per-sec", "the y axis: entities-per-sec, requests-per-sec, throttled-pct, p50, p99 or mean-latency")
	name := fs.String("name", "sweep", "the sweep's name; it names its page")
	title := fs.String("title", "", "the chart's title")
	retry := fs.String("retry", "none", "retry policy of every run")
	file := fs.String("file", "", "a YAML or JSON file defining the sweep instead of the list flags (the README shows a complete one)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := sf.tf.contradictions(fs.FlagSet); err != nil {
		return err
	}
	var def workloads.SweepDef
	if *file != "" {
		if lf != (listFlags{}) {
			return usagef("give the sweep either in --file or in list flags, not both")
		}
		data, err := os.ReadFile(*file)
		if err != nil {
			return usagef("--file: %v", err)
		}
		if def, err = workloads.ParseSweepFile(data); err != nil {
			return usagef("%v", err)
		}
	} else {
		var err error
		def = workloads.SweepDef{Name: *name, Title: *title, X: *x, Y: *y, Retry: *retry}
		if sf.duration > 0 {
			def.Duration = sf.duration.String()
		}
		if sf.warmup >= 0 {
			def.Warmup = sf.warmup.String()
		}
		def.Ops, def.Partitions, def.VMSizes = strs(lf.op), strs(lf.partition), strs(lf.vmSize)
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
			return err
		}
		if lf == (listFlags{}) {
			return usagef("a sweep needs at least one list, such as --vms 1,2,4 or --batch-size 1,20,100, or --file (see the README's sweep example)")
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
		report: func(dir *results.Dir, plan []workloads.PlannedRun) ([]workloads.Figure, []results.Claim, []string, error) {
			summary := []string{fmt.Sprintf("A sweep of %d runs: %s.", len(plan), fig.Title), "Made by: " + dir.Set.Command}
			return []workloads.Figure{fig}, nil, summary, nil
		},
	})
}

func strs(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ints(flag, s string) ([]int, error) {
	var out []int
	for _, p := range strs(s) {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, usagef("%s: %q is not a whole number; give a list such as 1,2,4", flag, p)
		}
		out = append(out, n)
	}
	return out, nil
}

func floats(flag, s string) ([]float64, error) {
	var out []float64
	for _, p := range strs(s) {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return nil, usagef("%s: %q is not a number; give a list such as 0,100,500", flag, p)
		}
		out = append(out, n)
	}
	return out, nil
}
