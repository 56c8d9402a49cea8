package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablebench/tablebench/workloads"
)

func plannedRuns(n int, warm, dur time.Duration) []workloads.PlannedRun {
	var out []workloads.PlannedRun
	for i := range n {
		pr := workloads.PlannedRun{ID: fmt.Sprintf("r%d", i)}
		pr.Spec.Warmup, pr.Spec.Duration = warm, dur
		out = append(out, pr)
	}
	return out
}

// TestETAInWallTime: in wall time the time left is the plan still to run,
// never the "0s left" of an estimate with nothing to go on.
func TestETAInWallTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := plannedRuns(18, 10*time.Second, 60*time.Second) // 18 runs of 70 s
	m := newETA(runs, 1, 1, t0)
	if left, ok := m.left(t0); !ok || left != 18*70*time.Second {
		t.Fatalf("at the start: %v %v, want 21m0s", left, ok)
	}
	for i := range 5 {
		m.started[runs[i].ID], m.finished[runs[i].ID] = t0.Add(time.Duration(i)*70*time.Second), true
	}
	m.started[runs[5].ID] = t0.Add(350 * time.Second)
	now := t0.Add(380 * time.Second) // 30 s into the sixth run
	if left, _ := m.left(now); left != 40*time.Second+12*70*time.Second {
		t.Fatalf("6 of 18 under way: %v left, want 14m40s", left)
	}
	if got := plannedWall(runs, 10); got != 18*700*time.Second { // --time-scale 0.1
		t.Fatalf("plannedWall at 10 wall seconds a planned second: %v", got)
	}
}

// TestETAInVirtualTime: in virtual time the time left scales the time spent
// by the planned seconds still to do, and says so only once a run is done.
func TestETAInVirtualTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := append(plannedRuns(2, 5*time.Second, 20*time.Second), plannedRuns(1, 5*time.Second, 120*time.Second)...)
	runs[2].ID = "long"
	m := newETA(runs, 0, 2, t0)
	if _, ok := m.left(t0.Add(time.Second)); ok {
		t.Fatal("an estimate before any run finished")
	}
	m.started["r0"], m.started["r1"], m.started["long"] = t0, t0, t0
	m.finished["r0"] = true
	// 25 planned seconds took 10 s; 25 + 125 planned seconds remain.
	if left, ok := m.left(t0.Add(10 * time.Second)); !ok || left != 60*time.Second {
		t.Fatalf("%v %v, want 1m0s", left, ok)
	}
}
