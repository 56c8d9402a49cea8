//go:build calibration

// The calibration tests run minutes of load through the real harness, in
// virtual time, to check the wa2010 profile against the case study's
// published numbers on several seeds. They are long for the race detector,
// so `make test` runs them in a pass of their own without it
// (go test -tags calibration -run Calibration ./workloads/).

package workloads_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// atMost fails unless got is at most limit.
func atMost(t *testing.T, what string, got, limit float64) {
	t.Helper()
	if got > limit {
		t.Errorf("%s = %.4g, want at most %.4g", what, got, limit)
	}
}

// TestCalibrationSinglePartitionInserts reproduces C8.1-C8.3: single inserts
// from XL VMs of 15 threads into one shared PartitionKey, with the figure
// catalog's readings of the claims (one claim, one reading).
func TestCalibrationSinglePartitionInserts(t *testing.T) {
	tests := []struct {
		vms      int
		perSec   float64
		min, max float64 // the throttled share the catalog's reading allows, in %
	}{
		{2, 600, 0, 0.001},      // C8.1: ~600 e/s, no throttling
		{5, 1000, 0, 0.005},     // C8.2: ~1,000 e/s, 0.0004% (a handful in 300,000)
		{10, 1000, 0.015, 0.06}, // C8.3: ~0.03% at 10 VMs, within a factor of 2
		{16, 1000, 0.15, 0.25},  // C8.3: ~0.2% at 16 VMs, within 25%
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d VMs", tc.vms), func(t *testing.T) {
			r, _ := runModel(t, modelSpec(workloads.OpInsert, workloads.PartitionShared, tc.vms, 15))
			t.Logf("%.0f e/s, %.4f%% throttled of %d", r.EntitiesPerSec, r.ThrottledPct, r.Totals.Requests)
			near(t, "entities/s", r.EntitiesPerSec, tc.perSec, 0.15)
			if r.ThrottledPct < tc.min || r.ThrottledPct > tc.max {
				t.Errorf("throttled %% = %.4g, want %.4g-%.4g", r.ThrottledPct, tc.min, tc.max)
			}
		})
	}
}

// TestCalibrationSinglePartitionBatches reproduces C15.1-C15.4: batch-100
// inserts from XL VMs of 10 threads into one shared PartitionKey, 3 s pause
// after a throttle. It checks several seeds, because a fit that passes on one
// seed only would fail a user who picks another.
func TestCalibrationSinglePartitionBatches(t *testing.T) {
	for _, seed := range []uint64{7, 1, 2} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			got := map[int]*results.Run{}
			for _, vms := range []int{2, 3, 4, 5} {
				spec := modelSpec(workloads.OpBatch, workloads.PartitionShared, vms, 10)
				spec.Seed = seed
				got[vms], _ = runModel(t, spec)
				t.Logf("%d threads: %.0f e/s, %.2f%% throttled", vms*10, got[vms].EntitiesPerSec, got[vms].ThrottledPct)
			}
			// C15.1: ~2,300 e/s at 20 threads with almost no throttling (under 3%).
			near(t, "C15.1 entities/s at 20 threads", got[2].EntitiesPerSec, 2300, 0.15)
			atMost(t, "C15.1 throttled % at 20 threads", got[2].ThrottledPct, 3)
			// C15.2: ~11% throttled by 30 threads.
			near(t, "C15.2 throttled % at 30 threads", got[3].ThrottledPct, 11, 0.15)
			// C15.3: ~2,500 successful e/s, 22% of ~3,200 e/s sent throttled at 50.
			r := got[5]
			near(t, "C15.3 entities/s at 50 threads", r.EntitiesPerSec, 2500, 0.15)
			near(t, "C15.3 throttled % at 50 threads", r.ThrottledPct, 22, 0.15)
			near(t, "C15.3 entities/s sent at 50 threads", r.EntitiesSentPerSec, 3200, 0.15)
			// C15.4: the successful rate holds at least 2,185 (2,300 less 5%
			// for the ~) as threads grow.
			for _, vms := range []int{3, 4, 5} {
				if s := got[vms].EntitiesPerSec; s < 2185 {
					t.Errorf("C15.4: %d threads gave %.0f successful e/s, want at least 2,185", vms*10, s)
				}
			}
		})
	}
}

// TestCalibrationMultiPartitionBatches reproduces C13.2: batch-100 inserts
// from 16 small VMs of 30 threads, each thread its own PartitionKey, reach
// ~17,000 entities/s, far above the account target, and nothing throttles
// (the case study saw throttling only in Figures 8, 9 and 15).
func TestCalibrationMultiPartitionBatches(t *testing.T) {
	for _, seed := range []uint64{7, 1} {
		spec := modelSpec(workloads.OpBatch, workloads.PartitionGUID, 16, 30)
		spec.VMSize, spec.Seed, spec.Duration = vm.Small, seed, 120*time.Second
		r, _ := runModel(t, spec)
		t.Logf("seed %d: %.0f e/s, %.4f%% throttled", seed, r.EntitiesPerSec, r.ThrottledPct)
		near(t, "C13.2 entities/s at 16 VMs", r.EntitiesPerSec, 17000, 0.15)
		if r.ThrottledPct >= 0.01 {
			t.Errorf("seed %d: %.4f%% of requests throttled, want under 0.01%%", seed, r.ThrottledPct)
		}
	}
}

// TestCalibrationMultiPartitionNotThrottled: each thread its own
// PartitionKey on a pre-split table is spread over the servers and never
// throttled.
func TestCalibrationMultiPartitionNotThrottled(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionGUID, 16, 15)
	spec.Duration = 120 * time.Second
	r, _ := runModel(t, spec)
	if n := r.Totals.Throttled + r.Totals.TimedOut; n != 0 {
		t.Fatalf("%d requests throttled", n)
	}
	if r.EntitiesPerSec < 3000 {
		t.Fatalf("%.0f entities/s: multi-partition inserts should scale well past one partition's ~1,000", r.EntitiesPerSec)
	}
}
