package results_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

// request is one recorded request of a key-space test.
type request struct {
	pk      string
	at      time.Duration // when it completed, from the run's start
	outcome string
}

// recordAll records requests in one collector of a run measured from
// warmup to span, and returns its record.
func recordAll(t *testing.T, warmup, span time.Duration, n int, req func(i int) request) *results.Run {
	t.Helper()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	col := results.NewCollector(start, start.Add(warmup), start.Add(span))
	rec := col.Recorder(&results.Live{})
	for i := range n {
		q := req(i)
		done := start.Add(q.at)
		rec.Record("get", q.pk, 1, done, done, q.outcome, 0, false)
	}
	r, err := col.Close(start.Add(span))
	if err != nil {
		t.Fatal(err)
	}
	r.ID, r.Spec = "keys", json.RawMessage(`{}`)
	r.Setup = results.RunSpec{Op: "get", VMs: 1, Threads: 1, Warmup: warmup, Duration: span - warmup, Load: "closed"}
	if err := r.Check(); err != nil {
		t.Fatalf("the record fails its own check: %v", err)
	}
	return r
}

// TestFewKeysAreCountedExactly: a run over a few keys lists each with its
// exact requests and throttled requests, hottest first, and says the
// distinct count is exact; the heat map gives each key a row of its own,
// in key order, and its cells add up to what was sent.
func TestFewKeysAreCountedExactly(t *testing.T) {
	keys := []string{"delta", "alpha", "echo", "charlie", "bravo"}
	// Key k gets 10·(5-k) requests; of them, k are throttled.
	var reqs []request
	for k, pk := range keys {
		for j := range 10 * (5 - k) {
			outcome := results.OutcomeOK
			if j < k {
				outcome = results.OutcomeThrottled
			}
			reqs = append(reqs, request{pk: pk, at: time.Duration(j) * 100 * time.Millisecond, outcome: outcome})
		}
	}
	r := recordAll(t, 0, 10*time.Second, len(reqs), func(i int) request { return reqs[i] })
	want := &results.Partitions{Distinct: 5, DistinctExact: true, Top: []results.KeyLoad{
		{Key: "delta", Requests: 50}, {Key: "alpha", Requests: 40, Throttled: 1}, {Key: "echo", Requests: 30, Throttled: 2},
		{Key: "charlie", Requests: 20, Throttled: 3}, {Key: "bravo", Requests: 10, Throttled: 4},
	}}
	if !reflect.DeepEqual(r.Partitions, want) {
		t.Errorf("partitions %+v, want %+v", r.Partitions, want)
	}
	h := r.Heatmap
	var rows []string
	for _, row := range h.Rows {
		if row.Lo != row.Hi {
			t.Errorf("row %+v holds more than one key", row)
		}
		rows = append(rows, row.Lo)
	}
	if sorted := slices.Sorted(slices.Values(keys)); !slices.Equal(rows, sorted) {
		t.Errorf("heat map rows %v, want the keys in key order %v", rows, sorted)
	}
	if h.ColumnSec != 1 || h.Columns != 5 {
		t.Errorf("heat map of %d columns of %d s; want 5 of 1 s (the last request completes at 4.9 s)", h.Columns, h.ColumnSec)
	}
	perKey := map[string]int64{}
	for _, row := range h.Rows {
		for _, c := range row.Cells {
			perKey[row.Lo] += c.Requests
		}
	}
	for k, pk := range keys {
		if perKey[pk] != int64(10*(5-k)) {
			t.Errorf("heat map holds %d requests to %s, want %d", perKey[pk], pk, 10*(5-k))
		}
	}
}

// zipf draws ranks 0..n-1 with P(rank i) ∝ 1/(i+1)^theta, by the inverse
// of the cumulative distribution.
type zipf struct{ cdf []float64 }

func newZipf(n int, theta float64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for i := range n {
		sum += 1 / math.Pow(float64(i+1), theta)
		z.cdf[i] = sum
	}
	for i := range z.cdf {
		z.cdf[i] /= sum
	}
	return z
}

