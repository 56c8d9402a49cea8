package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
	"github.com/tablebench/tablebench/workloads/vm"
)

var ctx = context.Background()

func engineTarget(t *testing.T, mod ...func(*engine.Config)) *enginetarget.Target {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.PreSplit = 16
	for _, m := range mod {
		m(&cfg)
	}
	tg, err := enginetarget.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func run(t *testing.T, spec workloads.Spec, tg workloads.Target) *results.Run {
	t.Helper()
	r, err := workloads.NewCoordinator(spec, tg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if d := (got - want) / want; d > tol || d < -tol {
		t.Errorf("%s = %.4g, want %.4g ±%.1f%%", what, got, want, 100*tol)
	}
}

// Little's law: a closed loop of N threads completes N / mean latency
// requests per second.
func TestClosedLoopLittlesLaw(t *testing.T) {
	for _, op := range []workloads.OpKind{workloads.OpInsert, workloads.OpGet, workloads.OpBatch} {
		t.Run(string(op), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				spec := workloads.DefaultSpec()
				spec.Op, spec.BatchSize, spec.VMs, spec.Threads = op, 20, 2, 10
				spec.Duration, spec.Warmup = 60*time.Second, 5*time.Second
				res := run(t, spec, engineTarget(t))
				want := float64(spec.VMs*spec.Threads) / (res.LatencyMs.Mean / 1000)
				near(t, "requests/s", res.RequestsPerSec, want, 0.02)
				if res.ThrottledPct != 0 || len(res.Errors) != 0 {
					t.Fatalf("errors in an unthrottled run: %v", res.Errors)
				}
			})
		})
	}
}

func TestWarmupIsExcluded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 5, 20*time.Second, 10*time.Second
		res := run(t, spec, engineTarget(t))
		var warm, measured int64
		for _, iv := range res.Intervals {
			if iv.Warmup != (iv.Second < 10) {
				t.Fatalf("second %d marked warmup=%v", iv.Second, iv.Warmup)
			}
			if iv.Warmup {
				warm += iv.Requests
			} else {
				measured += iv.Requests
			}
		}
		if warm == 0 || res.MeasuredSec != 20 {
			t.Fatalf("warm-up had %d requests, measured %v s", warm, res.MeasuredSec)
		}
		// Totals count the requests due in the window, seconds those that
		// completed in them: they differ by the requests in flight at
		// either edge, at most one per thread at each.
		if d := res.Totals.Requests - measured; d > int64(spec.Threads) || d < -int64(spec.Threads) {
			t.Fatalf("totals count %d requests, the measured seconds %d", res.Totals.Requests, measured)
		}
		near(t, "requests/s", res.RequestsPerSec, float64(res.Totals.Requests)/20, 0.001)
	})
}

// failing answers every request with 503 ServerBusy after 10 ms.
type failing struct{ workloads.Target }

func (f failing) NewSession(seed uint64) workloads.Session { return failSession{f.Clock()} }

type failSession struct{ clock clock.Clock }

func (s failSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	done := s.clock.Now().Add(10 * time.Millisecond)
	if err := s.clock.SleepUntil(ctx, done); err != nil {
		return done, err
	}
	return done, &tables.Error{Status: 503, Code: tables.CodeServerBusy, Message: tables.MsgServerBusy, Index: -1}
}

func TestPauseAfterError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 4, 30*time.Second, 0
		res := run(t, spec, failing{engineTarget(t)})
		// Each thread sends one request every 3.01 s: ~10 in 30 s.
		if got := res.Totals.Requests; got < 36 || got > 44 {
			t.Fatalf("%d requests in 30 s from 4 threads pausing 3 s after each error, want ~40", got)
		}
		if res.ThrottledPct != 100 || res.Errors[results.OutcomeThrottled] != res.Totals.Requests {
			t.Fatalf("throttling not counted: %v", res.Errors)
		}
	})
}

func TestRetryCountsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 20*time.Second, 0
		spec.Retry = workloads.Retry{Policy: workloads.RetryFixed, MaxRetries: 3, Delay: 100 * time.Millisecond}
		res := run(t, spec, failing{engineTarget(t)})
		// Each operation: 4 attempts of 10 ms with 3 delays of 100 ms.
		if res.Totals.Retries == 0 || res.Totals.Retries*4 < res.Totals.Requests*3-4 {
			t.Fatalf("%d requests, %d retries: every attempt must be counted", res.Totals.Requests, res.Totals.Retries)
		}
		near(t, "requests", float64(res.Totals.Requests), 20/0.34*4, 0.05)
	})
}

// slow answers every request after 50 ms.
type slow struct{ workloads.Target }

func (f slow) NewSession(seed uint64) workloads.Session { return slowSession{f.Clock()} }

type slowSession struct{ clock clock.Clock }

func (s slowSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	done := s.clock.Now().Add(50 * time.Millisecond)
	return done, s.clock.SleepUntil(ctx, done)
}

func TestOpenLoopCountsQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 10*time.Second, 0
		closed := run(t, spec, slow{engineTarget(t)})
		spec.Load, spec.Rate = workloads.LoadOpen, 40 // twice what one thread of 50 ms can do
		spec.Overload = workloads.OverloadQueue
		open := run(t, spec, slow{engineTarget(t)})
		if closed.LatencyMs.P99 > 51 {
			t.Fatalf("closed loop p99 %v ms, want 50", closed.LatencyMs.P99)
		}
		// Due every 25 ms, served every 50 ms: by the end requests are ~5 s late.
		if open.LatencyMs.Max < 4000 || open.Totals.LateStarts < open.Totals.Requests/2 {
			t.Fatalf("open loop max latency %v ms, %d of %d late: queueing behind the intended start is hidden",
				open.LatencyMs.Max, open.Totals.LateStarts, open.Totals.Requests)
		}
	})
}

// TestOpenLoopOnASaturatedClient: an open load that its modelled VM's CPU
// cannot send, rather than its threads, is blamed on the client with the
// fix that works, more or larger VMs: another thread on a saturated VM
// only queues for its CPU.
func TestOpenLoopOnASaturatedClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 10*time.Second, 2*time.Second
		spec.VMSize, spec.Threads = vm.Small, 20 // one core at 5 ms a request: some 200 requests/s
		spec.Load, spec.Rate = workloads.LoadOpen, 1000
		res := run(t, spec, engineTarget(t))
		if !hasWarning(res.Warnings, "modelled VMs' CPU was saturated (small VMs), so more threads per VM will not help; use more VMs") {
			t.Fatalf("warnings %q", res.Warnings)
		}
		if hasWarning(res.Warnings, "use --threads") {
			t.Fatalf("a saturated VM is told to add threads: %q", res.Warnings)
		}
	})
}

// TestOpenLoopHeldByRetries: an open load whose threads wait out retries'
// backoffs drops requests though its threads would carry the rate at the
// answers' latency: the warning blames the retries, not the endpoint.
func TestOpenLoopHeldByRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 10*time.Second, 2*time.Second
		spec.VMSize, spec.VMs, spec.Threads = vm.Modern, 1, 40
		spec.Partition = workloads.PartitionShared // one key at 1,000 entities/s: the rest throttled and retried
		spec.Retry, _ = workloads.DefaultRetry(workloads.RetrySDK)
		spec.Load, spec.Rate = workloads.LoadOpen, 3000
		res := run(t, spec, engineTarget(t, func(c *engine.Config) {
			c.Profile = engine.Modern()
			c.Profile.PartitionKeyRate = 1000
		}))
		if res.Totals.Retries == 0 || res.OpenLoad == nil || res.OpenLoad.Dropped == 0 {
			t.Fatalf("%d retries, open load %+v, errors %v, warnings %q: want retries that drop requests", res.Totals.Retries, res.OpenLoad, res.Errors, res.Warnings)
		}
		if !hasWarning(res.Warnings, "so the retries held them") || !hasWarning(res.Warnings, "held a thread for its backoff (--retry sdk") {
			t.Fatalf("warnings %q", res.Warnings)
		}
	})
}

