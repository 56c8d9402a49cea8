package results_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// mixRun returns the record of a short run of a mix on the engine in
// virtual time, by the spec's shard and shards, as its JSON reads back.
func mixRun(t *testing.T, shard, shards int) *results.Run {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Clock, cfg.Seed = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)), 1
	tg, err := enginetarget.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	p, err := workloads.ParseWorkload([]byte("name: t\nmix: {get: 6, update: 2, insert: 1, delete: 1}\npartitions: {count: 50, distribution: zipfian}\nrows: {count: 4, distribution: uniform}\nvms: 2\nthreads: 3\nduration: 10s\nwarmup: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := p.Spec(workloads.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	coord, err := workloads.NewCoordinator(spec, tg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := coord.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if shards > 1 { // a shard's record, as a sharded run in wall time writes it
		r.Shard = &results.Shard{Index: shard, Count: shards, Start: r.Start}
	}
	var b bytes.Buffer
	results.Write(&b, r)
	back, err := results.ReadRun(&b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestOpsRecordEachOperation: a mix's record holds each operation's
// counts, misses, rates and latency, which add up to the run's and pass
// its checks; a record that changes them is refused by the field.
func TestOpsRecordEachOperation(t *testing.T) {
	r := mixRun(t, 0, 1)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"get", "update", "insert", "delete"} {
		s, ok := r.Ops[op]
		if !ok || s.Requests == 0 || s.LatencyMs.Count != s.Requests || s.EntitiesPerSec <= 0 && s.Entities > 0 {
			t.Fatalf("ops.%s = %+v", op, s)
		}
	}
	if r.Setup.Workload != "t" || r.Setup.Mix["update"] != 2 || r.Setup.Keys.Count != 50 || r.Setup.RowsEach != 4 {
		t.Fatalf("setup %+v", r.Setup)
	}
	for _, tc := range []struct {
		name   string
		tamper func(*results.Run)
		field  string
	}{
		{"an operation's requests", func(r *results.Run) { s := r.Ops["get"]; s.Requests++; r.Ops["get"] = s }, "ops.get.requests"},
		{"an operation dropped", func(r *results.Run) { delete(r.Ops, "insert") }, "ops"},
		{"misses hidden", func(r *results.Run) { s := r.Ops["get"]; s.Missed = s.Errors["ResourceNotFound"] + 1; r.Ops["get"] = s }, "ops.get.missed"},
		{"a rate", func(r *results.Run) { s := r.Ops["update"]; s.EntitiesPerSec *= 2; r.Ops["update"] = s }, "ops.update.entities_per_sec"},
		{"an outcome moved", func(r *results.Run) {
			s := r.Ops["update"]
			s.Errors = maps.Clone(s.Errors)
			if s.Errors == nil {
				s.Errors = map[string]int64{}
			}
			s.Errors["UpdateConditionNotSatisfied"]++
			r.Ops["update"] = s
		}, "ops.update.errors.UpdateConditionNotSatisfied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mixRun(t, 0, 1)
			tc.tamper(r)
			if err := r.Check(); err == nil || !strings.Contains(err.Error(), ": "+tc.field+" ") {
				t.Fatalf("Check() = %v; want an error naming %s", err, tc.field)
			}
		})
	}
}

// TestOpsMergeAcrossShards: merged shards hold each operation's counts
// summed, and their latency from the summed histograms.
func TestOpsMergeAcrossShards(t *testing.T) {
	a, b := mixRun(t, 0, 2), mixRun(t, 1, 2)
	m, err := results.MergeRuns([]*results.Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	for op, s := range m.Ops {
		if want := a.Ops[op].Requests + b.Ops[op].Requests; s.Requests != want || s.LatencyMs.Count != want {
			t.Errorf("ops.%s: %d requests (%d in its latency), want %d", op, s.Requests, s.LatencyMs.Count, want)
		}
	}
	if len(m.Ops) != len(a.Ops) {
		t.Fatalf("merged ops %v, a shard's %v", m.Ops, a.Ops)
	}
}
