package aztarget_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine/rest/resttest"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/aztarget"
)

func servedTarget(t *testing.T, s *resttest.Server) *aztarget.Target {
	t.Helper()
	return targetFor(t, s.ConnectionString)
}

func shardSpec(job string, shards int) workloads.Spec {
	spec := workloads.DefaultSpec()
	spec.Op, spec.Partition, spec.VMs, spec.Threads = workloads.OpInsert, workloads.PartitionShared, 3, 2
	spec.Warmup, spec.Duration, spec.JobID, spec.Shards = time.Second, 2*time.Second, job, shards
	return spec
}

// runShards runs the given shards of spec at once, each with a target of
// its own, as separate machines would.
func runShards(t *testing.T, s *resttest.Server, spec workloads.Spec, shards ...int) ([]*results.Run, []error) {
	t.Helper()
	runs, errs := make([]*results.Run, len(shards)), make([]error, len(shards))
	var wg sync.WaitGroup
	for i, k := range shards {
		sp := spec
		sp.Shard = k
		wg.Go(func() {
			r, err := workloads.NewCoordinator(sp, servedTarget(t, s))
			if err != nil {
				errs[i] = err
				return
			}
			runs[i], errs[i] = r.Run(context.Background())
		})
	}
	wg.Wait()
	return runs, errs
}

// TestShardsMeetInTheTable: shards of one run meet through its table,
// start together, run only their own VMs, and one of them makes and deletes
// the table.
func TestShardsMeetInTheTable(t *testing.T) {
	s := resttest.NewServer(t, resttest.Options{})
	// The merged rate is taken over the whole seconds both shards measured,
	// each shard's over its own window: 4 s keep the shared seconds most of
	// either, so a busy machine's slow second cannot part them by a fifth.
	spec := shardSpec("meet", 2)
	spec.Duration = 4 * time.Second
	runs, errs := runShards(t, s, spec, 0, 1)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	a, b := runs[0], runs[1]
	if a.Shard == nil || b.Shard == nil || a.Shard.Start != b.Shard.Start || a.Shard.SkewMs == nil || a.Shard.Count != 2 || b.Shard.Index != 1 {
		t.Fatalf("shard records: %+v %+v", a.Shard, b.Shard)
	}
	if a.ID != b.ID || string(a.Spec) != string(b.Spec) {
		t.Fatalf("the shards' records are of different runs: %s %s", a.ID, b.ID)
	}
	if d := a.Start.Sub(b.Start); d > 200*time.Millisecond || d < -200*time.Millisecond {
		t.Fatalf("the shards started %v apart", d)
	}
	// Shard 0 runs VMs 1 and 3, shard 1 runs VM 2: two threads each.
	if len(a.Warnings) > 0 || len(b.Warnings) > 0 || a.Totals.Requests == 0 || b.Totals.Requests == 0 {
		t.Fatalf("warnings %v %v, requests %d %d", a.Warnings, b.Warnings, a.Totals.Requests, b.Totals.Requests)
	}
	if ratio := float64(a.Totals.Requests) / float64(b.Totals.Requests); ratio < 1.5 || ratio > 2.5 {
		t.Fatalf("shard 0 (2 VMs) sent %d requests, shard 1 (1 VM) %d", a.Totals.Requests, b.Totals.Requests)
	}
	if _, ok := s.Engine.TableName(a.ID); ok {
		t.Fatalf("table %s outlived the run", a.ID)
	}

	// The merge loses nothing.
	m, err := results.MergeRuns([]*results.Run{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Requests != a.Totals.Requests+b.Totals.Requests || m.LatencyMs.Count != a.LatencyMs.Count+b.LatencyMs.Count || len(m.MergedFrom) != 2 {
		t.Fatalf("merged %d requests (%d in its histograms) from %d and %d", m.Totals.Requests, m.LatencyMs.Count, a.Totals.Requests, b.Totals.Requests)
	}
	// Every second of both shards is in the merged record, and its rate is
	// the entities of the whole seconds both measured, over those seconds.
	// Checked exactly, not against the shards' own rates, which are over
	// each one's window: on a busy machine a slow second parts them.
	sum := func(ivs []results.Interval) (n int64) {
		for _, iv := range ivs {
			n += iv.Entities
		}
		return n
	}
	if got, want := sum(m.Intervals), sum(a.Intervals)+sum(b.Intervals); got != want {
		t.Fatalf("the merged intervals hold %d entities, the shards' %d", got, want)
	}
	secs := int(m.MeasuredSec)
	window := false
	for first := 0; first+secs <= len(m.Intervals) && secs >= 1; first++ {
		if n := sum(m.Intervals[first : first+secs]); math.Abs(float64(n)-m.EntitiesPerSec*m.MeasuredSec) < 0.5 {
			window = true
		}
	}
	if !window || m.MeasuredSec < 1 {
		t.Fatalf("merged %.1f entities/s over %.0f s: no %d whole seconds of its intervals hold that", m.EntitiesPerSec, m.MeasuredSec, secs)
	}
	if both := a.EntitiesPerSec + b.EntitiesPerSec; m.EntitiesPerSec < 0.5*both || m.EntitiesPerSec > 2*both {
		t.Fatalf("merged %.0f entities/s, the shards %.0f and %.0f", m.EntitiesPerSec, a.EntitiesPerSec, b.EntitiesPerSec)
	}
	for _, bad := range []struct {
		runs []*results.Run
		want string
	}{
		{[]*results.Run{a}, "shard(s) 1 of 2 missing"},
		{[]*results.Run{a, a, b}, "shard 0 is given twice"},
	} {
		if _, err := results.MergeRuns(bad.runs); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v, want %q", err, bad.want)
		}
	}
	other := *b
	other.Spec = []byte(`{"op":"get"}`)
	if _, err := results.MergeRuns([]*results.Run{a, &other}); err == nil || !strings.Contains(err.Error(), "another spec") {
		t.Errorf("records of different specs: %v", err)
	}
}

// TestAMissingShardIsNamed: a shard that never comes is named when the
// wait ends.
func TestAMissingShardIsNamed(t *testing.T) {
	s := resttest.NewServer(t, resttest.Options{})
	spec := shardSpec("alone", 3)
	spec.Rendezvous = time.Second
	_, errs := runShards(t, s, spec, 0, 2)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "shard(s) 1 of 3 did not report ready") {
		t.Fatalf("shard 0: %v, want shard 1 named", errs[0])
	}
	if errs[1] == nil { // it names shard 1 too, or finds the table shard 0 deleted
		t.Fatal("shard 2 ran without shard 1")
	}
}