// TestOpenLoopDropsWhatNoThreadTakes: by default an open load twice what
// its one thread can send drops the requests due while the thread is
// busy: it never sends them, bills them or counts their wait, reports the
// rate it achieved beside the one intended, and says the client, not the
// endpoint, is too small, and how many threads would do.
func TestOpenLoopDropsWhatNoThreadTakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 10*time.Second, 2*time.Second
		spec.Load, spec.Rate = workloads.LoadOpen, 40 // twice what one thread of 50 ms can do
		res := run(t, spec, slow{engineTarget(t)})
		if res.LatencyMs.Max > 51 || res.Totals.LateStarts != 0 {
			t.Fatalf("max latency %v ms, %d late starts: a dropped request's wait was charged", res.LatencyMs.Max, res.Totals.LateStarts)
		}
		ol := res.OpenLoad
		if ol == nil || ol.Due != 400 || ol.Dropped < 190 || ol.Dropped > 210 || res.Totals.Dropped != ol.Dropped {
			t.Fatalf("open load %+v, totals %+v", ol, res.Totals)
		}
		if res.Totals.Requests+ol.Dropped != ol.Due || res.Billable != res.Totals.Requests {
			t.Fatalf("%d requests and %d dropped of %d due, %d billed", res.Totals.Requests, ol.Dropped, ol.Due, res.Billable)
		}
		near(t, "achieved requests/s", ol.AchievedPerSec, 20, 0.05)
		near(t, "intended requests/s", ol.IntendedPerSec, 40, 0.001)
		if !hasWarning(res.Warnings, "the client is too small for the rate") || !hasWarning(res.Warnings, "needs some 3 threads; use --threads 3 with --vms 1") {
			t.Fatalf("warnings %q", res.Warnings)
		}
		if err := res.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunThatMeasuredNothingSaysSo: a window shorter than any request
// holds no answer, and the run says it has no numbers rather than
// printing zeros as if they were measured.
func TestRunThatMeasuredNothingSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = time.Millisecond, 0
		res := run(t, spec, slow{engineTarget(t)})
		if res.Totals.Requests != 0 || !hasWarning(res.Warnings, "no request completed in the 1ms measured: the run has no numbers") {
			t.Fatalf("%d requests, warnings %q", res.Totals.Requests, res.Warnings)
		}
	})
}

// TestOpenLoopAdviceStaysWithinTheLimits: the threads an open load is
// told it needs are ones a spec takes: spread over VMs past a VM's
// limit, and past a run's limit a rate one run can carry instead.
func TestOpenLoopAdviceStaysWithinTheLimits(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want string
	}{
		{40000, "threads; use --vms 3 --threads 83"},                                        // some 2,500 threads
		{400000, "threads, more than the 20000 one run drives: lower the rate to about 31"}, // some 25,000
	} {
		synctest.Test(t, func(t *testing.T) {
			spec := workloads.DefaultSpec()
			spec.Duration, spec.Warmup = time.Second, 0
			spec.Load, spec.Rate = workloads.LoadOpen, tc.rate
			res := run(t, spec, slow{engineTarget(t)})
			if !hasWarning(res.Warnings, tc.want) {
				t.Fatalf("rate %g: warnings %q", tc.rate, res.Warnings)
			}
		})
	}
}

