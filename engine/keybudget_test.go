package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
)

// TestKeyBudgetBesideRows checks that the budget a key's rows keep beside
// them is the partition's own for the key: found by a caller new to the
// key, cleared when the balancer forgets a budget that is full again, and
// the new one after.
func TestKeyBudgetBesideRows(t *testing.T) {
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	e := newModelled(t, start, "budget", nil)
	ctx := context.Background()
	insert := func(rk string) {
		t.Helper()
		ent := tables.Entity{PartitionKey: "p", RowKey: rk}
		if _, err := e.Client(&Call{Detach: true}).Insert(ctx, "budget", ent); err != nil {
			t.Fatal(err)
		}
	}
	tb, _ := e.table("budget")
	rp := tb.locate("p")
	kept := func() (*bucket, *bucket) {
		rp.mu.Lock()
		defer rp.mu.Unlock()
		return rp.data.rows("p").budget, rp.buckets["p"]
	}
	insert("r1")
	insert("r2") // a caller new to the key finds its rows, and keeps its budget there
	first, inMap := kept()
	if first == nil || first != inMap {
		t.Fatalf("the rows keep budget %p, the partition %p", first, inMap)
	}
	newBalancer(e, e.cfg.Balancer).tick(start.Add(time.Hour)) // full again: forgotten
	if b, inMap := kept(); b != nil || inMap != nil {
		t.Fatalf("a forgotten budget is kept: %p beside the rows, %p in the partition", b, inMap)
	}
	insert("r3")
	insert("r4")
	if b, inMap := kept(); b == nil || b != inMap || b == first {
		t.Fatalf("after the budget was forgotten the rows keep %p, the partition %p (the first was %p)", b, inMap, first)
	}
}

// newModelled returns an engine of the modern profile on a virtual clock
// from start, without its load balancer, holding the empty table, after
// mod (if any) changed its configuration.
func newModelled(t *testing.T, start time.Time, table string, mod func(*Config)) *Engine {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Profile, cfg.Clock = Modern(), clock.NewVirtual(start)
	cfg.Balancer.Enabled = false
	if mod != nil {
		mod(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateTable(context.Background(), table); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestHintsFollowARepeatedKey checks what a caller's Hints point its
// next request at: its key's state once its requests repeat the key, and
// nothing after a request to another key, whose state a caller with a new
// key each time would prefetch for nothing.
func TestHintsFollowARepeatedKey(t *testing.T) {
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	e := newModelled(t, start, "hints", nil)
	ctx := context.Background()
	call := &Call{Detach: true}
	n := 0
	insert := func(pk string) int {
		t.Helper()
		n++
		ent := tables.Entity{PartitionKey: pk, RowKey: fmt.Sprint(n)}
		if _, err := e.Client(call).Insert(ctx, "hints", ent); err != nil {
			t.Fatal(err)
		}
		n := len(call.Hints(nil))
		if again := len(call.Hints(nil)); again != n {
			t.Errorf("request to %q: %d hints, then %d when asked again", pk, n, again)
		}
		return n
	}
	for i, step := range []struct {
		pk   string
		some bool
	}{
		{"a", false}, // a caller's first key: new
		{"a", true},
		{"a", true},
		{"b", false},
		{"c", false},
		{"c", true},
	} {
		if got := insert(step.pk); (got > 0) != step.some {
			t.Errorf("request %d, to %q: %d hints; want some: %v", i+1, step.pk, got, step.some)
		}
	}
}
