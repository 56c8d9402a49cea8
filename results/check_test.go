package results_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

var (
	realOnce sync.Once
	realJSON []byte
	realHlog []byte
	realErr  error
)

// realRun returns a fresh copy of the record of a short run on the in-tree
// engine in virtual time, with throttling and errors in it, and its
// interval log.
func realRun(t *testing.T) (*results.Run, []byte) {
	t.Helper()
	realOnce.Do(func() {
		cfg := engine.DefaultConfig()
		cfg.Profile, realErr = engine.ProfileByName("wa2010")
		if realErr != nil {
			return
		}
		cfg.TimeScale, cfg.Clock, cfg.Seed = 1, clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)), 1
		var tg *enginetarget.Target
		if tg, realErr = enginetarget.New(cfg); realErr != nil {
			return
		}
		defer tg.Close()
		spec := workloads.DefaultSpec()
		spec.Op, spec.BatchSize, spec.Partition, spec.VMs, spec.Threads = workloads.OpBatch, 20, workloads.PartitionShared, 3, 10
		spec.Duration, spec.Warmup, spec.Seed = 30*time.Second, 5*time.Second, 3
		var rn *workloads.Coordinator
		if rn, realErr = workloads.NewCoordinator(spec, tg); realErr != nil {
			return
		}
		var r *results.Run
		if r, realErr = rn.Run(context.Background()); realErr != nil {
			return
		}
		var js, hl bytes.Buffer
		if realErr = results.Write(&js, r); realErr == nil {
			realErr = r.WriteHlog(&hl)
		}
		realJSON, realHlog = js.Bytes(), hl.Bytes()
	})
	if realErr != nil {
		t.Fatal(realErr)
	}
	r, err := results.ReadRun(bytes.NewReader(realJSON))
	if err != nil {
		t.Fatal(err)
	}
	return r, realHlog
}

// TestCheckAcceptsRealRecords: records as tablebench writes them pass,
// with and without the parts run --json leaves out.
func TestCheckAcceptsRealRecords(t *testing.T) {
	r, _ := realRun(t)
	if r.Totals.Throttled == 0 || len(r.Intervals) == 0 || len(r.Histograms) == 0 {
		t.Fatalf("the run is not a useful fixture: %d throttled, %d seconds, %d histograms", r.Totals.Throttled, len(r.Intervals), len(r.Histograms))
	}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	r.Histograms, r.Intervals = nil, nil
	if err := r.Check(); err != nil {
		t.Fatalf("a record without histograms and intervals: %v", err)
	}
	r.LatencyMs.P95, r.SuccessLatencyMs.P95, r.PerEntityMs.P95 = 0, 0, 0
	if err := r.Check(); err != nil {
		t.Fatalf("a record made before p95 was summarized: %v", err)
	}
}