// TestOpenLoopRampsByStages: stages ramp the rate linearly from the one
// before, and after the last the rate holds.
func TestOpenLoopRampsByStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Warmup, spec.Duration = 20, 0, 40*time.Second
		spec.Load, spec.Rate = workloads.LoadOpen, 100
		spec.Stages = []workloads.Stage{{For: 10 * time.Second, Rate: 100}, {For: 20 * time.Second, Rate: 300}}
		// The schedule is what is tested: a service without latency answers
		// each request in the second it was due, where the calibrated one's
		// stalls (up to a second) would move a few into the next.
		res := run(t, spec, engineTarget(t, func(c *engine.Config) { c.Profile = engine.None() }))
		// 100/s for 10 s, 100 to 300/s over 20 s (4,000), then 300/s for 10 s.
		if due := res.OpenLoad.Due; due < 7995 || due > 8005 || res.OpenLoad.Dropped != 0 {
			t.Fatalf("open load %+v, want 8,000 due and none dropped", res.OpenLoad)
		}
		for _, iv := range res.Intervals {
			want := map[int]int64{5: 100, 20: 205, 35: 300}[iv.Second] // second 20 is 10.5 s into the ramp
			if want > 0 && (iv.Requests < want-3 || iv.Requests > want+3) {
				t.Errorf("second %d: %d requests, want %d", iv.Second, iv.Requests, want)
			}
		}
	})
}

func TestOpenLoopKeepsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 10, 20*time.Second, 2*time.Second
		spec.Load, spec.Rate = workloads.LoadOpen, 100
		res := run(t, spec, engineTarget(t))
		near(t, "requests/s", res.RequestsPerSec, 100, 0.02)
		// The threads keep up: no request starts late, and the only ones
		// not sent are those due at the very end while a slow answer held
		// every thread.
		if res.Totals.LateStarts > 0 || res.Totals.Dropped > int64(spec.Threads) {
			t.Fatalf("%d late starts and %d requests never sent at a rate the threads keep up with", res.Totals.LateStarts, res.Totals.Dropped)
		}
	})
}

func TestClientModel(t *testing.T) {
	// A small VM saturates at 1 / (5 ms + 0.8 ms x 100) ≈ 11.8 batch-100/s.
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Op, spec.BatchSize, spec.Threads, spec.VMSize = workloads.OpBatch, 100, 30, vm.Small
		spec.Duration = 60 * time.Second
		res := run(t, spec, engineTarget(t))
		near(t, "small VM batch-100 entities/s", res.EntitiesPerSec, 1176, 0.05)
		if len(res.ClientCPUPct) != 1 || res.ClientCPUPct[0] < 95 {
			t.Fatalf("client CPU %v%%, want saturated", res.ClientCPUPct)
		}
	})
}

func TestDeterministicRuns(t *testing.T) {
	var a, b *results.Run
	spec := workloads.DefaultSpec()
	spec.Op, spec.Partition, spec.VMs, spec.Threads = workloads.OpBatch, workloads.PartitionShared, 3, 10
	spec.Duration = 30 * time.Second
	synctest.Test(t, func(t *testing.T) { a = run(t, spec, engineTarget(t)) })
	synctest.Test(t, func(t *testing.T) { b = run(t, spec, engineTarget(t)) })
	if a.Totals.Requests != b.Totals.Requests || a.Totals.Throttled != b.Totals.Throttled || a.LatencyMs != b.LatencyMs {
		t.Fatalf("one seed, two results: %+v / %+v", a.Totals, b.Totals)
	}
}

// TestInterruptKeepsResults: a run interrupted 30 s into an hour's window
// keeps what it measured and says why it ended.
func TestInterruptKeepsResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Warmup, spec.Duration = 4, time.Second, time.Hour
		r, err := workloads.NewCoordinator(spec, engineTarget(t))
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(31*time.Second, cancel) // Ctrl-C after 30 s measured
		res, err := r.Run(cctx)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted || res.Totals.Requests == 0 {
			t.Fatalf("interrupted=%v with %d requests", res.Interrupted, res.Totals.Requests)
		}
		// It says it was interrupted and how much it measured, and does not
		// take the silence after the interrupt for an endpoint that stalled.
		if hasWarning(res.Warnings, "answered nothing") || !hasWarning(res.Warnings, "interrupted after 30.0 s of the 1h0m0s it was to measure") {
			t.Fatalf("warnings %q", res.Warnings)
		}
		near(t, "measured seconds", res.MeasuredSec, 30, 0.01)
	})
}

