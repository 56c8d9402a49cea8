package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
	profile  engine.Profile
	scale    float64
	vms      int
	threads  int
	size     vm.Size
	op       string // insert, get, batch
	batch    int
	shared   bool // one PartitionKey for every thread
	warmup   time.Duration
	duration time.Duration
	seed     uint64
	balancer engine.BalancerConfig
	cold     bool // start the table in one range partition
	appendPK bool // time-ordered, increasing PartitionKeys
}

type loopResult struct {
	entities, requests, throttled, timeouts int64
	latencySum                              time.Duration
	latencies                               []time.Duration
	secs                                    float64
	start                                   time.Time
	events                                  []engine.Event
	snapshots                               []engine.Snapshot
	partitions                              []engine.PartitionLoad
}

// splits counts the balancer's splits during the run.
func (r loopResult) splits() int {
	n := 0
	for _, ev := range r.events {
		if ev.Kind == engine.EventSplit {
			n++
		}
	}
	return n
}

func (r loopResult) median() time.Duration {
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[len(s)/2]
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
	cfg.PreSplit = l.profile.SteadySplit()
	if l.cold {
		cfg.PreSplit = 0
	}
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
				cl := e.Client(call)
				pk := fmt.Sprintf("%08x-%04x-%04x", rng.Uint32(), v, th)
				if l.shared {
					pk = shared
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
						if l.appendPK {
							pk = fmt.Sprintf("%019d-%04x-%04x", clock.Now().UnixNano(), v, th)
						}
						_, err = cl.Insert(rctx, "bench", engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("j_%d_%d_%d", v, th, idx), Properties: []engine.Property{engine.String("Payload", body)}})
						idx++
					case "get":
						_, err = cl.Get(rctx, "bench", pk, fmt.Sprintf("r%06d", idx%200), nil)
						idx++
					case "batch":
						ops := make([]engine.BatchOp, n)
						for i := range ops {
							ops[i] = engine.BatchOp{Kind: engine.BatchInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("j_%d_%d_%d", v, th, idx), Properties: []engine.Property{engine.String("Payload", body)}}}
							idx++
						}
						_, err = cl.Batch(rctx, "bench", ops)
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
	res.events = e.Events()
	res.snapshots = e.Snapshots()
	res.partitions, _ = e.Partitions("bench")
	res.start = start
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

func wa2010Loop(l loop) loop {
	l.profile = engine.WA2010()
	l.size = vm.XL
	l.seed = 7
	l.warmup, l.duration = 30*time.Second, 300*time.Second
	l.balancer = engine.DefaultBalancerConfig()
	return l
}

// coldLoop is a wa2010 loop on a table that starts cold, in one range
// partition, measured from the start under the accelerated balancer (hot
// from the 15 s tick, decides in 15-30 s).
func coldLoop(l loop, d time.Duration) loop {
	l.cold = true
	l = wa2010Loop(l)
	l.warmup, l.duration = 0, d
	l.balancer = engine.AcceleratedBalancerConfig()
	return l
}

// TestDeterministic checks that a fixed seed gives the same run twice.
func TestDeterministic(t *testing.T) {
	var a, b loopResult
	l := wa2010Loop(loop{op: "batch", batch: 100, vms: 3, threads: 10, shared: true})
	l.duration = 60 * time.Second
	synctest.Test(t, func(t *testing.T) { a = l.run(t) })
	synctest.Test(t, func(t *testing.T) { b = l.run(t) })
	if a.entities != b.entities || a.throttled != b.throttled || a.latencySum != b.latencySum {
		t.Fatalf("two runs of one seed differ: %v and %v", a, b)
	}
}

// TestBalancerSplitsHotRange: a cold table under load from many keys is one
// hot range partition; the balancer splits it once it has stayed hot for
// its decision delay, and not before.
func TestBalancerSplitsHotRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := coldLoop(loop{op: "insert", vms: 10, threads: 15}, 180*time.Second).run(t)
		var splits []engine.Event
		for _, ev := range r.events {
			if ev.Kind == engine.EventSplit {
				splits = append(splits, ev)
			}
		}
		for _, ev := range r.events {
			t.Logf("%v %s [%q,%q) at %q server %d->%d", ev.Time.Sub(r.start), ev.Kind, ev.Lo, ev.Hi, ev.At, ev.From, ev.To)
		}
		t.Log(r)
		if len(splits) == 0 {
			t.Fatalf("no split in 180 s of a hot range; events %v", r.events)
		}
		if first := splits[0].Time.Sub(r.start); first < 30*time.Second {
			t.Fatalf("first split after %v, before the partition could have been hot for 15 s", first)
		}
		if len(r.partitions) < 2 {
			t.Fatalf("table still has %d range partition", len(r.partitions))
		}
		var moved bool
		for _, ev := range r.events {
			moved = moved || ev.Kind == engine.EventMove && ev.From != ev.To
		}
		if !moved {
			t.Fatal("no split child was moved to another server")
		}
		if r.throttled == 0 {
			t.Fatal("no request was refused while partitions split and moved")
		}
	})
}

