package workloads_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// TestWallTimeEngineKeepsTheRequestTimeout: on the engine in wall time
// (a Scaled clock), a request whose modelled answer comes after the
// request timeout counts as a client timeout, as against a real
// service: the client stops waiting. An insert of the 2010 profile takes
// some 45 ms; a 10 ms timeout ends every one.
func TestWallTimeEngineKeepsTheRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Warmup, spec.Duration = 4, time.Second, 5*time.Second
		spec.RequestTimeout = 10 * time.Millisecond
		res := run(t, spec, engineTarget(t))
		if res.Totals.Requests == 0 {
			t.Fatal("nothing measured")
		}
		if got := res.Totals.Errors[results.OutcomeClientTimeout]; got != res.Totals.Requests {
			t.Fatalf("%d of %d requests timed out at the client (errors %v, p50 %.1f ms), want all: none is answered within 10 ms",
				got, res.Totals.Requests, res.Totals.Errors, res.LatencyMs.P50)
		}
	})
}