// TestCheckRefusesTamperedRecords: a record altered in any of the ways
// that would change a chart or a claim is refused, naming its run and the
// field that contradicts the rest.
func TestCheckRefusesTamperedRecords(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(r *results.Run)
		field  string
	}{
		{"totals scaled", func(r *results.Run) {
			r.Totals.Requests *= 10
			r.Totals.Entities *= 10
			r.Totals.EntitiesSent *= 10
			r.Billable *= 10
			r.LatencyMs.Count *= 10
		}, "totals.requests"},
		{"totals scaled without histograms", func(r *results.Run) {
			r.Histograms, r.Intervals = nil, nil
			r.Totals.Requests *= 10
			r.Billable *= 10
		}, "latency_ms.count"},
		{"intervals scaled", func(r *results.Run) {
			for i := range r.Intervals {
				r.Intervals[i].Requests *= 10
				r.Intervals[i].Entities *= 10
			}
		}, "intervals"},
		{"intervals short of the totals", func(r *results.Run) {
			for i := range r.Intervals {
				r.Intervals[i].Entities /= 2
			}
		}, "totals.entities"},
		{"negative rate", func(r *results.Run) { r.EntitiesPerSec = -r.EntitiesPerSec }, "entities_per_sec"},
		{"rate against its counts", func(r *results.Run) { r.EntitiesPerSec *= 2 }, "entities_per_sec"},
		{"requests rate against its counts", func(r *results.Run) { r.RequestsPerSec += 1 }, "requests_per_sec"},
		{"measured time", func(r *results.Run) { r.MeasuredSec /= 2 }, "entities_per_sec"},
		{"negative count", func(r *results.Run) { r.Totals.Retries = -1 }, "totals.retries"},
		{"throttled percentage", func(r *results.Run) { r.ThrottledPct = 0 }, "throttled_pct"},
		{"request units rate against its counts", func(r *results.Run) { r.RequestUnitsPerSec = 1 }, "request_units_per_sec"},
		{"request units beyond the intervals", func(r *results.Run) {
			r.Totals.RequestUnits = 100
			r.RequestUnitsPerSec = 100 / r.MeasuredSec
		}, "totals.request_units"},
		{"more retry-afters than throttled requests", func(r *results.Run) {
			r.RetryAfterMs = &results.Percentiles{Count: r.Totals.Throttled + r.Totals.TimedOut + 1}
		}, "retry_after_ms.count"},
		{"a retry-after summary without its histogram", func(r *results.Run) { r.RetryAfterMs = &results.Percentiles{Count: 1} }, "retry_after_hist"},
		{"throttling hidden", func(r *results.Run) {
			r.Totals.Throttled = 0
			delete(r.Totals.Errors, results.OutcomeThrottled)
			delete(r.Errors, results.OutcomeThrottled)
		}, "totals.errors." + results.OutcomeThrottled},
		{"errors against totals", func(r *results.Run) { r.Errors[results.OutcomeThrottled]++ }, "errors." + results.OutcomeThrottled},
		{"p99 beyond the histogram", func(r *results.Run) { r.LatencyMs.P99, r.LatencyMs.P999, r.LatencyMs.Max = 1e6, 1e6, 1e6 }, "latency_ms.p99"},
		{"p50 below the histogram", func(r *results.Run) { r.SuccessLatencyMs.P50 = 0.001 }, "success_latency_ms.p50"},
		{"percentiles out of order", func(r *results.Run) {
			r.Histograms = nil
			r.LatencyMs.P90 = r.LatencyMs.P50 / 2
		}, "latency_ms.p90"},
		{"p95 below p90", func(r *results.Run) { r.SuccessLatencyMs.P95 = r.SuccessLatencyMs.P90 / 2 }, "success_latency_ms.p95"},
		{"p95 above p99", func(r *results.Run) { r.Histograms, r.LatencyMs.P95 = nil, r.LatencyMs.P99*2 }, "latency_ms.p99"},
		{"a histogram that does not decode", func(r *results.Run) { r.Histograms["batch/ok"] = "bm90IGEgaGlzdG9ncmFt" }, "histograms.batch/ok"},
		{"seconds out of order", func(r *results.Run) { r.Intervals[3].Second = r.Intervals[2].Second }, "intervals[3].second"},
		{"no spec", func(r *results.Run) { r.Spec = nil }, "spec"},
		{"hot key scaled", func(r *results.Run) { r.Partitions.Top[0].Requests *= 1000 }, "partitions.top[0].requests"},
		{"hot key throttled more than it was sent", func(r *results.Run) { r.Partitions.Top[0].Throttled = r.Partitions.Top[0].Requests + 1 }, "partitions.top[0].throttled"},
		{"hot key's error hides a count", func(r *results.Run) { r.Partitions.Top[0].Error = -1 }, "partitions.top[0]"},
		{"fewer keys than listed", func(r *results.Run) { r.Partitions.Distinct = 0 }, "partitions.distinct"},
		{"keys added to the top", func(r *results.Run) {
			k := r.Partitions.Top[0]
			k.Key += "-copy"
			r.Partitions.Top = append(r.Partitions.Top, k)
			r.Partitions.Distinct++
		}, "partitions.top"},
		{"heat map scaled", func(r *results.Run) {
			for i := range r.Heatmap.Rows[0].Cells {
				c := &r.Heatmap.Rows[0].Cells[i]
				c.Requests, c.OK, c.Throttled = 2*c.Requests, 2*c.OK, 2*c.Throttled
			}
		}, "heatmap"},
		{"heat map throttling hidden", func(r *results.Run) {
			for i := range r.Heatmap.Rows[0].Cells {
				c := &r.Heatmap.Rows[0].Cells[i]
				c.OK, c.Throttled = c.OK+c.Throttled, 0
			}
		}, "heatmap"},
		{"heat map moved in time", func(r *results.Run) {
			cs := r.Heatmap.Rows[0].Cells
			i := len(cs) / 2
			cs[i].Requests, cs[i+1].Requests = cs[i+1].Requests, cs[i].Requests
			cs[i].OK, cs[i+1].OK = cs[i+1].OK, cs[i].OK
			cs[i].Throttled, cs[i+1].Throttled = cs[i+1].Throttled, cs[i].Throttled
		}, "heatmap column"},
		{"heat map row backwards", func(r *results.Run) { r.Heatmap.Rows[0].Lo = r.Heatmap.Rows[0].Hi + "~" }, "heatmap.rows[0]"},
		{"heat map cells out of order", func(r *results.Run) {
			cs := r.Heatmap.Rows[0].Cells
			cs[0], cs[1] = cs[1], cs[0]
		}, "heatmap.rows[0].cells[1]"},
		{"heat map unbounded", func(r *results.Run) { r.Heatmap.Columns = results.HeatmapColumns + 1 }, "heatmap.columns"},
		{"range partitions from the middle", func(r *results.Run) { r.RangePartitions[0].Lo = "m" }, "range_partitions[0].lo"},
		{"range partitions out of order", func(r *results.Run) {
			r.RangePartitions = []results.RangePartition{{Lo: ""}, {Lo: "b"}, {Lo: "a"}}
		}, "range_partitions[2].lo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := realRun(t)
			tc.tamper(r)
			err := r.Check()
			if err == nil || !strings.Contains(err.Error(), "run "+r.ID+": "+tc.field+" ") {
				t.Fatalf("Check() = %v; want an error naming run %s and %s", err, r.ID, tc.field)
			}
		})
	}
}