func (z *zipf) draw(rng *rand.Rand) int {
	return min(sort.SearchFloat64s(z.cdf, rng.Float64()), len(z.cdf)-1)
}

// TestSkewedLoadShowsTheHotKeyFirst: a zipfian load over many more keys
// than the collector counts at once lists the hottest keys in their order,
// each count no less than the truth and no more than the truth plus its
// error, and estimates the distinct keys within a few percent.
func TestSkewedLoadShowsTheHotKeyFirst(t *testing.T) {
	const n, keys = 300_000, 200_000
	rng := rand.New(rand.NewPCG(1, 2))
	z := newZipf(keys, 0.99)
	// Key names are scattered over the key space, as GUIDs are: the hottest
	// is not the first in key order.
	name := func(rank int) string { return fmt.Sprintf("%08x-%d", uint32(rank)*2654435761, rank) }
	truth := map[string]int64{}
	r := recordAll(t, 0, 60*time.Second, n, func(i int) request {
		pk := name(z.draw(rng))
		truth[pk]++
		return request{pk: pk, at: time.Duration(i) * 60 * time.Second / n, outcome: results.OutcomeOK}
	})
	p := r.Partitions
	for i := range 5 {
		if p.Top[i].Key != name(i) {
			t.Errorf("top[%d] is %s, want the rank-%d key %s (top: %+v)", i, p.Top[i].Key, i+1, name(i), p.Top[:5])
		}
	}
	for _, k := range p.Top {
		if k.Requests < truth[k.Key] || k.Requests-k.Error > truth[k.Key] {
			t.Errorf("key %s counted %d (error %d), but had %d requests", k.Key, k.Requests, k.Error, truth[k.Key])
		}
	}
	if p.Top[0].Error != 0 {
		t.Errorf("the hottest key's count has an error of %d; it was held from its first request", p.Top[0].Error)
	}
	if p.DistinctExact || math.Abs(float64(p.Distinct)/float64(len(truth))-1) > 0.05 {
		t.Errorf("distinct %d (exact %v), but the run touched %d keys: want an estimate within 5%%", p.Distinct, p.DistinctExact, len(truth))
	}
	if p.Sketch == "" || p.UnlistedMax == 0 {
		t.Errorf("a summary of many keys keeps its sketch and its bound on unlisted keys: %q, %d", p.Sketch, p.UnlistedMax)
	}
	if row := heatRowOf(r.Heatmap, name(0)); row < 0 || r.Heatmap.Rows[row].Lo != name(0) || r.Heatmap.Rows[row].Hi != name(0) {
		t.Errorf("the hottest key has no heat map row of its own: row %d of %v", row, len(r.Heatmap.Rows))
	}
}

// heatRowOf returns the heat map row that holds key, or -1.
func heatRowOf(h *results.Heatmap, key string) int {
	for i, row := range h.Rows {
		if row.Lo <= key && key <= row.Hi {
			return i
		}
	}
	return -1
}

// keySpaceRun records n requests over distinct keys (n of them, or fewer
// repeated), each key made anew as a worker makes it, and returns the
// record and how much the heap grew while the collector held them.
func keySpaceRun(t *testing.T, n, distinct int) (*results.Run, int64) {
	var before, during runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	span := 100 * time.Second
	col := results.NewCollector(start, start, start.Add(span))
	rec := col.Recorder(&results.Live{})
	buf := make([]byte, 0, 64)
	for i := range n {
		buf = fmt.Appendf(buf[:0], "%032x", uint64(i%distinct)*0x9e3779b97f4a7c15) // 32 bytes
		done := start.Add(time.Duration(i) * span / time.Duration(n))
		rec.Record("insert", string(buf), 1, done, done, results.OutcomeOK, 0, false)
	}
	r, err := col.Close(start.Add(span))
	if err != nil {
		t.Fatal(err)
	}
	// Twice: the first GC leaves the pooled sample slices in the pool's
	// victim cache, which a backlog of seconds filled: transient, and no
	// part of what the collector keeps of the keys.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&during)
	runtime.KeepAlive(col) // what it held until the end, not only its record
	return r, int64(during.HeapAlloc) - int64(before.HeapAlloc)
}

