//go:build calibration

// The model's long runs (minutes of load and the balancer's decisions, in
// virtual time) run with the calibration tests, in the pass of `make test`
// without the race detector: go test -tags calibration -run 'Calibration|Model' ./workloads/

package workloads_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// The engine's model checked through the real harness: the coordinator,
// the client VM model and the recorder drive the wa2010 engine in virtual
// time, as the figure suite does.

// modelSpec is the case study's method against the wa2010 engine: XL VMs,
// seed 7, 300 s measured after 30 s of warm-up.
func modelSpec(op workloads.OpKind, partition workloads.PartitionScheme, vms, threads int) workloads.Spec {
	s := workloads.DefaultSpec()
	s.Op, s.Partition, s.VMs, s.Threads, s.VMSize = op, partition, vms, threads, vm.XL
	s.Seed, s.Warmup, s.Duration = 7, 30*time.Second, 300*time.Second
	s.Table, s.KeepTable = "bench", true // kept, so its partitions can be read after
	return s
}

// runModel runs spec on a wa2010 engine in virtual time (or as mod sets)
// and returns the run and the engine.
func runModel(t *testing.T, spec workloads.Spec, mod ...func(*engine.Config)) (*results.Run, *engine.Engine) {
	t.Helper()
	wa2010 := func(c *engine.Config) {
		c.Profile, c.Seed = engine.WA2010(), spec.Seed
		c.PreSplit = c.Profile.SteadySplit()
		c.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	}
	tg := engineTarget(t, append([]func(*engine.Config){wa2010}, mod...)...)
	return run(t, spec, tg), tg.Engine()
}

// cold starts the table in one range partition under the accelerated
// balancer (hot from the 15 s tick, decides in 15-30 s), measured from the
// start.
func cold(spec *workloads.Spec, d time.Duration) func(*engine.Config) {
	spec.Warmup, spec.Duration = 0, d
	return func(c *engine.Config) {
		c.PreSplit = 0
		c.Balancer = engine.AcceleratedBalancerConfig()
	}
}

func splits(events []engine.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == engine.EventSplit {
			n++
		}
	}
	return n
}

// TestModelDeterministic: a fixed seed gives the same run twice.
func TestModelDeterministic(t *testing.T) {
	spec := modelSpec(workloads.OpBatch, workloads.PartitionShared, 3, 10)
	spec.Duration = 60 * time.Second
	a, _ := runModel(t, spec)
	b, _ := runModel(t, spec)
	if a.Totals.Entities != b.Totals.Entities || a.Totals.Throttled != b.Totals.Throttled || a.LatencyMs != b.LatencyMs {
		t.Fatalf("two runs of one seed differ: %+v and %+v", a.Totals, b.Totals)
	}
}

// TestModelBalancerSplitsHotRange: a cold table under load from many keys is one
// hot range partition; the balancer splits it once it has stayed hot for
// its decision delay, and not before, and moves a child away.
func TestModelBalancerSplitsHotRange(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionGUID, 10, 15)
	res, e := runModel(t, spec, cold(&spec, 180*time.Second))
	events := e.Events()
	var first time.Duration = -1
	moved := false
	for _, ev := range events {
		t.Logf("%v %s [%q,%q) at %q server %d->%d", ev.Time.Sub(res.Start), ev.Kind, ev.Lo, ev.Hi, ev.At, ev.From, ev.To)
		if ev.Kind == engine.EventSplit && first < 0 {
			first = ev.Time.Sub(res.Start)
		}
		moved = moved || ev.Kind == engine.EventMove && ev.From != ev.To
	}
	if first < 0 {
		t.Fatal("no split in 180 s of a hot range")
	}
	if first < 30*time.Second {
		t.Fatalf("first split after %v, before the partition could have been hot for 15 s", first)
	}
	if parts, _ := e.Partitions("bench"); len(parts) < 2 {
		t.Fatalf("table still has %d range partition", len(parts))
	}
	if !moved {
		t.Fatal("no split child was moved to another server")
	}
	if res.Totals.Throttled+res.Totals.TimedOut == 0 {
		t.Fatal("no request was refused while partitions split and moved")
	}
	// The record says where: the balancer's actions by key range, the
	// range partitions at the end, and the load by PartitionKey.
	var split *results.Event
	for i, ev := range res.Events {
		if ev.Kind == string(engine.EventSplit) {
			split = &res.Events[i]
			break
		}
	}
	if split == nil || len(split.At) == 0 || split.Second != first.Seconds() {
		t.Errorf("the record's first split %+v does not say where in the key space, or when (%v)", split, first)
	}
	parts, _ := e.Partitions("bench")
	if len(res.RangePartitions) != len(parts) || res.RangePartitions[1].Lo != parts[1].Lo || res.RangePartitions[1].Server != parts[1].Server {
		t.Errorf("the record's range partitions %+v, the engine's %+v", res.RangePartitions, parts)
	}
	if p := res.Partitions; p == nil || p.Distinct != 150 || !p.DistinctExact || len(p.Top) != results.TopKeys {
		t.Errorf("150 threads' keys: partitions %+v", p)
	}
	// 90 columns of 2 s, and one for the requests in flight at the end.
	if h := res.Heatmap; h == nil || len(h.Rows) != results.HeatmapRows || h.ColumnSec != 2 || h.Columns != 91 {
		t.Errorf("heat map of 150 keys over 180 s: %d rows, %d columns of %d s; want %d rows, 91 of 2 s", len(h.Rows), h.Columns, h.ColumnSec, results.HeatmapRows)
	}
	if err := res.Check(); err != nil {
		t.Error(err)
	}
}