// TestHlogMustBeItsRuns: an interval log put beside another run's record
// (another run, another shard of the run, or a log whose seconds were
// changed) is refused by name.
func TestHlogMustBeItsRuns(t *testing.T) {
	r, hlog := realRun(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := write("own.hlog", hlog)
	if err := r.ReadHlog(own); err != nil || len(r.IntervalHists) != len(r.Intervals) {
		t.Fatalf("its own log: %v", err)
	}
	other := *r
	other.ID = "someotherrun"
	var buf bytes.Buffer
	other.WriteHlog(&buf)
	shard := *r
	shard.Shard = &results.Shard{Index: 1, Count: 2}
	var shardLog bytes.Buffer
	shard.WriteHlog(&shardLog)
	later := *r
	later.Start = r.Start.Add(250 * time.Millisecond)
	var laterLog bytes.Buffer
	later.WriteHlog(&laterLog)
	tests := []struct {
		name string
		run  *results.Run
		log  []byte
		want string
	}{
		{"another run's", r, buf.Bytes(), "interval log of run someotherrun, not of " + r.ID},
		{"another shard's", &results.Run{ID: r.ID, Start: r.Start, Intervals: r.Intervals, Shard: &results.Shard{Index: 0, Count: 2}}, shardLog.Bytes(), "interval log of run " + r.ID + " shard 1/2, not of " + r.ID + " shard 0/2"},
		{"started at another time", r, laterLog.Bytes(), "it is another run's interval log"},
		{"with fewer seconds", r, []byte(strings.Join(strings.SplitAfter(string(hlog), "\n")[:8], "")), "seconds, the record of run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := *tc.run
			err := run.ReadHlog(write(tc.name+".hlog", tc.log))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadHlog() = %v; want %q", err, tc.want)
			}
		})
	}
	// A record whose interval counts were changed no longer matches its log.
	changed := *r
	changed.Intervals = append([]results.Interval(nil), r.Intervals...)
	changed.Intervals[4].Requests++
	if err := changed.ReadHlog(own); err == nil || !strings.Contains(err.Error(), "requests in second 4") {
		t.Fatalf("ReadHlog() with a changed second = %v", err)
	}
}

