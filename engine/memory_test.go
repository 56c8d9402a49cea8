package engine_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// liveHeap returns the bytes the heap holds after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestEmptyTableCost: an empty table costs a few hundred bytes whatever
// its pre-split, since its range partitions are made when first used;
// made at once, the case study's 64 cost about 50 KB a table.
func TestEmptyTableCost(t *testing.T) {
	cases := []struct {
		name     string
		presplit int
		read     bool  // every table is read through, page by page, and a missing entity asked for
		max      int64 // bytes a table may cost
	}{
		{"cold", 0, false, 1 << 10},
		{"pre-split like the case study", engine.WA2010().SteadySplit(), false, 2 << 10},
		{"pre-split like the case study, read", engine.WA2010().SteadySplit(), true, 2 << 10},
		{"pre-split into 1024", 1024, false, 12 << 10}, // its map's slots: 8 bytes each
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.DefaultConfig()
			cfg.Profile, cfg.PreSplit = engine.None(), tc.presplit
			e, err := engine.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			const n = 1000
			before := liveHeap()
			for i := range n {
				name := fmt.Sprintf("empty%d", i)
				wantCode(t, e.CreateTable(ctx, name), 0, "")
				if !tc.read {
					continue
				}
				_, err := e.Client(nil).Get(ctx, name, "a1", "r", nil)
				wantCode(t, err, 404, tables.CodeResourceNotFound)
				q, pages := tables.Query{}, 0
				for ; ; pages++ {
					p, err := e.Client(nil).QueryEntities(ctx, name, q)
					if err != nil || len(p.Entities) != 0 {
						t.Fatalf("a query of an empty table: %v, %v", p, err)
					}
					if q.Continuation = p.Continuation; q.Continuation == nil {
						break
					}
				}
				if pages != tc.presplit-1 {
					t.Fatalf("an empty table read in %d pages, want one a range partition", pages+1)
				}
			}
			per := (liveHeap() - before) / n
			t.Logf("an empty table pre-split into %d costs %d B", tc.presplit, per)
			if per > tc.max {
				t.Fatalf("an empty table pre-split into %d costs %d B, want at most %d", tc.presplit, per, tc.max)
			}
			if e.TableNames()[0] != "empty0" {
				t.Fatal("the tables are gone")
			}
		})
	}
}

// TestDeletedTablesLeaveNothing: making, using and deleting many tables
// leaves the heap where it was, once their names' grace period is over,
// under each profile (the model keeps state per range partition and per
// key). The balancer is off: its snapshots keep the history of the load by
// design (TestSnapshotsListBusyPartitions bounds them).
func TestDeletedTablesLeaveNothing(t *testing.T) {
	for _, p := range []engine.Profile{engine.None(), engine.WA2010()} {
		t.Run(p.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engine.DefaultConfig() // a 40 s grace for deleted names
				cfg.Profile, cfg.PreSplit = p, p.SteadySplit()
				cfg.Balancer.Enabled = false
				e, err := engine.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				// Once through first, for what the runtime and the engine make
				// once.
				use := func(n int) {
					for i := range n {
						name := fmt.Sprintf("used%d", i)
						wantCode(t, e.CreateTable(ctx, name), 0, "")
						for j := range 2 { // in two range partitions each
							pk := fmt.Sprintf("%x-%d", (i*2+j)*0x9e3779b1%0xffff, i)
							if _, err := e.Client(nil).Insert(ctx, name, tables.Entity{PartitionKey: pk, RowKey: "r", Properties: []tables.Property{tables.String("V", "x")}}); err != nil {
								t.Fatal(err)
							}
							if _, err := e.Client(nil).Get(ctx, name, pk, "r", nil); err != nil {
								t.Fatal(err)
							}
						}
					}
					for i := range n {
						wantCode(t, e.DeleteTable(ctx, fmt.Sprintf("used%d", i)), 0, "")
					}
					time.Sleep(cfg.TableDeleteGrace + time.Second)
					wantCode(t, e.CreateTable(ctx, "after"), 0, "") // the engine forgets the names on its next change
					wantCode(t, e.DeleteTable(ctx, "after"), 0, "")
					time.Sleep(cfg.TableDeleteGrace + time.Second)
				}
				use(10)
				before := liveHeap()
				const n = 3000
				use(n)
				grown := liveHeap() - before
				t.Logf("%d tables made, used and deleted: the heap grew by %d B", n, grown)
				if grown > 64<<10 {
					t.Fatalf("%d tables made, used and deleted left %d B on the heap (%d B a table)", n, grown, grown/n)
				}
			})
		})
	}
}