// TestModelBalancerNeverSplitsOneKey: a saturated single PartitionKey can at
// most be isolated in a range partition of its own; its throughput stays
// bounded by one lane.
func TestModelBalancerNeverSplitsOneKey(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionShared, 10, 15)
	res, e := runModel(t, spec, cold(&spec, 180*time.Second))
	if n := splits(e.Events()); n > 1 {
		t.Fatalf("%d splits of a one-key load; events %v", n, e.Events())
	}
	near(t, "entities/s", res.EntitiesPerSec, 1000, 0.15)
}

// TestModelAppendOnlyStaysHot: time-ordered keys always land in the last range
// partition, so splitting never spreads them.
func TestModelAppendOnlyStaysHot(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionAppend, 10, 15)
	res, e := runModel(t, spec, cold(&spec, 240*time.Second))
	n := splits(e.Events())
	if n == 0 {
		t.Fatal("the hot append-only range was never split")
	}
	snaps := e.Snapshots()
	last := snaps[len(snaps)-1]
	var total, tail float64
	for _, p := range last.Partitions {
		total += p.Units
		if p.Hi == "" {
			tail = p.Units
		}
	}
	t.Logf("%d splits; last window: tail %.0f of %.0f units; %.0f entities/s", n, tail, total, res.EntitiesPerSec)
	if tail < 0.95*total {
		t.Fatalf("after %d splits the last range partition took %.0f of %.0f units; append-only load should stay there", n, tail, total)
	}
	if res.EntitiesPerSec > 1150 {
		t.Fatalf("append-only load reached %.0f entities/s, more than one partition serves", res.EntitiesPerSec)
	}
}

// TestModelTimeScale: a run compressed 10x in wall time agrees with the same run
// at scale 1, and with the run in virtual time, on throughput and median
// latency.
func TestModelTimeScale(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionShared, 5, 15)
	spec.Duration = 60 * time.Second
	virtual, _ := runModel(t, spec)
	var real, fast *results.Run
	wall := func(scale float64) func(*engine.Config) {
		return func(c *engine.Config) { c.Clock, c.TimeScale = nil, scale }
	}
	synctest.Test(t, func(t *testing.T) { real, _ = runModel(t, spec, wall(1)) })
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fast, _ = runModel(t, spec, wall(10))
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("a 90 s experiment at scale 10 took %v of (fake) wall time", d)
		}
	})
	for _, r := range []*results.Run{real, fast} {
		near(t, "throughput", r.EntitiesPerSec, virtual.EntitiesPerSec, 0.05)
		near(t, "median latency", r.SuccessLatencyMs.P50, virtual.SuccessLatencyMs.P50, 0.05)
	}
}

// TestModelModernProfileSaturates: under today's targets one PartitionKey serves
// ~2,000 single inserts/s.
func TestModelModernProfileSaturates(t *testing.T) {
	spec := modelSpec(workloads.OpInsert, workloads.PartitionShared, 10, 30) // past the 2010 client's ~290/s per XL VM
	spec.Duration = 30 * time.Second
	res, _ := runModel(t, spec, func(c *engine.Config) {
		c.Profile = engine.Modern()
		c.PreSplit = c.Profile.SteadySplit()
	})
	near(t, "saturated single-key inserts/s", res.EntitiesPerSec, 2000, 0.15)
}
