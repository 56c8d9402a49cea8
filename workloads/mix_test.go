package workloads_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// mixSpec is a workload over a fixed key space with every operation.
func mixSpec(mix ...workloads.MixOp) workloads.Spec {
	s := workloads.DefaultSpec()
	s.Mix = mix
	s.Partition = workloads.PartitionFixed
	s.Keys = workloads.KeySpace{Count: 200, Pick: workloads.Pick{Distribution: workloads.DistZipfian, Theta: 0.99},
		Names: workloads.NamesRandom, Buckets: 1, BucketAt: workloads.BucketPrefix}
	s.Rows = workloads.Pick{Distribution: workloads.DistUniform}
	s.Preload, s.BatchSize = 5, 10
	s.VMs, s.Threads = 2, 4
	s.Duration, s.Warmup = 20*time.Second, 2*time.Second
	return s
}

// requestsOf counts the measured requests of an operation, by outcome,
// from the record's histograms.
func requestsOf(t *testing.T, res *results.Run, op string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name := range res.Histograms {
		o, outcome, _ := strings.Cut(name, "/")
		if o != op || outcome == "per-entity" {
			continue
		}
		h, err := res.Histogram(name)
		if err != nil {
			t.Fatal(err)
		}
		out[outcome] = h.TotalCount()
	}
	return out
}

