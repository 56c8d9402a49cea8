// Command tablebench benchmarks table stores with the Azure Table service's
// model and reproduces the published case study of Azure Table storage.
//
//	tablebench run      one run: VMs x threads of inserts, gets or batches against a target
//	tablebench figures  reproduce Figures 3-15 and check every published claim
//	tablebench sweep    a figure of your own: any parameters as lists
//	tablebench report   rebuild the charts of stored results
//	tablebench compare  two result sets side by side
//
// TABLEBENCH_CPUPROFILE=FILE writes a CPU profile of the whole command to
// FILE, for `go tool pprof`: where the harness's own time goes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"
)

func main() {
	if os.Getenv("GOGC") == "" {
		go tuneGC(time.Second)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv("TABLEBENCH_CPUPROFILE"))
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	stopProfile()
	os.Exit(code)
}

// startProfile starts a CPU profile into path, if one is named, and
// returns what stops it.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tablebench: TABLEBENCH_CPUPROFILE: %v: name a file that can be written\n", err)
		os.Exit(2)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// gcPercent returns the collector's target for a live heap: a suite keeps
// little (the runs' summaries, one or two runs' entities) and allocates
// much, and while the heap is small a little more of it between
// collections buys a tenth of the CPU (make bench: 64.8 s of CPU and 540 MB
// at 100, 59.7 s and 697 MB at 150). A large heap, such as the experiments'
// long runs keep, stays at Go's default, so memory grows no faster than it.
func gcPercent(live uint64) int {
	if live < 256<<20 {
		return 150
	}
	return 100
}

// tuneGC sets the collector's target from the live heap every period.
func tuneGC(period time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := 100
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			if p := gcPercent(sample[0].Value.Uint64()); p != current {
				debug.SetGCPercent(p)
				current = p
			}
		}
		time.Sleep(period)
	}
}
