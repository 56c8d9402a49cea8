package engine_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
)

// cosmosEngine starts an engine under the cosmos profile, changed by edit,
// with one table "t" split as after a warm-up. Call it in a synctest bubble.
func cosmosEngine(t *testing.T, edit func(*engine.Profile)) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.Cosmos()
	if edit != nil {
		edit(&cfg.Profile)
	}
	cfg.PreSplit = cfg.Profile.SteadySplit()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateTable(ctx, "cos"); err != nil {
		t.Fatal(err)
	}
	return e
}

// kb1 is an entity of exactly 1 KiB by the service's size formula.
func kb1(pk, rk string) tables.Entity {
	fixed := 4 + 2*(len(pk)+len(rk)) + 8 + 2*len("Data") + 4
	return ent(pk, rk, tables.String("Data", strings.Repeat("x", (1024-fixed)/2)))
}

// hammer inserts 1 KiB entities with n goroutines for d, each to the key
// keyOf(goroutine, i), and returns the inserts done and the 429s and their
// retry-afters.
func hammer(t *testing.T, e *engine.Engine, n int, d time.Duration, keyOf func(g, i int) string) (ok, throttled int, retryAfter []time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for g := range n {
		wg.Go(func() {
			for i := 0; time.Now().Before(end); i++ {
				_, err := e.Client(nil).Insert(ctx, "cos", kb1(keyOf(g, i), fmt.Sprintf("r%d-%d", g, i)))
				mu.Lock()
				if err == nil {
					ok++
				} else if te, is := tables.AsError(err); is && te.Status == 429 && te.Code == tables.CodeRequestRateTooLarge {
					throttled++
					retryAfter = append(retryAfter, te.RetryAfter)
				} else {
					mu.Unlock()
					t.Errorf("insert: %v", err)
					return
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ok, throttled, retryAfter
}

// TestCosmosHotKeyIsThrottledAtItsPartitionsShare: 20,000 RU/s make two
// physical partitions of 10,000 RU/s; one PartitionKey gets its
// partition's 10,000 (2,000 writes of 1 KB a second) and 429s beyond it,
// while the other partition's half of the table goes unused.
func TestCosmosHotKeyIsThrottledAtItsPartitionsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, func(p *engine.Profile) { p.RU = 20000 })
		ok, throttled, ra := hammer(t, e, 50, 10*time.Second, func(g, i int) string { return "hot" })
		rate := float64(ok) / 10
		if rate < 1900 || rate > 2150 {
			t.Errorf("the hot key served %.0f writes/s, want its partition's 10,000 RU/s = 2,000", rate)
		}
		if throttled == 0 {
			t.Fatal("no 429 for a key over its partition's share")
		}
		for _, d := range ra {
			if d <= 0 || d > time.Second {
				t.Fatalf("x-ms-retry-after-ms %v: want up to the next second", d)
			}
		}
		tp, err := e.Throughput("cos")
		if err != nil || tp.Partitions != 2 || tp.PerPartition != 10000 {
			t.Fatalf("throughput %+v, %v: want 2 partitions of 10,000 RU/s", tp, err)
		}
	})
}

// TestCosmosManyKeysReachTheProvisionedThroughput: the same load spread
// over many keys reaches the table's 20,000 RU/s, 4,000 writes of 1 KB a
// second.
func TestCosmosManyKeysReachTheProvisionedThroughput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, func(p *engine.Profile) { p.RU = 20000 })
		ok, _, _ := hammer(t, e, 50, 10*time.Second, func(g, i int) string { return fmt.Sprintf("k%04d", (g*7919+i)%1000) })
		if rate := float64(ok) / 10; rate < 3800 || rate > 4200 {
			t.Errorf("1,000 keys served %.0f writes/s, want the table's 20,000 RU/s = 4,000", rate)
		}
	})
}

// TestCosmosRetryAfterSaysWhenTheBudgetIsBack: a request sent when the
// retry-after says is admitted.
func TestCosmosRetryAfterSaysWhenTheBudgetIsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, func(p *engine.Profile) { p.RU = 400 })
		var err error
		for i := 0; err == nil; i++ {
			_, err = e.Client(nil).Insert(ctx, "cos", kb1("k", fmt.Sprint(i)))
		}
		te := wantCode(t, err, 429, tables.CodeRequestRateTooLarge)
		if te.RetryAfter <= 0 || te.RetryAfter > time.Second {
			t.Fatalf("retry after %v: want within the second", te.RetryAfter)
		}
		time.Sleep(te.RetryAfter)
		if _, err := e.Client(nil).Insert(ctx, "cos", kb1("k", "after")); err != nil {
			t.Fatalf("insert at the retry-after: %v", err)
		}
	})
}

