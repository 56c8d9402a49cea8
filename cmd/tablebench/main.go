// Command tablebench benchmarks table stores with the Azure Table service's
// model and reproduces the published case study of Azure Table storage.
//
//	tablebench run          one run: VMs x threads of one operation or a workload against the engine or a Table endpoint
//	tablebench workloads    list the preset workloads (YCSB A-F, the case study's loads), or show one as a file
//	tablebench figures      reproduce Figures 3-15 and check every published claim
//	tablebench experiments  test the case study's advice its figures never test: retries, keys, balancing, conflicts, today
//	tablebench advise       compare candidate key designs by simulation at a target rate, ranked, with where the load lands
//	tablebench sweep        a figure of your own: any run parameters as lists
//	tablebench report       rebuild the pages of a stored result set or run
//	tablebench compare      two result sets side by side, each difference tested against the runs' noise
//	tablebench merge        combine the shards of a run or suite into one
//	tablebench k8s          print a Kubernetes Indexed Job that runs a run's shards
//	tablebench serve        serve the engine as an Azure Table endpoint
//	tablebench profile      list the engine's service models, or print one as a file to change and load with --profile
//	tablebench admin        change a served engine's fault rules and rates while it runs
//	tablebench version      print the version
//
// TABLEBENCH_CPUPROFILE=FILE writes a CPU profile of the whole command to
// FILE, for `go tool pprof`: where the harness's own time goes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/tablebench/tablebench/workloads/gctune"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	gctune.Follow(time.Second) // for the whole process: it ends with os.Exit
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