// TestMixRunsEachOperationByWeight: a mix sends each of its operations in
// the share its weight gives it, over keys that exist: no read of a
// preloaded or written row misses while nothing deletes.
func TestMixRunsEachOperationByWeight(t *testing.T) {
	mix := []workloads.MixOp{{Op: workloads.OpGet, Weight: 40}, {Op: workloads.OpInsert, Weight: 10}, {Op: workloads.OpUpsert, Weight: 10},
		{Op: workloads.OpQuery, Weight: 10}, {Op: workloads.OpUpdate, Weight: 10}, {Op: workloads.OpRange, Weight: 10}, {Op: workloads.OpScan, Weight: 5}, {Op: workloads.OpBatch, Weight: 5}}
	res := run(t, mixSpec(mix...), virtualEngine(t))
	total := 0.0
	ops := map[string]int64{}
	for _, m := range mix {
		c := requestsOf(t, res, string(m.Op))
		for _, n := range c {
			ops[string(m.Op)] += n
		}
		if c["ResourceNotFound"] > 0 {
			t.Errorf("%s: %d reads of rows that exist missed", m.Op, c["ResourceNotFound"])
		}
	}
	updates := ops["update"]
	ops["get"] -= updates // an update reads first, and its read is a get
	for _, n := range ops {
		total += float64(n)
	}
	for _, m := range mix {
		if got, want := float64(ops[string(m.Op)])/total, m.Weight/100; got < want*0.85 || got > want*1.15 {
			t.Errorf("%s: %.3f of operations, want %.3f", m.Op, got, want)
		}
	}
	if res.Totals.Entities == 0 || res.Totals.Requests != sum(ops)+updates {
		t.Fatalf("totals %+v, operations %v", res.Totals, ops)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestDeletesTakeTheOldestRows: deletes remove each key's rows oldest
// first, so that with as many rows loaded as deletes the run sends, none
// misses; reads then pick among the rows left.
func TestDeletesTakeTheOldestRows(t *testing.T) {
	s := mixSpec(workloads.MixOp{Op: workloads.OpDelete, Weight: 1})
	s.Keys.Pick = workloads.Pick{Distribution: workloads.DistSequential}
	s.Preload = 50
	res := run(t, s, virtualEngine(t))
	c := requestsOf(t, res, "delete")
	if c["ok"] == 0 || c["ResourceNotFound"] != 0 {
		t.Fatalf("deletes: %v", c)
	}
}

// TestMixRepeatsForItsSeed: a workload over shared keys, on the engine in
// virtual time, gives the same record for the same seed.
func TestMixRepeatsForItsSeed(t *testing.T) {
	s := mixSpec(workloads.MixOp{Op: workloads.OpGet, Weight: 5}, workloads.MixOp{Op: workloads.OpUpdate, Weight: 3}, workloads.MixOp{Op: workloads.OpDelete, Weight: 1}, workloads.MixOp{Op: workloads.OpInsert, Weight: 1})
	a, b := run(t, s, virtualEngine(t)), run(t, s, virtualEngine(t))
	if a.Totals.Requests != b.Totals.Requests || a.LatencyMs != b.LatencyMs || len(a.Errors) != len(b.Errors) {
		t.Fatalf("two runs of one seed differ: %+v / %+v", a.Totals, b.Totals)
	}
	for k, v := range a.Errors {
		if b.Errors[k] != v {
			t.Fatalf("errors differ: %v / %v", a.Errors, b.Errors)
		}
	}
}

// virtualEngine is the engine in virtual time: fast, and a run repeats
// for its seed.
func virtualEngine(t *testing.T, mod ...func(*engine.Config)) workloads.Target {
	return engineTarget(t, append([]func(*engine.Config){func(c *engine.Config) {
		c.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	}}, mod...)...)
}

// throttleCounter is a target that counts, by PartitionKey, the requests
// its engine answered and throttled: a test's own view of where
// throttling lands.
type throttleCounter struct {
	workloads.Target
	mu              sync.Mutex
	sent, throttled map[string]int
}

// Load loads as the engine does, unmeasured and at once.
func (c *throttleCounter) Load(ctx context.Context, table string, ents []tables.Entity) error {
	return c.Target.(workloads.Loader).Load(ctx, table, ents)
}

func (c *throttleCounter) NewSession(seed uint64) workloads.Session {
	return &countingSession{c.Target.NewSession(seed), c}
}

type countingSession struct {
	workloads.Session
	c *throttleCounter
}

func (s *countingSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	done, err := s.Session.Do(ctx, op)
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.sent[op.PartitionKey]++
	if workloads.Outcome(err) == results.OutcomeThrottled {
		s.c.throttled[op.PartitionKey]++
	}
	return done, err
}

// TestZipfianThrottlesTheHotKeysFirst: on the modern profile (2,000
// requests/s per PartitionKey) 8,000 gets/s over 10 keys stay under every
// key's limit when spread uniformly, but zipfian picks send the top key
// some 34% of them (1/H(10, 0.99)), and throttling lands there: on the
// hottest keys, none on the coldest.
func TestZipfianThrottlesTheHotKeysFirst(t *testing.T) {
	for _, dist := range []workloads.DistributionName{workloads.DistUniform, workloads.DistZipfian} {
		s := mixSpec(workloads.MixOp{Op: workloads.OpGet, Weight: 1})
		s.Keys.Count, s.Keys.Pick = 10, workloads.Pick{Distribution: dist}
		if dist == workloads.DistZipfian {
			s.Keys.Pick.Theta = 0.99
		}
		s.Preload, s.Load, s.Rate, s.VMs, s.Threads = 20, workloads.LoadOpen, 8000, 4, 25
		s.VMSize = vm.Size{Name: "big", Cores: 64}
		s.Duration, s.Warmup = 20*time.Second, 5*time.Second
		tg := &throttleCounter{Target: virtualEngine(t, func(c *engine.Config) { c.Profile = engine.Modern() }), sent: map[string]int{}, throttled: map[string]int{}}
		res := run(t, s, tg)
		keys := slices.Collect(maps.Keys(tg.sent))
		slices.SortFunc(keys, func(a, b string) int { return tg.sent[b] - tg.sent[a] })
		if len(keys) != 10 {
			t.Fatalf("%s: %d keys touched, want 10", dist, len(keys))
		}
		hot, cold := keys[0], keys[len(keys)-1]
		switch dist {
		case workloads.DistUniform:
			if res.Totals.Throttled != 0 {
				t.Errorf("uniform: %d throttled at 800/s per key", res.Totals.Throttled)
			}
		case workloads.DistZipfian:
			if share := float64(tg.sent[hot]) / float64(sum(intMap(tg.sent))); share < 0.3 {
				t.Errorf("zipfian: the top key took %.2f of the requests, want about 0.34", share)
			}
			if tg.throttled[hot] == 0 || tg.throttled[cold] != 0 || res.Totals.Throttled == 0 {
				t.Errorf("zipfian: %d throttled on the hottest key, %d on the coldest, %d in all", tg.throttled[hot], tg.throttled[cold], res.Totals.Throttled)
			}
		}
	}
}

func intMap(m map[string]int) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

// TestMissesDoNotPause: a read that misses a row another thread deleted is
// an answer: the thread goes on at once, where after an error the
// published method pauses 3 s.
func TestMissesDoNotPause(t *testing.T) {
	s := mixSpec(workloads.MixOp{Op: workloads.OpGet, Weight: 1}, workloads.MixOp{Op: workloads.OpDelete, Weight: 1})
	s.Keys.Count, s.Preload = 2, 1 // the two rows are soon gone: most gets miss
	res := run(t, s, virtualEngine(t))
	get := res.Ops["get"]
	if get.Missed < get.Requests/2 {
		t.Fatalf("%d of %d gets missed; the test needs most to", get.Missed, get.Requests)
	}
	// 8 threads over 20 s: paused 3 s after each miss they would send
	// some 60 requests in all.
	if res.Totals.Requests < 1000 {
		t.Fatalf("%d requests: threads paused after their misses", res.Totals.Requests)
	}
}