// TestCosmosCharges: a 1 KB point read costs 1 RU and a write 5 RU; a
// 100 KB read 10 RU; a batch the sum of its writes; a query what it read.
func TestCosmosCharges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, nil)
		call := &engine.Call{}
		cl := e.Client(call)
		charge := func(what string, want float64, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if math.Abs(call.Timing.Charge-want) > 0.05 {
				t.Errorf("%s charged %.2f RU, want %.2f", what, call.Timing.Charge, want)
			}
		}
		_, err := cl.Insert(ctx, "cos", kb1("p", "r"))
		charge("a 1 KB insert", 5, err)
		_, err = cl.Get(ctx, "cos", "p", "r", nil)
		charge("a 1 KB point read", 1, err)
		big := ent("p", "big", tables.Binary("B", make([]byte, 51180)), tables.Binary("C", make([]byte, 51180))) // 100 KiB
		_, err = cl.Insert(ctx, "cos", big)
		charge("a 100 KB insert", 50, err)
		_, err = cl.Get(ctx, "cos", "p", "big", nil)
		charge("a 100 KB point read", 10, err)
		var ops []tables.BatchOp
		for i := range 10 {
			ops = append(ops, tables.BatchOp{Kind: tables.BatchInsert, Entity: kb1("b", fmt.Sprint(i))})
		}
		_, err = cl.Batch(ctx, "cos", ops)
		charge("a batch of 10 1 KB inserts", 50, err)
		_, err = cl.QueryEntities(ctx, "cos", tables.Query{Filter: "PartitionKey eq 'b'"})
		charge("a query reading 10 entities", 10, err)
		_, err = cl.Get(ctx, "cos", "p", "none", nil)
		wantCode(t, err, 404, tables.CodeResourceNotFound)
		if call.Timing.Charge != 1 {
			t.Errorf("a read of a missing entity charged %v RU, want 1", call.Timing.Charge)
		}
	})
}

// TestCosmosTableAPIDifferences: a RowKey up to 255 bytes, a batch up to
// 2 MB, and query pages not in key order that still cover the range once.
func TestCosmosTableAPIDifferences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, nil)
		cl := e.Client(nil)
		if _, err := cl.Insert(ctx, "cos", ent("p", strings.Repeat("r", 255))); err != nil {
			t.Fatalf("a 255-byte RowKey: %v", err)
		}
		_, err := cl.Insert(ctx, "cos", ent("p", strings.Repeat("r", 256)))
		wantCode(t, err, 400, tables.CodeOutOfRangeInput)
		_, err = cl.Batch(ctx, "cos", []tables.BatchOp{{Kind: tables.BatchInsert, Entity: ent("q", strings.Repeat("r", 256))}})
		wantCode(t, err, 400, tables.CodeOutOfRangeInput)
		var ops []tables.BatchOp
		for i := range 3 {
			ops = append(ops, tables.BatchOp{Kind: tables.BatchInsert, Entity: ent("b", fmt.Sprint(i), tables.Binary("B", make([]byte, 60*1024)), tables.Binary("C", make([]byte, 60*1024)), tables.Binary("D", make([]byte, 60*1024)), tables.Binary("E", make([]byte, 60*1024)), tables.Binary("F", make([]byte, 60*1024)), tables.Binary("G", make([]byte, 60*1024)), tables.Binary("H", make([]byte, 60*1024)), tables.Binary("I", make([]byte, 60*1024)), tables.Binary("J", make([]byte, 60*1024)), tables.Binary("K", make([]byte, 60*1024)), tables.Binary("L", make([]byte, 60*1024)), tables.Binary("M", make([]byte, 60*1024)))})
		}
		_, err = cl.Batch(ctx, "cos", ops) // 3 × 720 KiB: under 4 MiB, over 2 MB
		wantCode(t, err, 413, tables.CodeRequestBodyTooLarge)

		for i := range 300 {
			if _, err := cl.Insert(ctx, "cos", ent("s", fmt.Sprintf("r%04d", i))); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		sorted := true
		q := tables.Query{Filter: "PartitionKey eq 's'", Top: 100}
		for {
			p, err := cl.QueryEntities(ctx, "cos", q)
			if err != nil {
				t.Fatal(err)
			}
			var page []string
			for _, en := range p.Entities {
				page = append(page, en.RowKey)
			}
			sorted = sorted && slices.IsSorted(page)
			got = append(got, page...)
			if p.Continuation == nil {
				break
			}
			q.Continuation = p.Continuation
		}
		if sorted {
			t.Error("every page came in RowKey order: the Table API does not sort results")
		}
		slices.Sort(got)
		if len(got) != 300 || len(slices.Compact(got)) != 300 {
			t.Errorf("the pages held %d entities, %d distinct; want the 300 once each", len(got), len(slices.Compact(got)))
		}
	})
}