// interruptingTarget is the engine, whose sessions interrupt the run (as
// Ctrl-C would) at a moment of model time. With tasks, they send without
// waiting, as the engine's own do: its threads are then the virtual
// clock's tasks.
type interruptingTarget struct {
	*enginetarget.Target
	at     time.Time
	cancel context.CancelFunc
	tasks  bool
}

func (t *interruptingTarget) NewSession(seed uint64) workloads.Session {
	s := interruptingSession{t.Target.NewSession(seed), t}
	if t.tasks {
		return interruptingSender{s}
	}
	return s
}

// interruptingSender is an interruptingSession that sends without waiting.
type interruptingSender struct{ interruptingSession }

func (s interruptingSender) Send(ctx context.Context, op *workloads.Op) (time.Time, error) {
	s.interrupt()
	return s.Session.(workloads.Sender).Send(ctx, op)
}

type interruptingSession struct {
	workloads.Session
	t *interruptingTarget
}

func (s interruptingSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	s.interrupt()
	return s.Session.Do(ctx, op)
}

// interrupt ends the run's context once model time reaches the moment.
func (s interruptingSession) interrupt() {
	if !s.t.Clock().Now().Before(s.t.at) {
		s.t.cancel()
	}
}

// TestInterruptOnAVirtualClock: a run on the virtual clock interrupted
// 30 s into an hour's window measures those 30 s, though model time runs
// on to the deadline once its threads have stopped; ending there, it
// would average what it measured over an hour and find the service silent.
// Its threads are the clock's tasks, which an interrupt wakes through the
// clock, or a goroutine each, woken each through its own context; the
// tasks' case runs many times, as an interrupt races the clock.
func TestInterruptOnAVirtualClock(t *testing.T) {
	t0 := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, tasks := range []bool{false, true} {
		t.Run(map[bool]string{false: "goroutines", true: "tasks"}[tasks], func(t *testing.T) {
			for range map[bool]int{false: 1, true: 5}[tasks] {
				vc := clock.NewVirtual(t0)
				spec := workloads.DefaultSpec()
				spec.VMs, spec.Threads, spec.Warmup, spec.Duration = 4, 25, time.Second, time.Hour
				cctx, cancel := context.WithCancel(ctx)
				tg := &interruptingTarget{Target: engineTarget(t, func(c *engine.Config) { c.Clock = vc }), cancel: cancel, tasks: tasks}
				// The table is made and its threads started at the clock's start.
				tg.at = t0.Add(31 * time.Second)
				r, err := workloads.NewCoordinator(spec, tg)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					res, err := r.Run(cctx)
					if err != nil {
						t.Error(err)
						return
					}
					if !res.Interrupted || hasWarning(res.Warnings, "answered nothing") {
						t.Errorf("interrupted=%v, warnings %q", res.Interrupted, res.Warnings)
					}
					near(t, "measured seconds", res.MeasuredSec, 30, 0.02)
				}()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the interrupted run never ended")
				}
				cancel()
			}
		})
	}
}

// TestVirtualClock: a run on the engine's virtual clock measures what the
// same run measures in (synctest's) real time.
func TestVirtualClock(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Op, spec.Partition, spec.VMs, spec.Threads = workloads.OpBatch, workloads.PartitionShared, 3, 10
	spec.Duration = 60 * time.Second
	var real, virtual *results.Run
	synctest.Test(t, func(t *testing.T) { real = run(t, spec, engineTarget(t)) })
	vc := clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	virtual = run(t, spec, engineTarget(t, func(c *engine.Config) { c.Clock = vc }))
	near(t, "entities/s", virtual.EntitiesPerSec, real.EntitiesPerSec, 0.02)
	near(t, "throttled %", virtual.ThrottledPct, real.ThrottledPct, 0.10)
	near(t, "p50 latency", virtual.LatencyMs.P50, real.LatencyMs.P50, 0.02)
	if got := vc.Now().Sub(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)); got < 70*time.Second {
		t.Fatalf("virtual time advanced %v, want the run's 70 s", got)
	}
}

