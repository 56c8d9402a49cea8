package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads/vm"
)

// loop is a closed-loop load of the case study's method: VMs of threads,
// each sending its next request when the last returns and pausing 3 s after
// any error.
type loop struct {
	profile   engine.Profile
	scale     float64
	vms       int
	threads   int
	size      vm.Size
	op        string // insert, get, batch
	batch     int
	shared    bool // one PartitionKey for every thread
	warmup    time.Duration
	duration  time.Duration
	seed      uint64
	balancer  engine.BalancerConfig
	partition string // a fixed PartitionKey; overrides shared
}

type loopResult struct {
	entities, requests, throttled, timeouts int64
	latencySum                              time.Duration
	latencies                               []time.Duration
	secs                                    float64
}

func (r loopResult) entitiesPerSec() float64 { return float64(r.entities) / r.secs }
func (r loopResult) throttledPct() float64 {
	return 100 * float64(r.throttled+r.timeouts) / float64(r.requests)
}
func (r loopResult) meanLatency() time.Duration {
	return r.latencySum / time.Duration(max(r.requests, 1))
}
func (r loopResult) String() string {
	return fmt.Sprintf("%.0f entities/s, %.4f%% throttled, %d requests, mean %v", r.entitiesPerSec(), r.throttledPct(), r.requests, r.meanLatency())
}

func payload(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 470)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// run runs the loop; call it inside a synctest bubble.
func (l loop) run(t *testing.T) loopResult {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = l.profile
	cfg.PreSplit = 16
	cfg.Seed = l.seed
	cfg.TimeScale = max(l.scale, 1)
	cfg.Balancer = l.balancer
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.CreateTable(ctx, "bench"); err != nil {
		t.Fatal(err)
	}
	clock := e.Clock()
	start := clock.Now()
	measureFrom, measureTo := start.Add(l.warmup), start.Add(l.warmup+l.duration)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var res loopResult
	var wg sync.WaitGroup
	shared := fmt.Sprintf("%08x-shared", l.seed)
	cost := vm.DefaultCost()
	for v := range l.vms {
		machine := vm.New(l.size)
		for th := range l.threads {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(l.seed, uint64(v*1000+th)))
				call := &engine.Call{Rand: rng}
				cctx := engine.WithCall(rctx, call)
				pk := fmt.Sprintf("%08x-%04x-%04x", rng.Uint32(), v, th)
				if l.shared {
					pk = shared
				}
				if l.partition != "" {
					pk = l.partition
				}
				body := payload(rng)
				n := max(l.batch, 1)
				var local loopResult
				idx := 0
				if l.op == "get" { // the thread's entities, loaded first
					for i := range 200 {
						if _, err := e.Upsert(ctx, "bench", engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%06d", i), Properties: []engine.Property{engine.String("Payload", body)}}, engine.Replace); err != nil {
							t.Error(err)
							return
						}
					}
				}
				next := clock.Now().Add(time.Duration(rng.Int64N(int64(10 * time.Millisecond))))
				for rctx.Err() == nil {
					if clock.SleepUntil(rctx, next) != nil {
						break
					}
					sent := clock.Now()
					var work time.Duration
					switch l.op {
					case "get":
						work = cost.Get
					default:
						work = cost.Write(n)
					}
					call.Arrival = machine.Spend(sent, work)
					var err error
					switch l.op {
					case "insert":
						_, err = e.Insert(cctx, "bench", engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("j_%d_%d_%d", v, th, idx), Properties: []engine.Property{engine.String("Payload", body)}})
						idx++
					case "get":
						_, err = e.Get(cctx, "bench", pk, fmt.Sprintf("r%06d", idx%200), nil)
						idx++
					case "batch":
						ops := make([]engine.BatchOp, n)
						for i := range ops {
							ops[i] = engine.BatchOp{Kind: engine.BatchInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("j_%d_%d_%d", v, th, idx), Properties: []engine.Property{engine.String("Payload", body)}}}
							idx++
						}
						_, err = e.Batch(cctx, "bench", ops)
					}
					if errors.Is(err, context.Canceled) {
						break
					}
					done := call.Timing.Done
					if !done.Before(measureFrom) && done.Before(measureTo) {
						local.requests++
						local.latencySum += done.Sub(sent)
						local.latencies = append(local.latencies, done.Sub(sent))
						if err == nil {
							local.entities += int64(n)
						} else if engine.IsCode(err, engine.CodeServerBusy) {
							local.throttled++
						} else if engine.IsCode(err, engine.CodeOperationTimedOut) {
							local.timeouts++
						} else {
							t.Errorf("unexpected error: %v", err)
						}
					}
					next = done
					if err != nil {
						next = done.Add(3 * time.Second)
					}
				}
				mu.Lock()
				res.entities += local.entities
				res.requests += local.requests
				res.throttled += local.throttled
				res.timeouts += local.timeouts
				res.latencySum += local.latencySum
				res.latencies = append(res.latencies, local.latencies...)
				mu.Unlock()
			})
		}
	}
	clock.SleepUntil(ctx, measureTo)
	cancel()
	wg.Wait()
	res.secs = l.duration.Seconds()
	return res
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if want == 0 {
		if got > tol {
			t.Errorf("%s = %.4g, want at most %.4g", what, got, tol)
		}
		return
	}
	if d := (got - want) / want; d > tol || d < -tol {
		t.Errorf("%s = %.4g, want %.4g ±%.0f%%", what, got, want, tol*100)
	}
}

func TestCalibrationProbe(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("probe")
	}
	for _, tc := range []loop{
		{op: "insert", vms: 2, threads: 15, size: vm.XL, shared: true},
		{op: "insert", vms: 5, threads: 15, size: vm.XL, shared: true},
		{op: "insert", vms: 10, threads: 15, size: vm.XL, shared: true},
		{op: "insert", vms: 16, threads: 15, size: vm.XL, shared: true},
		{op: "batch", batch: 100, vms: 2, threads: 10, size: vm.XL, shared: true},
		{op: "batch", batch: 100, vms: 4, threads: 10, size: vm.XL, shared: true},
		{op: "batch", batch: 100, vms: 3, threads: 10, size: vm.XL, shared: true},
		{op: "batch", batch: 100, vms: 5, threads: 10, size: vm.XL, shared: true},
	} {
		synctest.Test(t, func(t *testing.T) {
			tc.profile = engine.WA2010()
			if v := os.Getenv("PROBE_RATE"); v != "" {
				tc.profile.PartitionKeyRate, _ = strconv.ParseFloat(v, 64)
			}
			if v := os.Getenv("PROBE_BURST"); v != "" {
				tc.profile.Burst, _ = time.ParseDuration(v)
			}
			if v := os.Getenv("PROBE_FEU"); v != "" {
				tc.profile.FEWriteUnit, _ = time.ParseDuration(v)
			}
			tc.warmup, tc.duration, tc.seed = 30*time.Second, 300*time.Second, 7
			tc.balancer = engine.DefaultBalancerConfig()
			r := tc.run(t)
			t.Logf("%s %d VMs: %v", tc.op, tc.vms, r)
		})
	}
	_ = strings.Repeat
}