// TestCosmosLatencyMeetsTheSLA: unloaded, point reads answer under 10 ms
// and writes under 15 ms at the 99th percentile.
func TestCosmosLatencyMeetsTheSLA(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, nil)
		reads, writes := results.NewHistogram(), results.NewHistogram()
		call := &engine.Call{}
		cl := e.Client(call)
		for i := range 5000 {
			if _, err := cl.Insert(ctx, "cos", kb1(fmt.Sprintf("k%d", i%500), fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			writes.RecordValue(call.Timing.Done.Sub(call.Timing.Arrival).Microseconds())
			if _, err := cl.Get(ctx, "cos", fmt.Sprintf("k%d", i%500), fmt.Sprint(i), nil); err != nil {
				t.Fatal(err)
			}
			reads.RecordValue(call.Timing.Done.Sub(call.Timing.Arrival).Microseconds())
		}
		r99, w99 := float64(reads.ValueAtQuantile(99))/1000, float64(writes.ValueAtQuantile(99))/1000
		if r99 >= 10 || w99 >= 15 {
			t.Errorf("p99 read %.1f ms, write %.1f ms: want under 10 and 15", r99, w99)
		}
		if r99 < 3 || w99 < 4 {
			t.Errorf("p99 read %.1f ms, write %.1f ms: implausibly fast for a replicated service", r99, w99)
		}
	})
}

// TestCosmosStorageSplitsTakeTheirTime: a physical partition grown past
// its bytes splits once the split time has passed, and the throughput is
// then shared by one more partition; a PartitionKey past its bytes gets
// 403.
func TestCosmosStorageSplitsTakeTheirTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, func(p *engine.Profile) {
			p.RU, p.PartitionBytes, p.LogicalPartitionBytes = 10000, 200<<10, 150<<10
			p.SplitMin, p.SplitMax = time.Hour, time.Hour
		})
		cl := e.Client(nil)
		for i := range 260 {
			if _, err := cl.Insert(ctx, "cos", kb1(fmt.Sprintf("k%d", i%2), fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		tp, _ := e.Throughput("cos")
		if tp.Partitions != 1 || tp.Splitting != 1 {
			t.Fatalf("after 260 KiB in a 200 KiB partition: %+v, want one partition splitting", tp)
		}
		time.Sleep(time.Hour)
		tp, _ = e.Throughput("cos")
		if tp.Partitions != 2 || tp.Splitting != 0 || tp.PerPartition != 5000 {
			t.Fatalf("an hour later: %+v, want 2 partitions of 5,000 RU/s", tp)
		}
		for i := range 30 {
			_, err := cl.Insert(ctx, "cos", kb1("k0", fmt.Sprint("more", i)))
			if err != nil {
				wantCode(t, err, 403, tables.CodePartitionKeyQuotaExceeded)
				return
			}
		}
		t.Fatal("a PartitionKey grew past 150 KiB without a 403")
	})
}

// TestCosmosAutoscale: autoscale serves up to its maximum at once, and
// scales between 10% and 100% of it with the busiest partition's load.
func TestCosmosAutoscale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := cosmosEngine(t, func(p *engine.Profile) { p.RU, p.RUMax = 0, 20000 })
		time.Sleep(3 * time.Second)
		tp, _ := e.Throughput("cos")
		if tp.Partitions != 2 || tp.Scaled != 2000 {
			t.Fatalf("idle: %+v, want 2 partitions scaled to 2,000 RU/s", tp)
		}
		ok, _, _ := hammer(t, e, 50, 5*time.Second, func(g, i int) string { return "hot" })
		if rate := float64(ok) / 5; rate < 1900 || rate > 2200 {
			t.Errorf("the hot key served %.0f writes/s, want its partition's 10,000 RU/s at once", rate)
		}
		tp, _ = e.Throughput("cos")
		if tp.Scaled != 20000 {
			t.Errorf("under a hot partition's full load: scaled to %v, want the maximum 20,000", tp.Scaled)
		}
	})
}

// TestCosmosProfileChecksItsThroughput: throughput out of the documented
// range is refused with a line saying the range.
func TestCosmosProfileChecksItsThroughput(t *testing.T) {
	for _, edit := range []func(*engine.Profile){
		func(p *engine.Profile) { p.RU = 100 },
		func(p *engine.Profile) { p.RU = 2e6 },
		func(p *engine.Profile) { p.RU, p.RUMax = 0, 500 },
	} {
		cfg := engine.DefaultConfig()
		cfg.Profile = engine.Cosmos()
		edit(&cfg.Profile)
		if _, err := engine.New(cfg); err == nil || !strings.Contains(err.Error(), "out of range: use") {
			t.Errorf("profile %+v: %v, want out of range", cfg.Profile.RU, err)
		}
	}
}