// TestKeySpaceIsBoundedForAMillionKeys: a run over a million distinct
// keys keeps a bounded record, and its collector holds little more than
// over a thousand keys: its counters' and rows' keys, not every key.
func TestKeySpaceIsBoundedForAMillionKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("a million requests")
	}
	const n = 1_000_000
	_, few := keySpaceRun(t, n, 1000)
	r, many := keySpaceRun(t, n, n)
	// The million keys alone take 32 MB.
	if more := many - few; more > 8<<20 {
		t.Errorf("the collector holds %d MiB more over a million keys than over a thousand; want it bounded", more>>20)
	}
	if len(r.Heatmap.Rows) != results.HeatmapRows || r.Heatmap.Columns > results.HeatmapColumns || len(r.Partitions.Top) != results.TopKeys {
		t.Errorf("heat map of %d rows and %d columns, %d top keys: want %d, at most %d, %d", len(r.Heatmap.Rows), r.Heatmap.Columns, len(r.Partitions.Top), results.HeatmapRows, results.HeatmapColumns, results.TopKeys)
	}
	b, _ := json.Marshal(struct {
		P *results.Partitions
		H *results.Heatmap
	}{r.Partitions, r.Heatmap})
	if len(b) > 256<<10 {
		t.Errorf("the key space takes %d KiB of the record; want it bounded", len(b)>>10)
	}
	var total int64
	for _, row := range r.Heatmap.Rows {
		for _, c := range row.Cells {
			total += c.Requests
		}
	}
	if total != n || r.Totals.Requests != n {
		t.Errorf("heat map holds %d requests, totals %d; want %d", total, r.Totals.Requests, n)
	}
	if d := float64(r.Partitions.Distinct); r.Partitions.DistinctExact || math.Abs(d/n-1) > 0.05 {
		t.Errorf("distinct %v (exact %v), want an estimate of a million within 5%%", d, r.Partitions.DistinctExact)
	}
	t.Logf("heap: %d KiB over a thousand keys, %d KiB over a million; key space in the record: %d KiB", few>>10, many>>10, len(b)>>10)
}

// TestHeatmapColumnsDoubleForLateRequests: requests that complete long
// after the run's expected end widen the columns rather than grow them
// past the bound, and every request is kept.
func TestHeatmapColumnsDoubleForLateRequests(t *testing.T) {
	r := recordAll(t, 0, 100*time.Second, 1000, func(i int) request {
		return request{pk: fmt.Sprint("k", i%7), at: time.Duration(i) * 400 * time.Millisecond, outcome: results.OutcomeOK}
	})
	h := r.Heatmap
	if h.ColumnSec != 4 || h.Columns != 100 {
		t.Errorf("400 s of requests in a run of 100 s: %d columns of %d s, want 100 of 4 s", h.Columns, h.ColumnSec)
	}
}

// TestSummaryNamesTheHottestKeys: a run's printed summary says how many
// keys it touched and where its requests landed most.
func TestSummaryNamesTheHottestKeys(t *testing.T) {
	// p000017 gets 31 of 100 requests, 4 of them throttled; p000003 9.
	r := recordAll(t, 0, 10*time.Second, 100, func(i int) request {
		q := request{pk: fmt.Sprintf("p%06d", 20+i%60), at: time.Duration(i) * 50 * time.Millisecond, outcome: results.OutcomeOK}
		switch {
		case i < 31:
			q.pk = "p000017"
			if i < 4 {
				q.outcome = results.OutcomeThrottled
			}
		case i < 40:
			q.pk = "p000003"
		}
		return q
	})
	var b strings.Builder
	results.WriteSummary(&b, r)
	want := "  partitions       62 touched (exact); hottest p000017: 31% of requests, 13% of them throttled; next p000003 9.0%, p000020 1.0%\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant the line\n%s", b.String(), want)
	}
}