// TestReadDirRefusesBadSets: a set without runs, with a run twice or with
// a tampered record is refused with one line that says which.
func TestReadDirRefusesBadSets(t *testing.T) {
	r, _ := realRun(t)
	good, _ := json.Marshal(r)
	other := *r
	other.ID, other.Env.TimeScale = "other", 10
	scaled, _ := json.Marshal(&other)
	tests := []struct {
		name, runs, want string
	}{
		{"runs null", "null", "holds no runs"},
		{"no runs", "[]", "holds no runs"},
		{"a run twice", "[" + string(good) + "," + string(good) + "]", "run " + r.ID + " is listed twice"},
		{"a null run", "[null]", "runs[0] is null"},
		{"two time scales", "[" + string(good) + "," + string(scaled) + "]", "runs " + r.ID + " and other ran at time scales 0 and 10"},
		{"a tampered run", "[" + strings.Replace(string(good), `"billable_transactions":`, `"billable_transactions":1`, 1) + "]", "run " + r.ID + ": billable_transactions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, results.SetFile), []byte(`{"mode":"quick","runs":`+tc.runs+`}`), 0o644)
			_, err := results.ReadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ReadDir() = %v; want one line with %q", err, tc.want)
			}
		})
	}
}

// TestLockRemovesStaleTemps: files a killed process left half-written are
// removed by the next holder of the lock, and only by it; nothing else in
// the directory is touched.
func TestLockRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".tmp-fig03-get-x1.hlog123456")
	keep := []string{filepath.Join(dir, "fig03-get-x1.hlog"), filepath.Join(dir, "tmp-notes.txt")}
	for _, p := range append(keep, stale) {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, ".tmp-dir"), 0o755)
	holder, err := results.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Fatal("the stale temporary file is still there")
	}
	os.WriteFile(stale, []byte("x"), 0o644) // as if the holder were writing it
	other, _ := results.OpenDir(dir)
	if err := other.Lock(); err == nil {
		t.Fatal("a second writer got the lock")
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a process without the lock removed the holder's temporary file")
	}
	holder.Close()
	for _, p := range append(keep, filepath.Join(dir, ".tmp-dir")) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}

// TestSettingsDiff: the first setting that differs is named, the target
// before the others.
func TestSettingsDiff(t *testing.T) {
	a := results.Settings{"target": "engine", "profile": "wa2010", "seed": "1"}
	for _, tc := range []struct {
		b                  results.Settings
		name, mine, theirs string
		differ             bool
	}{
		{results.Settings{"target": "engine", "profile": "wa2010", "seed": "1"}, "", "", "", false},
		{results.Settings{"target": "engine", "profile": "modern", "seed": "2"}, "profile", "wa2010", "modern", true},
		{results.Settings{"target": "table", "seed": "1"}, "target", "engine", "table", true},
		{results.Settings{"target": "engine", "profile": "wa2010", "seed": "1", "duration": "10s"}, "duration", "", "10s", true},
	} {
		name, mine, theirs, differ := a.Diff(tc.b)
		if name != tc.name || mine != tc.mine || theirs != tc.theirs || differ != tc.differ {
			t.Errorf("Diff(%v) = %q %q %q %v; want %q %q %q %v", tc.b, name, mine, theirs, differ, tc.name, tc.mine, tc.theirs, tc.differ)
		}
	}
}
