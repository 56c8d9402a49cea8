package engine_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

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
		var ops []tables.BatchOp
		for i := range 3000 {
			ops = append(ops, tables.BatchOp{Kind: tables.BatchUpsertReplace, Entity: ent("p", fmt.Sprintf("r%05d", i))})
			if len(ops) == 100 {
				if _, err := e.Client(nil).Batch(ctx, "scan", ops); err != nil {
					t.Fatal(err)
				}
				ops = nil
				time.Sleep(time.Second) // stay within the key's budget
			}
		}
		time.Sleep(5 * time.Second)
		call := &engine.Call{}
		cl := e.Client(call)
		p, err := cl.QueryEntities(ctx, "scan", tables.Query{Filter: "PartitionKey eq 'p' and RowKey ge 'r00000'"})
		if err != nil || len(p.Entities) != 1000 || p.Scanned != 1000 {
			t.Fatalf("first page: %d entities, %d scanned, %v", len(p.Entities), p.Scanned, err)
		}
		if call.Timing.Units != 1000 {
			t.Fatalf("the page was charged %v units, want 1,000", call.Timing.Units)
		}
		q := tables.Query{Filter: "N eq 1", Continuation: p.Continuation} // matches nothing, scans the rest
		p, err = cl.QueryEntities(ctx, "scan", q)
		if err != nil || p.Scanned != 2000 || len(p.Entities) != 0 || p.Continuation != nil {
			t.Fatalf("second page scanned %d, returned %d, continuation %v, %v; want the last 2,000 scanned", p.Scanned, len(p.Entities), p.Continuation, err)
		}
		if call.Timing.Units != 2000 {
			t.Fatalf("the second page was charged %v units, want 2,000", call.Timing.Units)
		}
		_, err = e.Client(nil).Insert(ctx, "scan", ent("p", "more"))
		wantCode(t, err, 503, tables.CodeServerBusy)
	})
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
				var ops []tables.BatchOp
				for i := range 100 {
					ops = append(ops, tables.BatchOp{Entity: ent(fmt.Sprintf("k%02d", g), fmt.Sprint(i))})
				}
				_, err := e.Client(call).Batch(ctx, "slow", ops)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					served = append(served, call.Timing)
				case tables.IsCode(err, tables.CodeOperationTimedOut):
					timedOut = append(timedOut, call.Timing)
					lost = append(lost, fmt.Sprintf("k%02d", g))
				default:
					t.Errorf("batch %d: %v, want success or %s", g, err, tables.CodeOperationTimedOut)
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
			if _, err := e.Client(nil).Get(ctx, "slow", pk, "0", nil); !tables.IsCode(err, tables.CodeResourceNotFound) {
				t.Fatalf("entity of a timed-out batch: %v, want %s", err, tables.CodeResourceNotFound)
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
		// Saturated through the harness: workloads' TestModernProfileSaturates.
	})
}

// TestCallerFindsKeyRowsAgain: a caller that wrote a key's rows before
// they were all deleted, by another caller, writes to the key's rows as the
// partition holds them now: what it writes next can be read.
func TestCallerFindsKeyRowsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRaw(t, func(c *engine.Config) { c.Profile = engine.Modern() })
		c := e.Client(&engine.Call{})
		if _, err := c.Insert(ctx, "people", ent("p", "r1")); err != nil {
			t.Fatal(err)
		}
		if err := e.Client(nil).Delete(ctx, "people", "p", "r1", "*"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Insert(ctx, "people", ent("p", "r2")); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Client(nil).Get(ctx, "people", "p", "r2", nil); err != nil {
			t.Errorf("the entity the caller wrote after its key's rows were emptied: %v", err)
		}
	})
}