// TestRunsShareATable: runs given one table and the shared PartitionKey
// load one partition together, write no rows over each other's, and leave
// the table for the next.
func TestRunsShareATable(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Op, spec.BatchSize, spec.Partition, spec.VMs, spec.Threads = workloads.OpBatch, 100, workloads.PartitionShared, 2, 10
	spec.Duration, spec.Table = 60*time.Second, "shared1"
	var alone *results.Run
	synctest.Test(t, func(t *testing.T) { alone = run(t, spec, engineTarget(t)) })
	synctest.Test(t, func(t *testing.T) {
		tg := engineTarget(t)
		var together [2]*results.Run
		var wg sync.WaitGroup
		for i, job := range []string{"a", "b"} {
			s := spec
			s.JobID = job
			wg.Go(func() { together[i] = run(t, s, tg) })
		}
		wg.Wait()
		for i, r := range together {
			t.Logf("run %d: %.0f e/s, %.2f%% throttled (alone: %.0f e/s, %.2f%%)", i, r.EntitiesPerSec, r.ThrottledPct, alone.EntitiesPerSec, alone.ThrottledPct)
			if n := r.Errors["Conflict"] + r.Errors["EntityAlreadyExists"]; n > 0 {
				t.Errorf("run %d wrote over the other's rows: %v", i, r.Errors)
			}
			if r.ThrottledPct < 3*alone.ThrottledPct+1 || r.EntitiesPerSec > 0.8*alone.EntitiesPerSec {
				t.Errorf("run %d: %.0f e/s, %.2f%% throttled; alone %.0f e/s, %.2f%%: the runs did not share one partition",
					i, r.EntitiesPerSec, r.ThrottledPct, alone.EntitiesPerSec, alone.ThrottledPct)
			}
		}
		var te *tables.Error
		if err := tg.CreateTable(ctx, "shared1"); !errors.As(err, &te) || te.Code != tables.CodeTableAlreadyExists {
			t.Fatalf("the shared table is gone after the runs: %v", err)
		}
	})
}

// TestRetriesThatConfuse: in virtual time a client that stops waiting
// leaves the service to finish the insert, so its retry meets Conflict;
// with a transaction id the harness tells its own write from a real
// conflict, and the timeouts, being the run's own probe, raise no warning.
func TestRetriesThatConfuse(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Threads, spec.Duration, spec.RequestTimeout = 10, 20*time.Second, 50*time.Millisecond
	spec.Retry = workloads.Retry{Policy: workloads.RetryFixed, MaxRetries: 3, Delay: 100 * time.Millisecond}
	virtual := func(c *engine.Config) { c.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)) }
	plain := run(t, spec, engineTarget(t, virtual))
	spec.TxnID = true
	txn := run(t, spec, engineTarget(t, virtual))
	t.Logf("without: %v; with: %v", plain.Errors, txn.Errors)
	if plain.Errors["ClientTimeout"] == 0 || plain.Errors["EntityAlreadyExists"] == 0 {
		t.Fatalf("no client timeouts or no confusing conflicts: %v", plain.Errors)
	}
	if txn.Errors["ClientTimeout"] == 0 || txn.Errors["EntityAlreadyExists"] != 0 {
		t.Fatalf("with a transaction id: %v", txn.Errors)
	}
	if len(plain.Warnings) > 0 {
		t.Fatalf("a deliberate 50 ms client timeout was taken for a frozen endpoint: %v", plain.Warnings)
	}
}

