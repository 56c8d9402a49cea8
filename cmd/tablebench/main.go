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
	"runtime/pprof"
	"syscall"
)

// gcPercent is the collector's target unless GOGC is set: a suite keeps
// little (the runs' summaries, one run's entities) and allocates much, so a
// little more heap between collections buys a tenth of its CPU: make bench
// measured 64.8 s of CPU and 540 MB at 100, 59.7 s and 697 MB at 150.
const gcPercent = 150

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if path := os.Getenv("TABLEBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tablebench: TABLEBENCH_CPUPROFILE: %v: name a file that can be written\n", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "tablebench: TABLEBENCH_CPUPROFILE: %v\n", err)
			os.Exit(2)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}
