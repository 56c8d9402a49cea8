package results_test

import (
	"encoding/json"
	"fmt"
	"reflect"
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
			outcome := results.OutcomeOK
			switch (j + i) % 50 {
			case 3:
				outcome = results.OutcomeThrottled
			case 5:
				outcome = results.OutcomeTimedOut
			case 7:
				outcome = "EntityAlreadyExists"
			}
			rec.Record(op, ents, due, done, outcome, 0, false)
			allRec.Record(op, ents, due, done, outcome, 0, false)
		}
		r, err := col.Close(to)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.Spec = "r", json.RawMessage(fmt.Sprintf(`{"op":"batch","batch_size":10,"vms":%d,"threads":20,"warmup":"2s","duration":"10s"}`, n))
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
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%d shards: merged %s %v, recorded whole %v", n, c.name, c.got, c.want)
			}
		}
		if whole.ThrottledPct == 0 || whole.PerEntityMs.Count == 0 || len(whole.Errors) != 3 {
			t.Fatalf("the run is not a useful fixture: %v%% throttled, %d per-entity, errors %v", whole.ThrottledPct, whole.PerEntityMs.Count, whole.Errors)
		}
	}
}