// TestBalancerNeverSplitsOneKey: a saturated single PartitionKey can at
// most be isolated in a range partition of its own; its throughput stays
// bounded by one lane.
func TestBalancerNeverSplitsOneKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := coldLoop(loop{op: "insert", vms: 10, threads: 15, shared: true}, 180*time.Second).run(t)
		splits := r.splits()
		t.Logf("events %v, partitions %v", r.events, r.partitions)
		if splits > 1 {
			t.Fatalf("%d splits of a one-key load; events %v", splits, r.events)
		}
		within(t, "entities/s", r.entitiesPerSec(), 1000, 0.15)
	})
}

// TestAppendOnlyStaysHot: time-ordered keys always land in the last range
// partition, so splitting never spreads them.
func TestAppendOnlyStaysHot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := coldLoop(loop{op: "insert", vms: 10, threads: 15, appendPK: true}, 240*time.Second).run(t)
		splits := r.splits()
		if splits == 0 {
			t.Fatal("the hot append-only range was never split")
		}
		last := r.snapshots[len(r.snapshots)-1]
		var total, tail float64
		for _, p := range last.Partitions {
			total += p.Units
			if p.Hi == "" {
				tail = p.Units
			}
		}
		t.Logf("%d splits; last window: tail %.0f of %.0f units; %v", splits, tail, total, r)
		if tail < 0.95*total {
			t.Fatalf("after %d splits the last range partition took %.0f of %.0f units; append-only load should stay there", splits, tail, total)
		}
		if r.entitiesPerSec() > 1150 {
			t.Fatalf("append-only load reached %.0f entities/s, more than one partition serves", r.entitiesPerSec())
		}
	})
}

// TestQueriesChargeScannedEntities: a query is charged for every entity it
// scans, so a big scan spends a PartitionKey's budget.
func TestQueriesChargeScannedEntities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig()
		cfg.Profile = engine.Modern()
		e, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		e.CreateTable(ctx, "scan")
		var ops []engine.BatchOp
		for i := range 3000 {
			ops = append(ops, engine.BatchOp{Kind: engine.BatchUpsertReplace, Entity: ent("p", fmt.Sprintf("r%05d", i))})
			if len(ops) == 100 {
				if _, err := e.Batch(ctx, "scan", ops); err != nil {
					t.Fatal(err)
				}
				ops = nil
				time.Sleep(time.Second) // stay within the key's budget
			}
		}
		time.Sleep(5 * time.Second)
		call := &engine.Call{}
		cl := e.Client(call)
		p, err := cl.QueryEntities(ctx, "scan", engine.Query{Filter: "PartitionKey eq 'p' and RowKey ge 'r00000'"})
		if err != nil || len(p.Entities) != 1000 || p.Scanned != 1000 {
			t.Fatalf("first page: %d entities, %d scanned, %v", len(p.Entities), p.Scanned, err)
		}
		if call.Timing.Units != 1000 {
			t.Fatalf("the page was charged %v units, want 1,000", call.Timing.Units)
		}
		q := engine.Query{Filter: "N eq 1", Continuation: p.Continuation} // matches nothing, scans the rest
		p, err = cl.QueryEntities(ctx, "scan", q)
		if err != nil || p.Scanned != 2000 || len(p.Entities) != 0 || p.Continuation != nil {
			t.Fatalf("second page scanned %d, returned %d, continuation %v, %v; want the last 2,000 scanned", p.Scanned, len(p.Entities), p.Continuation, err)
		}
		if call.Timing.Units != 2000 {
			t.Fatalf("the second page was charged %v units, want 2,000", call.Timing.Units)
		}
		_, err = e.Insert(ctx, "scan", ent("p", "more"))
		wantCode(t, err, 503, engine.CodeServerBusy)
	})
}

