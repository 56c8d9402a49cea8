// Command tablebench benchmarks table stores with the Azure Table service's
// model and reproduces the published case study of Azure Table storage.
//
//	tablebench run      one run: VMs x threads of inserts, gets or batches against a target
//	tablebench figures  reproduce Figures 3-15 and check every published claim
//	tablebench sweep    a figure of your own: any parameters as lists
//	tablebench report   rebuild the charts of stored results
//	tablebench compare  two result sets side by side
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