// TestSnapshotsListBusyPartitions: a balancer snapshot lists the range
// partitions that served requests in its window, not every partition of
// every table: the balancer keeps 4,096 of them.
func TestSnapshotsListBusyPartitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig()
		cfg.PreSplit = cfg.Profile.SteadySplit()
		e, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for i := range 20 { // used once, then idle
			name := fmt.Sprintf("idle%d", i)
			wantCode(t, e.CreateTable(ctx, name), 0, "")
			if _, err := e.Client(nil).Insert(ctx, name, ent(fmt.Sprintf("%02x", i*12), "r")); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(cfg.Balancer.Interval)
		wantCode(t, e.CreateTable(ctx, "busy"), 0, "")
		for _, pk := range []string{"09", "0a", "f0"} { // two range partitions
			if _, err := e.Client(nil).Insert(ctx, "busy", ent(pk, "r")); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(cfg.Balancer.Interval)
		snaps := e.Snapshots()
		if len(snaps) != 2 {
			t.Fatalf("%d snapshots after two intervals", len(snaps))
		}
		if n := len(snaps[0].Partitions); n != 20 {
			t.Fatalf("the first snapshot lists %d partitions, want the 20 used", n)
		}
		var got []string
		for _, p := range snaps[1].Partitions {
			got = append(got, fmt.Sprintf("%s [%s, %s) %d requests", p.Table, p.Lo, p.Hi, p.Requests))
		}
		want := []string{"busy [08, 0c) 2 requests", "busy [f0, f4) 1 requests"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the second snapshot lists %q, want %q", got, want)
		}
		if len(snaps[1].Servers) != cfg.Profile.Servers {
			t.Fatalf("the snapshot has %d servers, want %d", len(snaps[1].Servers), cfg.Profile.Servers)
		}
	})
}

// TestDeletedNamesKeepTheirGrace: forgetting the names of deleted tables
// forgets only those whose grace period is over, however many there are.
func TestDeletedNamesKeepTheirGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRaw(t) // the default 40 s grace
		for round := range 3 {
			for i := range 100 {
				name := fmt.Sprintf("r%dt%d", round, i)
				wantCode(t, e.CreateTable(ctx, name), 0, "")
				wantCode(t, e.DeleteTable(ctx, name), 0, "")
			}
			time.Sleep(15 * time.Second)
		}
		// Rounds 0 and 1 were deleted 45 s and 30 s ago, round 2 15 s ago.
		wantCode(t, e.CreateTable(ctx, "r0t7"), 0, "")
		wantCode(t, e.CreateTable(ctx, "r1t7"), 409, tables.CodeTableBeingDeleted)
		wantCode(t, e.CreateTable(ctx, "r2t99"), 409, tables.CodeTableBeingDeleted)
		time.Sleep(26 * time.Second)
		wantCode(t, e.CreateTable(ctx, "r2t99"), 0, "")
	})
}