// TestEntitySizes: a run writes entities of every size it accepts without
// an error, up to the service's 1 MiB (TestPayloadSizes checks their
// weight): inserts, batches and the preload of gets.
func TestEntitySizes(t *testing.T) {
	for _, c := range []struct {
		size      int
		op        workloads.OpKind
		batchSize int
	}{
		{256, workloads.OpInsert, 1}, {1024, workloads.OpInsert, 1}, {65_536, workloads.OpInsert, 1},
		{65_700, workloads.OpInsert, 1}, {200_001, workloads.OpInsert, 1}, {1 << 20, workloads.OpInsert, 1},
		{100_000, workloads.OpBatch, 4}, {300_000, workloads.OpGet, 1},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.op, c.size), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				spec := workloads.DefaultSpec()
				spec.Op, spec.BatchSize, spec.EntitySize = c.op, c.batchSize, c.size
				spec.Duration, spec.Warmup, spec.Preload = 5*time.Second, 0, 3
				res := run(t, spec, engineTarget(t))
				if len(res.Errors) > 0 || res.Totals.Requests == 0 {
					t.Fatalf("%d requests, errors %v", res.Totals.Requests, res.Errors)
				}
			})
		})
	}
}

// TestVirtualRunStopsAtTheDeadline checks that in virtual time every
// thread stops at the deadline itself: an open-loop thread asleep until a
// request due after it never sends that request, so every request the
// intervals count is one the run's totals count too.
func TestVirtualRunStopsAtTheDeadline(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Op, spec.Partition, spec.VMs, spec.Threads = workloads.OpInsert, workloads.PartitionShared, 4, 10
	spec.Load, spec.Rate = workloads.LoadOpen, 20 // each thread sends every 2 s
	spec.Duration, spec.Warmup = 20*time.Second, 0
	for seed := range uint64(5) {
		spec.Seed = seed + 1
		r := run(t, spec, engineTarget(t, func(c *engine.Config) { c.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)) }))
		var sent int64
		for _, in := range r.Intervals {
			sent += in.Requests
		}
		if sent != r.Totals.Requests {
			t.Fatalf("seed %d: the intervals count %d requests, the totals %d: a thread sent after the deadline", spec.Seed, sent, r.Totals.Requests)
		}
	}
}

// TestVirtualRunNamesItsTableFromItsSeed checks that a run in virtual time
// names its table, and so itself, from its seed, so that its records
// repeat, and that a table an earlier run kept does not stop the next.
func TestVirtualRunNamesItsTableFromItsSeed(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.VMs, spec.Threads, spec.Duration, spec.Warmup = 1, 1, time.Second, 0
	virtual := func(c *engine.Config) { c.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)) }
	a := run(t, spec, engineTarget(t, virtual))
	b := run(t, spec, engineTarget(t, virtual))
	if a.ID != b.ID {
		t.Fatalf("two runs of one seed are %s and %s", a.ID, b.ID)
	}
	spec.KeepTable = true
	tg := engineTarget(t, virtual)
	kept, next := run(t, spec, tg), run(t, spec, tg)
	if kept.ID != a.ID || next.ID == kept.ID {
		t.Fatalf("runs %s then %s on one engine, want %s then another", kept.ID, next.ID, a.ID)
	}
}

// TestSaturatedClientWarns: a small VM's 30 threads of batches saturate its
// modelled client, so the run warns that its numbers describe the client
// and how to add client capacity; a run that declares itself client-bound
// on purpose notes it instead, and an unsaturated client says nothing.
func TestSaturatedClientWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Op, spec.BatchSize, spec.Threads, spec.VMSize = workloads.OpBatch, 100, 30, vm.Small
		spec.Duration = 20 * time.Second
		res := run(t, spec, engineTarget(t))
		want := "the modelled 2010 client was saturated: 1 of 1 VMs (small) at 95% or more of their CPU over the measured window (the busiest 100%)"
		if !hasWarning(res.Warnings, want) || !hasWarning(res.Warnings, "a larger --vm-size") || len(res.Notes) > 0 {
			t.Fatalf("client CPU %v%%: warnings %q, notes %q", res.ClientCPUPct, res.Warnings, res.Notes)
		}
		r, err := workloads.NewCoordinator(spec, engineTarget(t))
		if err != nil {
			t.Fatal(err)
		}
		r.ClientBound("the figure measures the client")
		meant, err := r.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(meant.Warnings) > 0 || !hasWarning(meant.Notes, want) || !hasWarning(meant.Notes, "as meant: the figure measures the client") {
			t.Fatalf("declared client-bound: warnings %q, notes %q", meant.Warnings, meant.Notes)
		}
		spec.Threads = 4 // 4 x 85 ms of a 800 ms cycle
		light := run(t, spec, engineTarget(t))
		if len(light.Warnings) > 0 || len(light.Notes) > 0 || light.ClientCPUPct[0] >= 95 {
			t.Fatalf("client CPU %v%%: warnings %q, notes %q", light.ClientCPUPct, light.Warnings, light.Notes)
		}
	})
}

