package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// TestProgressLinesForALog: where stderr is a log rather than a terminal
// (CI), a run is never silent: it announces its table and its unmeasured
// preload before they happen, then prints a line per interval with the
// model time, its stage and its rates.
func TestProgressLinesForALog(t *testing.T) {
	cfg := engine.DefaultConfig()
	none, err := engine.ProfileByName("none")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile, cfg.TimeScale = none, 1 // wall time, so intervals pass
	tg, err := enginetarget.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	spec := workloads.DefaultSpec()
	spec.Op, spec.Threads, spec.Preload = workloads.OpGet, 2, 50
	spec.Warmup, spec.Duration = 600*time.Millisecond, 600*time.Millisecond // 12 intervals each
	coord, err := workloads.NewCoordinator(spec, tg)
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	stop, phase := startLines(&log, coord, tg.Clock(), 50*time.Millisecond)
	coord.OnPhase(phase)
	_, err = coord.Run(context.Background())
	stop()
	if err != nil {
		t.Fatal(err)
	}
	out := log.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^run: creating table \w+$`),
		regexp.MustCompile(`(?m)^run: loading 100 entities for the threads to read \(not measured\)$`),
		regexp.MustCompile(`(?m)^run: 2 threads started: 600ms of warm-up, then 600ms measured$`),
		regexp.MustCompile(`(?m)^run: \d+s / 1.2s \(warm-up\) +\d+ entities/s +\d+\.\d\d% throttled$`),
		regexp.MustCompile(`(?m)^run: \d+s / 1.2s \(measuring\) +\d+ entities/s +\d+\.\d\d% throttled$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the log lacks a line like %s:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "loading"), strings.Index(out, "threads started"); i < 0 || j < i {
		t.Errorf("the preload must be announced before the load starts:\n%s", out)
	}
}

// TestRunIsNeverSilentInALog: `run` with stderr not a terminal announces
// its stages, through the command as a user runs it.
func TestRunIsNeverSilentInALog(t *testing.T) {
	code, _, errOut := tb(t, context.Background(), nil, "run", "--op", "get", "--preload", "10", "--duration", "5s", "--warmup", "1s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"run: creating table", "run: loading 10 entities", "run: 1 threads started"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = tb(t, context.Background(), nil, "run", "--duration", "5s", "--warmup", "1s", "--quiet")
	if code != 0 || strings.Contains(errOut, "run:") {
		t.Errorf("--quiet printed progress (exit %d):\n%s", code, errOut)
	}
}