// TestPartitionsMadeLateAreTheSame: a pre-split table's range partition
// made by its first request has the range, server and random draws it
// would have had if it had been made with the table: the same requests get
// the same modelled times whatever order the partitions are first used in.
func TestPartitionsMadeLateAreTheSame(t *testing.T) {
	const pks = 64
	run := func(order []int) (parts []engine.PartitionLoad, timings map[int]engine.Timing) {
		synctest.Test(t, func(t *testing.T) {
			cfg := engine.DefaultConfig()
			cfg.PreSplit = cfg.Profile.SteadySplit()
			cfg.Balancer.Enabled = false
			e, err := engine.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			wantCode(t, e.CreateTable(ctx, "other"), 0, "") // so that servers and ids do not start at zero
			wantCode(t, e.CreateTable(ctx, "late"), 0, "")
			if parts, err = e.Partitions("late"); err != nil {
				t.Fatal(err)
			}
			timings = map[int]engine.Timing{}
			for _, i := range order {
				c := &engine.Call{}
				if _, err := e.Client(c).Insert(ctx, "late", ent(fmt.Sprintf("%02x", i*256/pks), "r")); err != nil {
					t.Fatal(err)
				}
				timings[i] = c.Timing
				time.Sleep(time.Second) // each alone on its server
			}
			after, err := e.Partitions("late")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(after) != fmt.Sprint(parts) {
				t.Fatalf("made, the partitions are\n%v\nwhere they were\n%v", after, parts)
			}
		})
		return parts, timings
	}
	var up, down []int
	for i := range pks {
		up, down = append(up, i), append(down, pks-1-i)
	}
	parts, first := run(up)
	if len(parts) != pks || parts[1].Lo != "04" || parts[1].Server == parts[0].Server {
		t.Fatalf("a new table's partitions: %v", parts)
	}
	_, second := run(down)
	for i := range pks {
		a, b := first[i], second[i]
		if a.Lane <= 0 || a.FrontEnd != b.FrontEnd || a.Lane != b.Lane || a.Post != b.Post {
			t.Fatalf("partition %d, first used first: %+v; first used last: %+v", i, a, b)
		}
	}
}

// TestFirstWritesRace: writers that reach a new table's range partitions
// together make each one once, and every entity is kept.
func TestFirstWritesRace(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit = engine.None(), 64
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	wantCode(t, e.CreateTable(ctx, "race"), 0, "")
	const writers, each = 8, 256
	var wg sync.WaitGroup
	for range 2 { // readers meanwhile, of ranges made or not
		wg.Go(func() {
			for i := range each {
				_, err := e.Client(nil).Get(ctx, "race", fmt.Sprintf("%02x", i), "0", nil)
				if err != nil && !tables.IsCode(err, tables.CodeResourceNotFound) {
					t.Error(err)
					return
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := e.Client(nil).Insert(ctx, "race", ent(fmt.Sprintf("%02x", i), fmt.Sprint(w))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range each {
		p, err := e.Client(nil).QueryEntities(ctx, "race", tables.Query{Filter: fmt.Sprintf("PartitionKey eq '%02x'", i)})
		if err != nil || len(p.Entities) != writers {
			t.Fatalf("key %02x holds %d entities, want %d (%v)", i, len(p.Entities), writers, err)
		}
	}
	parts, _ := e.Partitions("race")
	if len(parts) != 64 {
		t.Fatalf("%d range partitions, want 64", len(parts))
	}
}

// TestTablesChangeWhileWriting checks that writers find their table, and
// find a deleted one gone, while other tables are made and deleted: a
// request finds the table the one before named without the map of tables,
// as long as that map stands.
func TestTablesChangeWhileWriting(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.TableDeleteGrace = engine.None(), 0
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	wantCode(t, e.CreateTable(ctx, "stays"), 0, "")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 300 {
				if _, err := e.Client(nil).Insert(ctx, "Stays", ent(fmt.Sprintf("%02x", i%16), fmt.Sprintf("%d_%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			name := fmt.Sprintf("churn%d", i%3)
			if err := e.CreateTable(ctx, name); err != nil {
				t.Error(err)
				return
			}
			if _, err := e.Client(nil).Insert(ctx, name, ent("p", "r")); err != nil {
				t.Error(err)
				return
			}
			if err := e.DeleteTable(ctx, name); err != nil {
				t.Error(err)
				return
			}
			if _, err := e.Client(nil).Insert(ctx, name, ent("p", "r")); !tables.IsCode(err, tables.CodeTableNotFound) {
				t.Errorf("an insert into deleted table %s: %v", name, err)
				return
			}
		}
	})
	wg.Wait()
}
