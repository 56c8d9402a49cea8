package results_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

// shardedRun records the same requests twice: split over n shards, each
// with its own collector, and all in one collector. It returns the shards'
// records and the record of the whole.
func shardedRun(t *testing.T, n int) (shards []*results.Run, whole *results.Run) {
	t.Helper()
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	warmup, duration := 2*time.Second, 10*time.Second
	from, to := start.Add(warmup), start.Add(warmup+duration)
	setup := results.RunSpec{Op: "batch", BatchSize: 10, Partition: "guid", VMs: n, Threads: 20, VMSize: "xl", EntitySize: 1024, Warmup: warmup, Duration: duration, Load: "closed"}
	all := results.NewCollector(start, from, to)
	allRec := all.Recorder(&results.Live{})
	for i := range n {
		col := results.NewCollector(start, from, to)
		rec := col.Recorder(&results.Live{})
		for j := range 1200 {
			due := start.Add(time.Duration(j) * 10 * time.Millisecond)
			done := due.Add(time.Duration(1+(j*7+i*13)%97) * time.Millisecond)
			op, ents := "batch", 10
			if j%3 == 0 {
				op, ents = "insert", 1
			}
			pk := fmt.Sprintf("p%02d", (j+3*i)%17) // shards share keys
			outcome := results.OutcomeOK
			switch (j + i) % 50 {
			case 3:
				outcome = results.OutcomeThrottled
			case 5:
				outcome = results.OutcomeTimedOut
			case 7:
				outcome = "EntityAlreadyExists"
			case 9:
				outcome = results.OutcomeRateLimited
			}
			ru, wait := 5.25, time.Duration(0)
			if outcome == results.OutcomeRateLimited {
				ru, wait = 0, time.Duration(100+j%900)*time.Millisecond
			}
			rec.Record(op, pk, ents, due, done, outcome, 0, false)
			rec.Charge(due, ru, wait)
			allRec.Record(op, pk, ents, due, done, outcome, 0, false)
			allRec.Charge(due, ru, wait)
		}
		r, err := col.Close(to)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.Spec, r.Setup = "r", json.RawMessage(`{}`), setup
		r.Shard = &results.Shard{Index: i, Count: n, Start: start}
		shards = append(shards, r)
	}
	whole, err := all.Close(to)
	if err != nil {
		t.Fatal(err)
	}
	return shards, whole
}

// TestMergedShardsSummarizeAsTheirUnion: a run merged from its shards'
// records derives the same numbers, and holds the same histograms, as the
// run recorded whole.
func TestMergedShardsSummarizeAsTheirUnion(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		shards, whole := shardedRun(t, n)
		merged, err := results.MergeRuns(shards)
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"totals", merged.Totals, whole.Totals},
			{"billable", merged.Billable, whole.Billable},
			{"throttled share", merged.ThrottledPct, whole.ThrottledPct},
			{"errors", merged.Errors, whole.Errors},
			{"latency", merged.LatencyMs, whole.LatencyMs},
			{"success latency", merged.SuccessLatencyMs, whole.SuccessLatencyMs},
			{"per-entity latency", merged.PerEntityMs, whole.PerEntityMs},
			{"histograms", merged.Histograms, whole.Histograms},
			{"retry-after", merged.RetryAfterMs, whole.RetryAfterMs},
			{"retry-after histogram", merged.RetryAfter, whole.RetryAfter},
			{"partitions", merged.Partitions, whole.Partitions},
			{"heat map", merged.Heatmap, whole.Heatmap},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%d shards: merged %s %v, recorded whole %v", n, c.name, c.got, c.want)
			}
		}
		if err := merged.Check(); err != nil {
			t.Errorf("%d shards: %v", n, err)
		}
		if whole.ThrottledPct == 0 || whole.PerEntityMs.Count == 0 || len(whole.Errors) != 4 || whole.RetryAfterMs == nil || whole.Totals.RequestUnits == 0 {
			t.Fatalf("the run is not a useful fixture: %v%% throttled, %d per-entity, errors %v", whole.ThrottledPct, whole.PerEntityMs.Count, whole.Errors)
		}
	}
}

// TestReadersReadTheSetupNotTheArchive: what readers know of a run's spec
// comes from its Setup, so a spec archived under other field names (as a
// later tablebench may write it) reads the same.
func TestReadersReadTheSetupNotTheArchive(t *testing.T) {
	shards, _ := shardedRun(t, 2)
	want, err := results.MergeRuns(shards)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		s.Spec = json.RawMessage(`{"operation":"get","warm_up":"0s","measured":"1s","machines":9}`)
	}
	got, err := results.MergeRuns(shards)
	if err != nil {
		t.Fatal(err)
	}
	if got.MeasuredSec != want.MeasuredSec || got.EntitiesPerSec != want.EntitiesPerSec || !reflect.DeepEqual(got.Setup, want.Setup) {
		t.Fatalf("merged over %v s at %v entities/s with setup %+v; want %v s at %v with %+v", got.MeasuredSec, got.EntitiesPerSec, got.Setup, want.MeasuredSec, want.EntitiesPerSec, want.Setup)
	}
	var js bytes.Buffer
	if err := results.Write(&js, got); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadRun(&js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Setup, want.Setup) {
		t.Fatalf("read back setup %+v, want %+v", back.Setup, want.Setup)
	}
	if err := back.Check(); err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	results.WriteSummary(&sum, back)
	if !strings.Contains(sum.String(), "per entity ms") {
		t.Fatalf("the summary of a batch run has no per-entity latency:\n%s", sum.String())
	}
}

// TestOldRecordsReadTheirSetupFromTheSpec: a record written before records
// held their Setup reads it from its archived spec.
func TestOldRecordsReadTheirSetupFromTheSpec(t *testing.T) {
	old := `{"id":"r","spec":{"op":"batch","batch_size":20,"partition":"shared","vms":3,"threads":10,
		"vm_size":{"name":"small","cores":1},"entity_size":1024,"duration":"30s","warmup":"5s","load":"open","rate":250}}`
	r, err := results.ReadRun(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	want := results.RunSpec{Op: "batch", BatchSize: 20, Partition: "shared", VMs: 3, Threads: 10, VMSize: "small", EntitySize: 1024,
		Warmup: 5 * time.Second, Duration: 30 * time.Second, Load: "open", Rate: 250}
	if !reflect.DeepEqual(r.Setup, want) {
		t.Fatalf("setup %+v, want %+v", r.Setup, want)
	}
	var set results.Set
	if err := json.Unmarshal([]byte(`{"runs":[`+old+`]}`), &set); err != nil || !reflect.DeepEqual(set.Runs[0].Setup, want) {
		t.Fatalf("in a set: %v %+v", err, set.Runs)
	}
}
