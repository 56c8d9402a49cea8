package results_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

func TestRecorderAndSummary(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	from, to := start.Add(2*time.Second), start.Add(12*time.Second)
	col := results.NewCollector(start, from, to)
	live := &results.Live{}
	recs := []*results.Recorder{col.Recorder(live), col.Recorder(live)}
	for i := range 1200 { // 12 s, 100 requests a second per recorder, 50 ms each
		for j, r := range recs {
			done := start.Add(time.Duration(i)*10*time.Millisecond + time.Duration(j)*time.Millisecond + 50*time.Millisecond)
			outcome := results.OutcomeOK
			switch {
			case i%100 == 7:
				outcome = results.OutcomeThrottled
			case i%200 == 9:
				outcome = "EntityAlreadyExists"
			}
			r.Record("batch", "pk1", 10, done.Add(-50*time.Millisecond), done, outcome, 0, false)
		}
	}
	run, err := col.Close(to)
	if err != nil {
		t.Fatal(err)
	}
	// Requests due in the last 50 ms complete in second 12: counted by when
	// they were due, they are in the window.
	if len(run.Intervals) != 13 || !run.Intervals[1].Warmup || run.Intervals[2].Warmup {
		t.Fatalf("intervals %+v", run.Intervals)
	}
	if run.Totals.Requests != 2000 || run.RequestsPerSec != 200 {
		t.Fatalf("totals %+v, %v requests/s", run.Totals, run.RequestsPerSec)
	}
	if run.ThrottledPct != 1 || run.Errors[results.OutcomeThrottled] != 20 || run.Errors["EntityAlreadyExists"] != 10 {
		t.Fatalf("throttled %v%%, errors %v", run.ThrottledPct, run.Errors)
	}
	if run.EntitiesPerSec != 1970 || run.EntitiesSentPerSec != 2000 {
		t.Fatalf("entities/s %v, sent %v", run.EntitiesPerSec, run.EntitiesSentPerSec)
	}
	if p := run.LatencyMs; p.P50 < 49.5 || p.P50 > 50.5 || p.Max > 50.5 {
		t.Fatalf("latency %+v", p)
	}
	if p := run.PerEntityMs; p.P50 < 4.9 || p.P50 > 5.1 {
		t.Fatalf("per-entity latency %+v", p)
	}
	if live.Requests.Load() != 2400 || live.Throttled.Load() != 24 {
		t.Fatalf("live counters %d %d", live.Requests.Load(), live.Throttled.Load())
	}
	h, err := run.Histogram("batch/ok")
	if err != nil || h.TotalCount() != 1970*10/10 {
		t.Fatalf("stored histogram: %v %d", err, h.TotalCount())
	}
	var buf bytes.Buffer
	if err := run.WriteHlog(&buf); err != nil || strings.Count(buf.String(), "\n") < 12 {
		t.Fatalf("hlog: %v\n%s", err, buf.String())
	}
	var js bytes.Buffer
	results.Write(&js, run)
	back, err := results.ReadRun(&js)
	if err != nil || back.Totals.Requests != 2000 || back.LatencyMs != run.LatencyMs {
		t.Fatalf("round trip: %v", err)
	}
}