// TestTimeScale: a run compressed 10x agrees with the same run in real
// time on throughput and median latency.
func TestTimeScale(t *testing.T) {
	var real, fast loopResult
	l := wa2010Loop(loop{op: "insert", vms: 5, threads: 15, shared: true})
	l.duration = 60 * time.Second
	synctest.Test(t, func(t *testing.T) { real = l.run(t) })
	l.scale = 10
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fast = l.run(t)
		if wall := time.Since(start); wall > 10*time.Second {
			t.Fatalf("a 90 s experiment at scale 10 took %v of (virtual) wall time", wall)
		}
	})
	t.Logf("scale 1: %v, median %v; scale 10: %v, median %v", real, real.median(), fast, fast.median())
	within(t, "throughput at scale 10", fast.entitiesPerSec(), real.entitiesPerSec(), 0.05)
	within(t, "median latency at scale 10", float64(fast.median()), float64(real.median()), 0.05)
}

// TestDeadline: a request that cannot start before its server timeout gets
// 500 OperationTimedOut, answered at the deadline.
func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig()
		cfg.Balancer.Enabled = false
		// The backlog throttle would refuse a random share of the queue and
		// could leave it short enough to meet every deadline; only the
		// deadline is under test here.
		cfg.Profile.ThrottleAt = 1 << 30
		e, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		e.CreateTable(ctx, "slow")
		const timeout = 700 * time.Millisecond
		var wg sync.WaitGroup
		var mu sync.Mutex
		var timedOut, served []engine.Timing
		var lost []string   // PartitionKeys of batches that timed out
		for g := range 40 { // 40 batch-100s on 40 keys of one range partition at once
			wg.Go(func() {
				call := &engine.Call{Timeout: timeout, Rand: rand.New(rand.NewPCG(1, uint64(g)))}
				var ops []engine.BatchOp
				for i := range 100 {
					ops = append(ops, engine.BatchOp{Entity: ent(fmt.Sprintf("k%02d", g), fmt.Sprint(i))})
				}
				_, err := e.Client(call).Batch(ctx, "slow", ops)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					served = append(served, call.Timing)
				case engine.IsCode(err, engine.CodeOperationTimedOut):
					timedOut = append(timedOut, call.Timing)
					lost = append(lost, fmt.Sprintf("k%02d", g))
				default:
					t.Errorf("batch %d: %v, want success or %s", g, err, engine.CodeOperationTimedOut)
				}
			})
		}
		wg.Wait()
		if len(timedOut) == 0 || len(served) == 0 {
			t.Fatalf("%d batches served and %d timed out behind 40 batches with a %v timeout, want some of each", len(served), len(timedOut), timeout)
		}
		for _, tm := range timedOut {
			if got := tm.Done.Sub(tm.Arrival); got != timeout {
				t.Fatalf("a timeout was answered after %v, want at the %v deadline", got, timeout)
			}
		}
		for _, tm := range served {
			if started := tm.FrontEnd + tm.Wait; started > timeout {
				t.Fatalf("a batch was served although its lane started %v after arrival, past the %v deadline", started, timeout)
			}
		}
		for _, pk := range lost { // a timed-out write leaves nothing behind
			if _, err := e.Get(ctx, "slow", pk, "0", nil); !engine.IsCode(err, engine.CodeResourceNotFound) {
				t.Fatalf("entity of a timed-out batch: %v, want %s", err, engine.CodeResourceNotFound)
			}
		}
	})
}

// TestModernProfile: today's targets, one PartitionKey serves ~2,000
// single inserts/s with single-digit-millisecond latency when unloaded.
func TestModernProfile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig()
		cfg.Profile = engine.Modern()
		e, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.CreateTable(ctx, "today")
		call := &engine.Call{}
		var lat []time.Duration
		for i := range 201 {
			if _, err := e.Client(call).Insert(ctx, "today", ent("p", fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			lat = append(lat, call.Timing.Done.Sub(call.Timing.Arrival))
		}
		e.Close()
		slices.Sort(lat)
		if m := lat[100]; m > 10*time.Millisecond {
			t.Fatalf("unloaded insert median %v at the server, want single-digit milliseconds", m)
		}
		l := wa2010Loop(loop{op: "insert", vms: 10, threads: 30, shared: true}) // past the 2010 client's ~290/s per XL VM
		l.profile, l.duration = engine.Modern(), 30*time.Second
		r := l.run(t)
		within(t, "saturated single-key inserts/s", r.entitiesPerSec(), 2000, 0.15)
	})
}