// TestRecordSaysWhatRan: the run's record carries the identity it was
// given before the run, and what readers need of its spec in its Setup.
func TestRecordSaysWhatRan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Op, spec.BatchSize, spec.Partition, spec.VMs, spec.Threads, spec.VMSize = workloads.OpBatch, 20, workloads.PartitionShared, 2, 3, vm.Small
		spec.Duration, spec.Warmup = 4*time.Second, time.Second
		r, err := workloads.NewCoordinator(spec, engineTarget(t))
		if err != nil {
			t.Fatal(err)
		}
		id := workloads.Identity{ID: "fig99-small-vm-x3", Figure: "fig99", Series: "small VM", X: 3}
		r.Identify(id)
		res, err := r.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := (workloads.Identity{ID: res.ID, Figure: res.Figure, Series: res.Series, X: res.X}); got != id {
			t.Errorf("identity %+v, want %+v", got, id)
		}
		want := results.RunSpec{Op: string(workloads.OpBatch), BatchSize: 20, Partition: string(workloads.PartitionShared), VMs: 2, Threads: 3, VMSize: vm.Small.Name,
			EntitySize: spec.EntitySize, Warmup: time.Second, Duration: 4 * time.Second, Load: string(workloads.LoadClosed)}
		if !reflect.DeepEqual(res.Setup, want) {
			t.Errorf("setup %+v, want %+v", res.Setup, want)
		}
		if res := run(t, spec, engineTarget(t)); !strings.HasPrefix(res.ID, "tb") {
			t.Errorf("a run without an identity is named %q, not after its table", res.ID)
		}
	})
}

// TestEveryRequestCountsAtItsPartitionKey: whatever the operation, each
// request counts at the PartitionKey it went to: a run of 6 threads with a
// key each touches 6 keys, and its heat map has a row for each.
func TestEveryRequestCountsAtItsPartitionKey(t *testing.T) {
	for _, op := range []workloads.OpKind{workloads.OpInsert, workloads.OpUpsert, workloads.OpBatch, workloads.OpGet, workloads.OpQuery} {
		t.Run(string(op), func(t *testing.T) {
			spec := workloads.DefaultSpec()
			spec.Op, spec.BatchSize, spec.Partition, spec.VMs, spec.Threads = op, 10, workloads.PartitionGUID, 2, 3
			spec.Warmup, spec.Duration = time.Second, 5*time.Second
			var r *results.Run
			synctest.Test(t, func(t *testing.T) { r = run(t, spec, engineTarget(t)) })
			p, h := r.Partitions, r.Heatmap
			if p == nil || p.Distinct != 6 || !p.DistinctExact || len(p.Top) != 6 || p.UnlistedMax != 0 {
				t.Fatalf("partitions %+v; want 6 keys, exactly", p)
			}
			var sum int64
			for _, k := range p.Top {
				sum += k.Requests
			}
			if sum != r.Totals.Requests {
				t.Errorf("the keys count %d requests, the run %d", sum, r.Totals.Requests)
			}
			if h == nil || len(h.Rows) != 6 || len(h.NoKey) != 0 {
				t.Errorf("heat map %+v; want a row for each of the 6 keys, and no request without one", h)
			}
			if err := r.Check(); err != nil {
				t.Error(err)
			}
		})
	}
}