// TestSummaryOfManyKeysSaysNoneStandsOut: over more keys than are counted
// at once, evenly, the summary says no key stands out and that the counts
// are bounds, with no throttled share it cannot know.
func TestSummaryOfManyKeysSaysNoneStandsOut(t *testing.T) {
	r := recordAll(t, 0, 10*time.Second, 40_000, func(i int) request {
		return request{pk: fmt.Sprintf("k%05d", i%20_000), at: time.Duration(i) * 250 * time.Microsecond, outcome: results.OutcomeThrottled}
	})
	got := results.HottestText(r)
	for _, want := range []string{"(estimated); none takes 1% of requests; hottest k", ": at most 0.0", "; next k"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if strings.Contains(got, "throttled") {
		t.Errorf("%q gives a throttled share of a count that is a bound", got)
	}
}

// TestCoarsenKeepsEveryRequest: a heat map coarsened for a small chart
// keeps every request in fewer rows and columns, and the hot key in a row
// of its own.
func TestCoarsenKeepsEveryRequest(t *testing.T) {
	r := recordAll(t, 0, 100*time.Second, 10_000, func(i int) request {
		pk := fmt.Sprintf("k%03d", i%300)
		if i%2 == 0 {
			pk = "k150"
		}
		return request{pk: pk, at: time.Duration(i) * 10 * time.Millisecond, outcome: results.OutcomeOK}
	})
	c := r.Heatmap.Coarsen(8, 10)
	var total int64
	for _, row := range c.Rows {
		for _, cell := range row.Cells {
			total += cell.Requests
		}
	}
	if len(c.Rows) != 8 || c.Columns > 10 || c.ColumnSec != 16 || total != 10_000 {
		t.Errorf("coarsened to %d rows, %d columns of %d s, %d requests; want 8, at most 10 of 16 s, 10000", len(c.Rows), c.Columns, c.ColumnSec, total)
	}
	if row := heatRowOf(c, "k150"); row < 0 || c.Rows[row].Lo != "k150" || c.Rows[row].Hi != "k150" {
		t.Errorf("the hot key shares a row: %+v", c.Rows)
	}
	if len(r.Heatmap.Rows) != results.HeatmapRows {
		t.Errorf("coarsening changed the record's heat map: %d rows", len(r.Heatmap.Rows))
	}
}

// TestMergedShardsBoundTheirKeys: shards of a run over many more keys than
// each counts at once merge into counts that still never understate, each
// within its error, the hot key first, and a distinct estimate of the keys
// all shards touched.
func TestMergedShardsBoundTheirKeys(t *testing.T) {
	const n, keys = 100_000, 50_000
	z := newZipf(keys, 0.9)
	name := func(rank int) string { return fmt.Sprintf("%08x-%d", uint32(rank)*2654435761, rank) }
	truth := map[string]int64{}
	var shards []*results.Run
	for i := range 2 {
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		r := recordAll(t, 0, 60*time.Second, n, func(j int) request {
			pk := name(z.draw(rng))
			truth[pk]++
			return request{pk: pk, at: time.Duration(j) * 60 * time.Second / n, outcome: results.OutcomeOK}
		})
		r.Shard = &results.Shard{Index: i, Count: 2, Start: r.Start}
		shards = append(shards, r)
	}
	m, err := results.MergeRuns(shards)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	p := m.Partitions
	if p.Top[0].Key != name(0) {
		t.Errorf("merged top key %s, want %s", p.Top[0].Key, name(0))
	}
	for _, k := range p.Top {
		if k.Requests < truth[k.Key] || k.Requests-k.Error > truth[k.Key] {
			t.Errorf("key %s merged to %d (error %d), but had %d requests", k.Key, k.Requests, k.Error, truth[k.Key])
		}
	}
	for key, c := range truth {
		if !slices.ContainsFunc(p.Top, func(k results.KeyLoad) bool { return k.Key == key }) && c > p.UnlistedMax {
			t.Errorf("key %s had %d requests, unlisted, above unlisted_max %d", key, c, p.UnlistedMax)
		}
	}
	if p.DistinctExact || math.Abs(float64(p.Distinct)/float64(len(truth))-1) > 0.05 {
		t.Errorf("merged distinct %d (exact %v), but the shards touched %d keys", p.Distinct, p.DistinctExact, len(truth))
	}
}
