package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/casestudy"
)

// podLoad is the largest load one pod of a sharded run carries: the threads
// of its share of the VMs, and whether they send batches, whose SDK calls
// cost the client tens of times a single request's CPU and memory.
type podLoad struct {
	threads int
	batches bool
	from    string // how the load was found, for the manifest's comment
}

// Client costs the pod sizes rest on, from the harness's measured ceiling
// against a server that costs nothing (README, Speed): one core drives about
// 18,000 single requests/s or 400 batches of 100/s. A thread against a real
// service waits ~5-10 ms for a single request and ~50-100 ms for a batch,
// so it needs about 1/100 of a core for singles and 1/25 for batches;
// sizing at those rates leaves the client at about half its ceiling, so
// it measures the service, not itself (the case study's Figures 10-14 show
// what a saturated client does to the numbers).
const (
	threadsPerCoreSingle = 100
	threadsPerCoreBatch  = 25
	// The process keeps a 128 MiB collection floor while its heap is small
	// (workloads/gctune), and aztables takes a 32 KiB copy buffer for each
	// operation of a batch: 3.2 MiB for one of 100 in flight per thread.
	baseMemMiB         = 256
	memPerThreadSingle = 0.25
	memPerThreadBatch  = 4.0
)

// resources returns the CPU (cores, in millicores) and memory (MiB) a pod
// carrying l should request.
func (l podLoad) resources() (milliCPU, memMiB int) {
	perCore, perThread := float64(threadsPerCoreSingle), memPerThreadSingle
	if l.batches {
		perCore, perThread = threadsPerCoreBatch, memPerThreadBatch
	}
	cores := math.Max(0.5, float64(l.threads)/perCore)
	milliCPU = int(math.Ceil(cores*2)) * 500 // whole half-cores
	memMiB = baseMemMiB + int(math.Ceil(float64(l.threads)*perThread))
	memMiB = (memMiB + 63) / 64 * 64
	return milliCPU, memMiB
}

// shardLoad finds the largest per-pod load of the command a k8s Job shards:
// run's flags, a sweep's list flags (their largest values), or the figure
// catalog's largest run. A sweep given as a --file is sized as the
// catalog's largest run; --cpu and --memory override any of it.
func shardLoad(cmdArgs []string, shards int) (podLoad, error) {
	flags := map[string]string{}
	for i := 1; i < len(cmdArgs); i++ {
		a := strings.TrimLeft(cmdArgs[i], "-")
		if a == cmdArgs[i] {
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
		} else if i+1 < len(cmdArgs) {
			flags[a] = cmdArgs[i+1]
		}
	}
	perPod := func(vms, threads int) int { return (vms + shards - 1) / shards * threads }
	largest := func(name string, def int) (int, error) {
		v, ok := flags[name]
		if !ok {
			return def, nil
		}
		best := 0
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return 0, usagef("--%s %q: give whole numbers of at least 1, comma-separated in a sweep", name, v)
			}
			best = max(best, n)
		}
		return best, nil
	}
	if cmdArgs[0] == "figures" || flags["file"] != "" {
		var l podLoad
		for _, s := range workloads.Specs(workloads.Plan(casestudy.Figures(), workloads.FullMode())) {
			if t := perPod(s.VMs, s.Threads); t > l.threads {
				l = podLoad{threads: t, batches: s.Op == workloads.OpBatch}
			}
		}
		l.from = "the figure catalog's largest run"
		return l, nil
	}
	d := workloads.DefaultSpec()
	if w := flags["workload"]; w != "" { // the workload's own VMs, threads and operations, unless a flag says otherwise
		parsed, err := readWorkload(w, nil)
		if err != nil {
			return podLoad{}, usagef("--workload: %v", err)
		}
		ws, err := parsed.Spec(d)
		if err != nil {
			return podLoad{}, usagef("--workload: %v", err)
		}
		d = ws
		if len(ws.Mix) > 0 && flags["op"] == "" {
			for _, m := range ws.Mix {
				if m.Op == workloads.OpBatch && m.Weight > 0 {
					flags["op"] = string(workloads.OpBatch)
				}
			}
		}
	}
	vms, err := largest("vms", d.VMs)
	if err != nil {
		return podLoad{}, err
	}
	threads, err := largest("threads", d.Threads)
	if err != nil {
		return podLoad{}, err
	}
	op := flags["op"]
	if op == "" {
		op = string(d.Op)
	}
	batchSize, err := largest("batch-size", d.BatchSize)
	if err != nil {
		return podLoad{}, err
	}
	batches := strings.Contains(op, string(workloads.OpBatch)) && batchSize > 1
	return podLoad{threads: perPod(vms, threads), batches: batches,
		from: fmt.Sprintf("%d threads a pod (%d VMs of %d threads over %d shards)", perPod(vms, threads), vms, threads, shards)}, nil
}