// TestSkewFindsTheTick: against a server on this machine (no skew) the
// estimate is better than the Date header's whole seconds; a server
// whose Date never moves still gets an answer, within about a second.
func TestSkewFindsTheTick(t *testing.T) {
	s := resttest.NewServer(t, resttest.Options{})
	for range 3 {
		d, err := servedTarget(t, s).Skew(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Good to two round trips, which a busy machine stretches; whole
		// seconds alone are off by up to 500 ms.
		if d > 300*time.Millisecond || d < -300*time.Millisecond {
			t.Fatalf("skew %v against a server on this machine", d)
		}
	}

	frozen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", "Sun, 22 Nov 2026 20:00:00 GMT")
		odataError(w, 404, "ResourceNotFound", "The specified resource does not exist.")
	}))
	defer frozen.Close()
	tg := targetFor(t, devConn(frozen.URL))
	start := time.Now()
	d, err := tg.Skew(context.Background())
	if err != nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a frozen Date: skew %v, %v, after %v", d, err, time.Since(start))
	}
	want := time.Until(time.Date(2026, 11, 22, 20, 0, 0, 500e6, time.UTC))
	if diff := d - want; diff > 2*time.Second || diff < -2*time.Second {
		t.Fatalf("a frozen Date: skew %v, want about %v", d, want)
	}
}