func TestDirStoresAsRunsFinish(t *testing.T) {
	path := t.TempDir()
	d, err := results.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	d.Set.Mode = "quick"
	for i, id := range []string{"a", "b", "a"} {
		if err := d.Add(&results.Run{ID: id, Start: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // the first run is written at once; later ones at most every few seconds
			if back, err := results.ReadDir(path); err != nil || back.Find("a") == nil {
				t.Fatalf("the first run is not stored: %v", err)
			}
		}
	}
	if err := d.Close(); err != nil { // and Close writes what is left
		t.Fatal(err)
	}
	back, err := results.ReadDir(path)
	if err != nil || len(back.Set.Runs) != 2 || back.Find("b") == nil || back.Set.Mode != "quick" {
		t.Fatalf("%v %+v", err, back.Set)
	}
	if _, err := results.ReadDir(t.TempDir()); err == nil {
		t.Fatal("an empty directory read as results")
	}
}

func TestFormatAndClaimsTable(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{{0.0004, "%", "0.0004%"}, {22.5, "%", "22.50%"}, {1.8234, "x", "1.82x"}, {33.46, "ms", "33.5 ms"}, {2300, "e/s", "2300 e/s"}} {
		if got := results.FormatValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("FormatValue(%v, %s) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
	var b bytes.Buffer
	results.WriteClaims(&b, []results.CheckedClaim{{ID: "C1.1", Pass: true, Unit: "%"}, {ID: "C1.2", Unit: "x"}})
	if !strings.Contains(b.String(), "C1.2   FAIL") || !strings.Contains(b.String(), "1 of 2 claims pass") {
		t.Fatalf("%s", b.String())
	}
}

// TestHarnessLagCountsOnTimeWakes checks the harness-lag summary: wakes on
// time count in its percentiles, and a run that never woke late has none.
func TestHarnessLagCountsOnTimeWakes(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	summary := func(late ...time.Duration) *results.Percentiles {
		col := results.NewCollector(start, start, start.Add(time.Second))
		r := col.Recorder(&results.Live{})
		for _, l := range late {
			r.Wake(l)
		}
		run, err := col.Close(start.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return run.HarnessLagMs
	}
	if p := summary(0, -time.Millisecond, 500*time.Nanosecond); p != nil {
		t.Fatalf("on-time wakes gave a harness lag: %+v", p)
	}
	late := make([]time.Duration, 100)
	late[99] = 20 * time.Millisecond // one late wake in a hundred
	p := summary(late...)
	if p == nil || p.P50 > 0.01 || p.P99 > 0.01 || p.Max < 19.9 {
		t.Fatalf("99 on-time wakes and one 20 ms late: %+v", p)
	}
}

// TestLiveCountersFollowTheRun: a recorder adds to its live counters as
// the run goes, an eighth of a second of the run's time behind at most,
// for a progress display to read, and has added everything once closed.
func TestLiveCountersFollowTheRun(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start, start.Add(2*time.Second))
	live := &results.Live{}
	rec := col.Recorder(live)
	for i := range 200 { // a request every 10 ms
		done := start.Add(time.Duration(i) * 10 * time.Millisecond)
		outcome := results.OutcomeOK
		if i%10 == 3 {
			outcome = results.OutcomeThrottled
		}
		rec.Record("insert", "pk", 2, done, done, outcome, 0, false)
		if sure := int64(i+1) - 13; live.Requests.Load() < sure {
			t.Fatalf("after %d requests, over %v, the live counters show %d", i+1, done.Sub(start), live.Requests.Load())
		}
	}
	if _, err := col.Close(start.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if live.Requests.Load() != 200 || live.Throttled.Load() != 20 || live.Entities.Load() != 360 || live.Errors.Load() != 0 {
		t.Fatalf("live counters %d requests, %d throttled, %d entities, %d errors", live.Requests.Load(), live.Throttled.Load(), live.Entities.Load(), live.Errors.Load())
	}
}

// TestRecordAtIsRecord: a caller that keeps time from the run's start
// records what one with times records, byte for byte.
func TestRecordAtIsRecord(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	from, to := start.Add(time.Second), start.Add(4*time.Second)
	var out [2][]byte
	for i := range out {
		col := results.NewCollector(start, from, to)
		col.PerOperation()
		rec := col.Recorder(&results.Live{})
		for j := range 500 {
			due := time.Duration(j) * 9 * time.Millisecond
			done := due + time.Duration(j%7)*time.Millisecond
			op, outcome := "insert", results.OutcomeOK
			switch {
			case j%5 == 1:
				op = "get"
			case j%11 == 2:
				outcome = results.OutcomeRateLimited
			case j%13 == 3:
				outcome = "EntityAlreadyExists"
			}
			if i == 0 {
				rec.Record(op, fmt.Sprint("pk", j%3), 1+j%4, start.Add(due), start.Add(done), outcome, 0, j%9 == 0)
				rec.Charge(start.Add(due), 1.5, time.Duration(j%2)*time.Millisecond)
				rec.Drop(start.Add(due))
			} else {
				rec.RecordAt(op, fmt.Sprint("pk", j%3), 1+j%4, due, done, outcome, 0, j%9 == 0)
				rec.ChargeAt(due, 1.5, time.Duration(j%2)*time.Millisecond)
				rec.DropAt(due)
			}
		}
		out[i] = recordBytes(t, col, to)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatalf("RecordAt's record differs from Record's:\n%s\n%s", out[0], out[1])
	}
}

// TestLatencyPastTheHistograms: a request slower than the histograms
// hold (2^32 µs, past an hour) counts, and names its histograms, which
// leave its latency out.
func TestLatencyPastTheHistograms(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(3 * time.Hour)
	col := results.NewCollector(start, start, end)
	rec := col.Recorder(&results.Live{})
	rec.Record("insert", "pk", 2, start, start.Add(72*time.Minute), results.OutcomeOK, 0, false)
	rec.Record("insert", "pk", 1, start, start.Add(2*time.Hour), "ClientTimeout", 0, false)
	run, err := col.Close(end)
	if err != nil {
		t.Fatal(err)
	}
	if run.Totals.Requests != 2 || run.Totals.Entities != 2 {
		t.Fatalf("totals %+v", run.Totals)
	}
	for _, name := range []string{"insert/ok", "insert/per-entity", "insert/ClientTimeout"} {
		h, err := run.Histogram(name)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if name == "insert/per-entity" {
			want = 1 // 36 minutes an entity
		}
		if h.TotalCount() != want {
			t.Errorf("%s holds %d latencies, want %d", name, h.TotalCount(), want)
		}
	}
	if p := run.LatencyMs; p.Count != 0 {
		t.Errorf("latency %+v, want none", p)
	}
}

// TestRecordIsRecordAtOfSub: Record takes a time's offset from the start
// the short way when it can; it must be Sub's to the nanosecond, for a
// start with or without a monotonic clock reading, times with or without
// one, and times a nanosecond either side of a second, of the window's
// edges and of a latency's microsecond.
func TestRecordIsRecordAtOfSub(t *testing.T) {
	now := time.Now()
	for _, start := range []time.Time{
		time.Date(2010, 1, 1, 0, 0, 0, 999_999_999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 1, time.UTC),
		now,
		now.Round(0),
	} {
		from, to := start.Add(time.Second), start.Add(3*time.Second)
		var offs []time.Duration
		for s := time.Duration(0); s <= 4; s++ {
			for _, d := range []time.Duration{-1001, -1000, -999, -1, 0, 1, 999, 1000, 1001} {
				offs = append(offs, s*time.Second+d)
			}
		}
		var out [2][]byte
		for i := range out {
			col := results.NewCollector(start, from, to)
			rec := col.Recorder(&results.Live{})
			for j, due := range offs {
				for k, done := range offs[j:] {
					dueT, doneT := start.Add(due), start.Add(done)
					if (j+k)%2 == 1 {
						dueT, doneT = dueT.Round(0), doneT.Round(0)
					}
					if i == 0 {
						rec.Record("insert", "pk", 1, dueT, doneT, results.OutcomeOK, 0, false)
					} else {
						rec.RecordAt("insert", "pk", 1, dueT.Sub(start), doneT.Sub(start), results.OutcomeOK, 0, false)
					}
				}
			}
			out[i] = recordBytes(t, col, to)
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("start %v: Record's record differs from RecordAt's of Sub", start)
		}
	}
}

// recordBytes closes col at to and returns its run's record and interval
// log, for tests that compare two ways of recording byte for byte.
func recordBytes(t *testing.T, col *results.Collector, to time.Time) []byte {
	t.Helper()
	run, err := col.Close(to)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := results.Write(&b, run); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteHlog(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCollectorTakesEverySecondOfManyThreads: thousands of recorders of
// a request or two a second, as a simulator's threads are, hand the
// collector far more seconds than it takes at a time, many waiting at
// once, and Close's own last flushes close the channel while it drains.
// Every request must be counted in its second, and each thread's keys in
// the partitions' counts.
func TestCollectorTakesEverySecondOfManyThreads(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	const threads, secs = 3000, 6
	col := results.NewCollector(start, start, start.Add(secs*time.Second))
	live := &results.Live{}
	recs := make([]*results.Recorder, threads)
	for i := range recs {
		recs[i] = col.Recorder(live)
	}
	for s := range secs {
		for i, r := range recs {
			n := 1 + (i+s)%2 // one or two a second
			for k := range n {
				done := start.Add(time.Duration(s)*time.Second + time.Duration(k+1)*time.Millisecond)
				r.Record("insert", fmt.Sprintf("pk-%d", i%10), 1, done.Add(-time.Millisecond), done, results.OutcomeOK, 0, false)
			}
		}
	}
	run, err := col.Close(start.Add(secs * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for s := range secs {
		var inSec int64
		for i := range threads {
			inSec += int64(1 + (i+s)%2)
		}
		want += inSec
		if got := run.Intervals[s].Requests; got != inSec {
			t.Errorf("second %d: %d requests counted, want %d", s, got, inSec)
		}
	}
	if run.Totals.Requests != want || live.Requests.Load() != want {
		t.Errorf("%d requests in the totals, %d live; want %d", run.Totals.Requests, live.Requests.Load(), want)
	}
	var keyed int64
	for _, k := range run.Partitions.Top {
		keyed += k.Requests
	}
	if p := run.Partitions; keyed != want || p.Distinct != 10 || !p.DistinctExact {
		t.Errorf("the partitions' %d keys (exact: %v) count %d requests, want 10 keys and %d", p.Distinct, p.DistinctExact, keyed, want)
	}
}

// TestSequentialCollectorRecordsTheSame: a sequential collector's record
// is the record of the same requests handed over second by second, byte for
// byte. The requests go to more keys than the collector counts at once and
// than its heat map has rows, where the order in which the collector meets
// keys decides which it keeps and which rows it merges; they fill many
// chunks, which come back and are filled again; some threads are busy, some
// send one or two a second; and requests are charged request units, whose
// sums depend on the order they are added in.
func TestSequentialCollectorRecordsTheSame(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	const threads, secs = 3000, 8
	record := func(sequential bool) []byte {
		col := results.NewCollector(start, start.Add(2*time.Second), start.Add(secs*time.Second))
		if sequential {
			col.Sequential()
		}
		recs := make([]*results.Recorder, threads)
		for i := range recs {
			recs[i] = col.Recorder(&results.Live{})
		}
		outcomes := []string{results.OutcomeOK, results.OutcomeOK, results.OutcomeThrottled, "InternalError"}
		for s := range secs {
			for i, r := range recs {
				n := 1 + (i+s)%2
				if i%500 == 0 {
					n = 300 // a busy thread
				}
				for k := range n {
					due := start.Add(time.Duration(s)*time.Second + time.Duration(k*3000+i%997)*time.Microsecond)
					done := due.Add(time.Duration(1+(i*7+k)%900) * time.Millisecond / 10)
					pk := fmt.Sprintf("pk-%d-%d", i, (s+k)/3)
					r.Record("insert", pk, 1+k%3, due, done, outcomes[(i+k+s)%len(outcomes)], 0, false)
					r.Charge(due, 1.1+float64(i%13)/7, 0)
				}
			}
		}
		run, err := col.Close(start.Add(secs * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := results.Write(&b, run); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	want, got := record(false), record(true)
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the sequential collector's record differs from byte %d: %.200q, want %.200q", i, got[i:], want[i:])
	}
	if !bytes.Contains(want, []byte(`"distinct_exact": false`)) {
		t.Errorf("the requests went to too few keys to test the order the collector meets them in")
	}
}

// TestErrorsCountedByCode: a thread's failed requests are counted by
// their code, the first code met and those after it alike, for each
// operation and in the run's totals.
func TestErrorsCountedByCode(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start, start.Add(time.Minute))
	col.PerOperation()
	rec := col.Recorder(&results.Live{})
	codes := []string{results.OutcomeThrottled, "InternalError", results.OutcomeThrottled, results.OutcomeTimedOut, "InternalError", results.OutcomeThrottled}
	for i, op := range []string{"insert", "get"} {
		for j, code := range codes[i:] {
			due := start.Add(time.Duration(10*i+j) * time.Millisecond)
			rec.Record(op, "pk", 1, due, due.Add(time.Millisecond), code, 0, false)
		}
	}
	run, err := col.Close(start.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{results.OutcomeThrottled: 5, "InternalError": 4, results.OutcomeTimedOut: 2}
	if fmt.Sprint(run.Totals.Errors) != fmt.Sprint(want) {
		t.Errorf("errors %v, want %v", run.Totals.Errors, want)
	}
	wantGet := map[string]int64{results.OutcomeThrottled: 2, "InternalError": 2, results.OutcomeTimedOut: 1}
	if got := run.Ops["get"].Errors; fmt.Sprint(got) != fmt.Sprint(wantGet) {
		t.Errorf("get's errors %v, want %v", got, wantGet)
	}
}
