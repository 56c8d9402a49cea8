package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// RecordError says what in a run record contradicts the rest of it: a
// field that no run of tablebench writes so, as when a record was edited,
// scaled or put together from two runs. Readers refuse such a record rather
// than draw or merge its numbers.
type RecordError struct {
	Run   string // the run's ID
	Field string // the field, as the record's JSON names it
	Msg   string
}

// Error names the run and the field, and what to do about it.
func (e *RecordError) Error() string {
	return fmt.Sprintf("run %s: %s %s: the record contradicts itself (edited, or put together from different runs); restore it or run it again", e.Run, e.Field, e.Msg)
}

// Check reports whether the record is consistent with itself, as every
// run tablebench records is: counts are not negative, the totals match the
// latency histograms' counts and the per-second intervals, the rates match
// the counts over the measured time, percentiles lie within the
// histograms' range. It is what every reader of records (merge, report,
// compare, a resumed suite) relies on, so that a record that was edited or
// mixed up is named rather than believed. Parts a record may leave out (a
// run --json record has no histograms or intervals) are checked when
// present.
func (r *Run) Check() error {
	c := &checker{r: r}
	c.identity()
	c.histograms()
	c.intervals()
	c.merged()
	c.counts()
	c.rates()
	c.ops()
	c.partitions()
	c.heatmap()
	c.rangePartitions()
	c.openLoad()
	return c.err
}

// openLoad checks an open load's schedule against the totals: its dropped
// requests are the totals', no more than were due, and, unmerged, its
// rates are its counts over the measured time.
func (c *checker) openLoad() {
	r, o := c.r, c.r.OpenLoad
	if o == nil {
		if r.Totals.Dropped != 0 {
			c.failf("totals.dropped", "is %d, but the run has no open load to drop requests of", r.Totals.Dropped)
		}
		return
	}
	switch {
	case o.Dropped != r.Totals.Dropped:
		c.failf("open_load.dropped", "is %d, but totals.dropped is %d", o.Dropped, r.Totals.Dropped)
	case o.Dropped < 0 || o.Dropped > o.Due:
		c.failf("open_load.dropped", "is %d of %d requests due", o.Dropped, o.Due)
	case len(r.MergedFrom) == 0:
		want := *o
		want.SetRates(r.MeasuredSec)
		if !near(o.IntendedPerSec, want.IntendedPerSec) || !near(o.AchievedPerSec, want.AchievedPerSec) {
			c.failf("open_load.achieved_per_sec", "is %v of %v intended, but %d due and %d dropped over %v s make %v of %v",
				o.AchievedPerSec, o.IntendedPerSec, o.Due, o.Dropped, r.MeasuredSec, want.AchievedPerSec, want.IntendedPerSec)
		}
	}
}

// ops checks each operation's part of the run: together they are the
// run's totals, each matches its own histograms, and its rates and missed
// reads match its counts.
func (c *checker) ops() {
	r := c.r
	if len(r.Ops) == 0 {
		return
	}
	var sum Counts
	for _, op := range slices.Sorted(maps.Keys(r.Ops)) {
		s := r.Ops[op]
		sum.add(&s.Counts)
		field := "ops." + op
		if s.Missed != s.Errors[OutcomeMissed] {
			c.failf(field+".missed", "is %d, but %s.errors counts %d %s", s.Missed, field, s.Errors[OutcomeMissed], OutcomeMissed)
		}
		var share float64
		if r.Totals.Entities > 0 {
			share = r.EntitiesPerSec * float64(s.Entities) / float64(r.Totals.Entities)
		}
		if !near(s.EntitiesPerSec, share) {
			c.failf(field+".entities_per_sec", "is %v, but its %d of the run's %d entities at %v/s make %v", s.EntitiesPerSec, s.Entities, r.Totals.Entities, r.EntitiesPerSec, share)
		}
		if len(r.Histograms) == 0 {
			continue
		}
		all := NewHistogram()
		byOutcome := map[string]int64{}
		for name := range r.Histograms {
			o, outcome, _ := strings.Cut(name, "/")
			if o != op || outcome == perEntityOutcome {
				continue
			}
			h, err := r.Histogram(name)
			if err != nil {
				return // histograms() names it
			}
			all.Merge(h)
			byOutcome[outcome] = h.TotalCount()
		}
		if all.TotalCount() != s.Requests {
			c.failf(field+".requests", "is %d, but its histograms hold %d requests", s.Requests, all.TotalCount())
		}
		for code, n := range byOutcome {
			if code != OutcomeOK && s.Errors[code] != n {
				c.failf(field+".errors."+code, "is %d, but its histograms hold %d such requests", s.Errors[code], n)
			}
		}
		c.percentiles(field+".latency_ms", s.LatencyMs, s.Requests, all)
	}
	t := r.Totals
	switch {
	case sum.Requests != t.Requests:
		c.failf("ops", "count %d requests in all, but totals.requests is %d", sum.Requests, t.Requests)
	case sum.Entities != t.Entities || sum.EntitiesSent != t.EntitiesSent:
		c.failf("ops", "count %d entities (%d sent) in all, but the totals are %d (%d sent)", sum.Entities, sum.EntitiesSent, t.Entities, t.EntitiesSent)
	case sum.Throttled != t.Throttled || sum.TimedOut != t.TimedOut || sum.Retries != t.Retries:
		c.failf("ops", "count %d throttled, %d timed out and %d retries in all, but the totals are %d, %d and %d", sum.Throttled, sum.TimedOut, sum.Retries, t.Throttled, t.TimedOut, t.Retries)
	}
	for _, code := range slices.Sorted(maps.Keys(t.Errors)) {
		if sum.Errors[code] != t.Errors[code] {
			c.failf("ops", "count %d %s in all, but totals.errors counts %d", sum.Errors[code], code, t.Errors[code])
		}
	}
}

// rangePartitions checks the target's range partitions: in key order from
// the start of the key space, each on a server.
func (c *checker) rangePartitions() {
	for i, p := range c.r.RangePartitions {
		f := fmt.Sprintf("range_partitions[%d]", i)
		switch {
		case i == 0 && p.Lo != "":
			c.failf(f+".lo", "is %q; the first range partition starts the key space (\"\")", p.Lo)
		case i > 0 && p.Lo <= c.r.RangePartitions[i-1].Lo:
			c.failf(f+".lo", "is %q, not after the range before it (%q): ranges are in key order", p.Lo, c.r.RangePartitions[i-1].Lo)
		case p.Server < 0:
			c.failf(f+".server", "is %d; servers are numbered from 0", p.Server)
		}
		if c.err != nil {
			return
		}
	}
}

type checker struct {
	r   *Run
	err error
}

// failf records a contradiction; a record is refused for its first.
func (c *checker) failf(field, format string, args ...any) {
	if c.err == nil {
		c.err = &RecordError{Run: c.r.ID, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (c *checker) identity() {
	r := c.r
	if r.ID == "" {
		c.err = &RecordError{Run: "(no ID)", Field: "id", Msg: "is empty"}
		return
	}
	// The spec is an archive this package does not read (readers read
	// Setup), but a record holds one.
	if spec := bytes.TrimSpace(r.Spec); !json.Valid(spec) || (spec[0] != '{' && string(spec) != "null") {
		c.failf("spec", "is missing or not a run spec")
	}
}

// nonNegative checks a count or rate: finite and not below zero.
func (c *checker) nonNegative(field string, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		c.failf(field, "is %v; it cannot be negative or infinite", v)
		return false
	}
	return true
}

func (c *checker) counts() {
	r, t := c.r, c.r.Totals
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"measured_sec", r.MeasuredSec}, {"entities_per_sec", r.EntitiesPerSec}, {"entities_sent_per_sec", r.EntitiesSentPerSec},
		{"requests_per_sec", r.RequestsPerSec}, {"billable_transactions", float64(r.Billable)}, {"throttled_pct", r.ThrottledPct},
		{"totals.requests", float64(t.Requests)}, {"totals.entities", float64(t.Entities)}, {"totals.entities_sent", float64(t.EntitiesSent)},
		{"totals.throttled", float64(t.Throttled)}, {"totals.timed_out", float64(t.TimedOut)}, {"totals.retries", float64(t.Retries)},
		{"totals.late_starts", float64(t.LateStarts)}, {"max_start_lag_ms", r.MaxStartLagMs},
		{"totals.request_units", t.RequestUnits}, {"request_units_per_sec", r.RequestUnitsPerSec},
	} {
		c.nonNegative(f.name, f.v)
	}
	var errs int64
	for _, code := range slices.Sorted(maps.Keys(t.Errors)) {
		n := t.Errors[code]
		c.nonNegative("totals.errors."+code, float64(n))
		errs += n
	}
	switch {
	case t.Entities > t.EntitiesSent:
		c.failf("totals.entities", "is %d, more than the %d entities sent (totals.entities_sent)", t.Entities, t.EntitiesSent)
	case t.Throttled+t.TimedOut > t.Requests:
		c.failf("totals.throttled", "and totals.timed_out are %d and %d, more than the %d requests", t.Throttled, t.TimedOut, t.Requests)
	case errs > t.Requests:
		c.failf("totals.errors", "count %d failed requests, more than the %d requests", errs, t.Requests)
	case t.Retries > t.Requests:
		c.failf("totals.retries", "is %d, more than the %d requests", t.Retries, t.Requests)
	case t.Errors[OutcomeThrottled]+t.Errors[OutcomeRateLimited] != t.Throttled:
		c.failf("totals.throttled", "is %d, but totals.errors counts %d %s and %d %s", t.Throttled, t.Errors[OutcomeThrottled], OutcomeThrottled, t.Errors[OutcomeRateLimited], OutcomeRateLimited)
	case t.Errors[OutcomeTimedOut] != t.TimedOut:
		c.failf("totals.timed_out", "is %d, but totals.errors counts %d %s", t.TimedOut, t.Errors[OutcomeTimedOut], OutcomeTimedOut)
	case r.Billable != t.Requests:
		c.failf("billable_transactions", "is %d, but totals.requests is %d (each request is one)", r.Billable, t.Requests)
	}
	for _, code := range slices.Sorted(maps.Keys(r.Errors)) {
		if r.Errors[code] != t.Errors[code] {
			c.failf("errors."+code, "is %d, but totals.errors counts %d", r.Errors[code], t.Errors[code])
		}
	}
	for _, code := range slices.Sorted(maps.Keys(t.Errors)) {
		if r.Errors[code] != t.Errors[code] {
			c.failf("errors."+code, "is %d, but totals.errors counts %d", r.Errors[code], t.Errors[code])
		}
	}
	want := 0.0
	if t.Requests > 0 {
		want = 100 * float64(t.Throttled+t.TimedOut) / float64(t.Requests)
	}
	if !near(r.ThrottledPct, want) {
		c.failf("throttled_pct", "is %v, but totals say %d of %d requests were throttled (%v%%)", r.ThrottledPct, t.Throttled+t.TimedOut, t.Requests, want)
	}
	c.retryAfter()
}

// retryAfter checks the retry-afters the service asked for: one at most
// for each throttled request, summarized from their histogram.
func (c *checker) retryAfter() {
	r := c.r
	if r.RetryAfterMs == nil {
		if r.RetryAfter != "" {
			c.failf("retry_after_ms", "is missing, but retry_after_hist holds a histogram")
		}
		return
	}
	if r.RetryAfterMs.Count > r.Totals.Throttled+r.Totals.TimedOut {
		c.failf("retry_after_ms.count", "is %d, more than the %d throttled requests", r.RetryAfterMs.Count, r.Totals.Throttled+r.Totals.TimedOut)
		return
	}
	h, err := r.RetryAfterHistogram()
	if err != nil || h == nil {
		c.failf("retry_after_hist", "cannot be decoded: %v", err)
		return
	}
	c.percentiles("retry_after_ms", *r.RetryAfterMs, h.TotalCount(), h)
}

// near compares a stored number with the one its counts give, allowing
// for the rounding of float arithmetic only.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))+1e-9
}

// rates checks a run's rates against its counts over its measured time. A
// merged run's are over the window every shard measured, and merged checks
// them against its intervals instead.
func (c *checker) rates() {
	r := c.r
	if len(r.MergedFrom) > 0 {
		return
	}
	for _, f := range []struct {
		name  string
		rate  float64
		count int64
		what  string
	}{
		{"entities_per_sec", r.EntitiesPerSec, r.Totals.Entities, "totals.entities"},
		{"entities_sent_per_sec", r.EntitiesSentPerSec, r.Totals.EntitiesSent, "totals.entities_sent"},
		{"requests_per_sec", r.RequestsPerSec, r.Totals.Requests, "totals.requests"},
	} {
		want := 0.0
		if r.MeasuredSec > 0 {
			want = float64(f.count) / r.MeasuredSec
		}
		if !near(f.rate, want) {
			c.failf(f.name, "is %v, but %s is %d over %v measured seconds (%v)", f.rate, f.what, f.count, r.MeasuredSec, want)
		}
	}
	want := 0.0
	if r.MeasuredSec > 0 {
		want = r.Totals.RequestUnits / r.MeasuredSec
	}
	if !near(r.RequestUnitsPerSec, want) {
		c.failf("request_units_per_sec", "is %v, but totals.request_units is %v over %v measured seconds (%v)", r.RequestUnitsPerSec, r.Totals.RequestUnits, r.MeasuredSec, want)
	}
}

// histograms checks the latency histograms against the totals and the
// latency summaries; a record without histograms has its summaries checked
// against the totals alone.
func (c *checker) histograms() {
	r, t := c.r, c.r.Totals
	var okN int64
	for _, n := range t.Errors {
		okN -= n
	}
	okN += t.Requests
	if len(r.Histograms) == 0 {
		c.percentiles("latency_ms", r.LatencyMs, t.Requests, nil)
		c.percentiles("success_latency_ms", r.SuccessLatencyMs, okN, nil)
		c.percentiles("per_entity_latency_ms", r.PerEntityMs, r.PerEntityMs.Count, nil)
		return
	}
	all, ok, perEntity := NewHistogram(), NewHistogram(), NewHistogram()
	byOutcome := map[string]int64{}
	for _, name := range slices.Sorted(maps.Keys(r.Histograms)) {
		h, err := r.Histogram(name)
		if err != nil {
			c.failf("histograms."+name, "cannot be decoded: %v", err)
			return
		}
		_, outcome, _ := strings.Cut(name, "/")
		switch outcome {
		case perEntityOutcome:
			perEntity.Merge(h)
			continue
		case OutcomeOK:
			ok.Merge(h)
		}
		all.Merge(h)
		byOutcome[outcome] += h.TotalCount()
	}
	if n := all.TotalCount(); n != t.Requests {
		c.failf("totals.requests", "is %d, but the latency histograms hold %d requests", t.Requests, n)
	}
	for _, code := range slices.Sorted(maps.Keys(t.Errors)) {
		if byOutcome[code] != t.Errors[code] {
			c.failf("totals.errors."+code, "is %d, but the latency histograms hold %d such requests", t.Errors[code], byOutcome[code])
		}
	}
	for _, code := range slices.Sorted(maps.Keys(byOutcome)) {
		if code != OutcomeOK && byOutcome[code] != t.Errors[code] {
			c.failf("totals.errors."+code, "is %d, but the latency histograms hold %d such requests", t.Errors[code], byOutcome[code])
		}
	}
	c.percentiles("latency_ms", r.LatencyMs, t.Requests, all)
	c.percentiles("success_latency_ms", r.SuccessLatencyMs, okN, ok)
	c.percentiles("per_entity_latency_ms", r.PerEntityMs, perEntity.TotalCount(), perEntity)
	if r.PerEntityMs.Count > r.SuccessLatencyMs.Count {
		c.failf("per_entity_latency_ms.count", "is %d, more than the %d successful requests", r.PerEntityMs.Count, r.SuccessLatencyMs.Count)
	}
}

// percentiles checks a latency summary: its count, its order, and, given
// the histogram it summarizes (µs), that it lies within its range.
func (c *checker) percentiles(field string, p Percentiles, count int64, h *hdr.Histogram) {
	vals := []struct {
		name string
		v    float64
	}{{"p50", p.P50}, {"p90", p.P90}, {"p95", p.P95}, {"p99", p.P99}, {"p999", p.P999}, {"max", p.Max}, {"mean", p.Mean}}
	if p.P95 == 0 && p.P90 > 0 { // a record made before p95 was summarized: it has none to check
		vals = slices.Delete(vals, 2, 3)
	}
	for _, v := range vals {
		if !c.nonNegative(field+"."+v.name, v.v) {
			return
		}
	}
	if p.Count != count {
		c.failf(field+".count", "is %d, but the record holds %d such requests", p.Count, count)
		return
	}
	for i := 1; i < len(vals)-1; i++ { // the percentiles and max, in order; not the mean
		if vals[i].v < vals[i-1].v {
			c.failf(field+"."+vals[i].name, "is %v, below %s %v", vals[i].v, vals[i-1].name, vals[i-1].v)
			return
		}
	}
	if p.Mean > p.Max*(1+1e-9) {
		c.failf(field+".mean", "is %v, above max %v", p.Mean, p.Max)
	}
	if h == nil {
		return
	}
	if h.TotalCount() == 0 {
		if p != (Percentiles{}) {
			c.failf(field, "summarizes latencies its empty histogram does not hold")
		}
		return
	}
	lo, hi := float64(h.Min())/1000, float64(h.Max())/1000
	for _, v := range vals {
		if v.v < lo*(1-1e-9) || v.v > hi*(1+1e-9) {
			c.failf(field+"."+v.name, "is %v ms, outside the %v to %v ms its histogram holds", v.v, lo, hi)
			return
		}
	}
}

// intervals checks the per-second intervals against themselves and the
// totals. Every request the totals count was recorded in a second. The
// seconds wholly inside the measured window hold more than the totals only
// by the requests in flight as the warm-up ended, at most one a thread in
// a closed loop; an open loop that fell behind may also send late the
// requests due in the warm-up.
func (c *checker) intervals() {
	r := c.r
	if len(r.Intervals) == 0 {
		return
	}
	s := r.Setup
	warmup, duration := s.Warmup, s.Duration
	first, last := int(math.Ceil(warmup.Seconds())), int(math.Floor((warmup + duration).Seconds())) // the whole measured seconds
	var all, measured Interval
	for i, iv := range r.Intervals {
		f := fmt.Sprintf("intervals[%d]", i)
		for _, v := range []struct {
			name string
			v    int64
		}{{"requests", iv.Requests}, {"entities", iv.Entities}, {"throttled", iv.Throttled}, {"errors", iv.Errors}, {"no_answer", iv.NoAnswer}} {
			c.nonNegative(f+"."+v.name, float64(v.v))
		}
		c.nonNegative(f+".p50_ms", iv.P50Ms)
		c.nonNegative(f+".p99_ms", iv.P99Ms)
		c.nonNegative(f+".request_units", iv.RequestUnits)
		switch {
		case i > 0 && iv.Second <= r.Intervals[i-1].Second:
			c.failf(f+".second", "is %d, not after the second before it (%d)", iv.Second, r.Intervals[i-1].Second)
		case iv.Throttled+iv.Errors > iv.Requests:
			c.failf(f, "counts %d throttled and %d failed of %d requests", iv.Throttled, iv.Errors, iv.Requests)
		case iv.NoAnswer > iv.Errors:
			c.failf(f+".no_answer", "is %d, more than its %d errors", iv.NoAnswer, iv.Errors)
		case iv.P99Ms < iv.P50Ms:
			c.failf(f+".p99_ms", "is %v, below its p50 %v", iv.P99Ms, iv.P50Ms)
		}
		all.Requests += iv.Requests
		all.Entities += iv.Entities
		all.Throttled += iv.Throttled
		all.RequestUnits += iv.RequestUnits
		if iv.Second >= first && iv.Second < last {
			measured.Requests += iv.Requests
			measured.Entities += iv.Entities
		}
	}
	t := r.Totals
	switch {
	case all.Requests < t.Requests:
		c.failf("totals.requests", "is %d, but the intervals hold %d requests", t.Requests, all.Requests)
	case all.Entities < t.Entities:
		c.failf("totals.entities", "is %d, but the intervals hold %d entities", t.Entities, all.Entities)
	case all.Throttled < t.Throttled+t.TimedOut:
		c.failf("totals.throttled", "is %d, but the intervals hold %d throttled requests", t.Throttled+t.TimedOut, all.Throttled)
	case all.RequestUnits < t.RequestUnits*(1-1e-9)-1e-9:
		c.failf("totals.request_units", "is %v, but the intervals hold %v request units", t.RequestUnits, all.RequestUnits)
	}
	// A merged second is the shards' seconds, each on its own clock.
	if len(r.MergedFrom) > 0 || s.VMs <= 0 || s.Threads <= 0 || duration <= 0 {
		return
	}
	slack := int64(s.VMs * s.Threads)
	if s.OpenLoop() {
		slack += int64(math.Ceil(s.Rate * warmup.Seconds()))
	}
	perRequest := int64(1)
	if s.MultiEntity() {
		perRequest = int64(max(s.BatchSize, 1))
	}
	switch {
	case measured.Requests > t.Requests+slack:
		c.failf("intervals", "hold %d requests in the measured seconds, but totals.requests is %d (at most %d more were in flight as the warm-up ended)", measured.Requests, t.Requests, slack)
	case measured.Entities > t.Entities+slack*perRequest:
		c.failf("intervals", "hold %d entities in the measured seconds, but totals.entities is %d (at most %d more were in flight as the warm-up ended)", measured.Entities, t.Entities, slack*perRequest)
	}
}

// merged checks a record merged from shards: its totals are the shards',
// and its rates those of a window of its seconds as long as its measured
// time.
func (c *checker) merged() {
	r := c.r
	if len(r.MergedFrom) == 0 || c.err != nil {
		return
	}
	var reqs int64
	for _, s := range r.MergedFrom {
		reqs += s.Requests
	}
	if reqs != r.Totals.Requests {
		c.failf("totals.requests", "is %d, but its shards (merged_from) made %d", r.Totals.Requests, reqs)
		return
	}
	if len(r.Intervals) == 0 {
		return
	}
	n := int(math.Round(r.MeasuredSec))
	if n < 1 || float64(n) != r.MeasuredSec {
		c.failf("measured_sec", "is %v; a merged run measures whole seconds", r.MeasuredSec)
		return
	}
	ents, reqsAt, rus := map[int]int64{}, map[int]int64{}, map[int]float64{}
	for _, iv := range r.Intervals {
		ents[iv.Second], reqsAt[iv.Second], rus[iv.Second] = iv.Entities, iv.Requests, iv.RequestUnits
	}
	wantE, wantR, wantU := r.EntitiesPerSec*r.MeasuredSec, r.RequestsPerSec*r.MeasuredSec, r.RequestUnitsPerSec*r.MeasuredSec
	for k := r.Intervals[0].Second; k+n <= r.Intervals[len(r.Intervals)-1].Second+1; k++ {
		var e, q int64
		var u float64
		for s := k; s < k+n; s++ {
			e, q, u = e+ents[s], q+reqsAt[s], u+rus[s]
		}
		// Request units are fractions, added in another order here.
		if near(float64(e), wantE) && near(float64(q), wantR) && math.Abs(u-wantU) <= 1e-6*math.Max(u, wantU)+1e-6 {
			return
		}
	}
	c.failf("entities_per_sec", "is %v, requests_per_sec %v and request_units_per_sec %v, but no %d-second window of its intervals holds %v entities, %v requests and %v request units", r.EntitiesPerSec, r.RequestsPerSec, r.RequestUnitsPerSec, n, wantE, wantR, wantU)
}

// Check reports whether a result set holds each run once and every run's
// record is consistent with itself (Run.Check), and whether its runs were
// made on one target at one time scale, those its settings name. (Their
// profiles may differ: an experiment may choose its own.)
func (s *Set) Check() error {
	seen := map[string]bool{}
	for i, r := range s.Runs {
		if r != nil && i > 0 && s.Runs[0] != nil {
			first := s.Runs[0]
			switch {
			case r.Env.Target != first.Env.Target:
				return fmt.Errorf("runs %s and %s ran on targets %s and %s: one set holds the runs of one target", first.ID, r.ID, first.Env.Target, r.Env.Target)
			case r.Env.TimeScale != first.Env.TimeScale:
				return fmt.Errorf("runs %s and %s ran at time scales %g and %g: one set holds the runs of one time scale", first.ID, r.ID, first.Env.TimeScale, r.Env.TimeScale)
			}
		}
		if r == nil {
			return fmt.Errorf("runs[%d] is null, not a run record", i)
		}
		if seen[r.ID] {
			return fmt.Errorf("run %s is listed twice: a result set holds one record per run", r.ID)
		}
		seen[r.ID] = true
		if err := r.Check(); err != nil {
			return err
		}
		if t := s.Settings[SettingTarget]; t != "" && r.Env.Target != "" && r.Env.Target != t {
			return fmt.Errorf("run %s ran on target %s, but the set was made with --%s %s", r.ID, r.Env.Target, SettingTarget, t)
		}
		if ts, ok := s.Settings["time-scale"]; ok && r.Env.Target == "engine" && strconv.FormatFloat(r.Env.TimeScale, 'g', -1, 64) != ts {
			return fmt.Errorf("run %s ran at time scale %g, but the set was made with --time-scale %s", r.ID, r.Env.TimeScale, ts)
		}
	}
	return nil
}

// checkHlog checks interval histograms read from path against the record
// they belong to: the log names the run (and shard) and its start, and each
// second holds as many requests as the record's interval says.
func (r *Run) checkHlog(path string, header hlogHeader, hs []*hdr.Histogram) error {
	if header.run != "" && header.run != r.hlogName() && header.run != r.ID { // an older log names the run alone

		return fmt.Errorf("%s is the interval log of run %s, not of %s: put each run's .hlog back beside its record", path, header.run, r.hlogName())
	}
	started := header.started
	if started.IsZero() && header.startSet { // an older log says it to the second
		started = time.Unix(int64(header.start), 0)
		if r.Start.Unix() == started.Unix() {
			started = time.Time{}
		}
	}
	if !started.IsZero() && started.UnixMilli() != r.Start.UnixMilli() {
		return fmt.Errorf("%s starts at %s, but run %s started at %s: it is another run's interval log", path,
			started.UTC().Format(hlogTime), r.hlogName(), r.Start.UTC().Format(hlogTime))
	}
	if len(hs) != len(r.Intervals) {
		return fmt.Errorf("%s has %d seconds, the record of run %s %d: it is another run's interval log", path, len(hs), r.hlogName(), len(r.Intervals))
	}
	for i, h := range hs {
		if n := h.TotalCount(); n != r.Intervals[i].Requests {
			return fmt.Errorf("%s holds %d requests in second %d, the record of run %s %d: it is another run's interval log", path, n, r.Intervals[i].Second, r.hlogName(), r.Intervals[i].Requests)
		}
	}
	return nil
}

// hlogName is how a run's interval log names it: its ID, and its shard for
// a shard's record, whose ID the other shards share.
func (r *Run) hlogName() string {
	if r.Shard != nil {
		return fmt.Sprintf("%s shard %d/%d", r.ID, r.Shard.Index, r.Shard.Count)
	}
	return r.ID
}

// partitions checks the hottest keys against the run's totals: no key had
// more requests than the run, the counts the keys are sure of (less their
// error) add up to no more than the run's, and the list is in order.
func (c *checker) partitions() {
	p, t := c.r.Partitions, c.r.Totals
	if p == nil || c.err != nil {
		return
	}
	if !c.nonNegative("partitions.distinct", float64(p.Distinct)) || !c.nonNegative("partitions.unlisted_max", float64(p.UnlistedMax)) {
		return
	}
	if len(p.Top) > TopKeys {
		c.failf("partitions.top", "lists %d keys; a record keeps at most %d", len(p.Top), TopKeys)
		return
	}
	throttled := t.Throttled + t.TimedOut
	var sure, sureThrottled int64
	seen := make(map[string]bool, len(p.Top))
	for i, k := range p.Top {
		f := fmt.Sprintf("partitions.top[%d]", i)
		switch {
		case k.Requests < 1 || k.Throttled < 0 || k.Error < 0:
			c.failf(f, "counts %d requests, %d throttled, error %d: a listed key has a request, and no count is negative", k.Requests, k.Throttled, k.Error)
		case k.Throttled > k.Requests:
			c.failf(f+".throttled", "is %d, more than its %d requests", k.Throttled, k.Requests)
		case k.Error > k.Requests:
			c.failf(f+".error", "is %d, more than its %d requests", k.Error, k.Requests)
		case k.Requests > t.Requests:
			c.failf(f+".requests", "is %d, more than the run's %d requests (totals.requests)", k.Requests, t.Requests)
		case k.Throttled-k.Error > throttled:
			c.failf(f+".throttled", "is %d (error %d), more than the run's %d throttled requests", k.Throttled, k.Error, throttled)
		case i > 0 && k.Requests > p.Top[i-1].Requests:
			c.failf(f+".requests", "is %d, more than the key listed before it (%d): the list is hottest first", k.Requests, p.Top[i-1].Requests)
		case seen[k.Key]:
			c.failf(f+".key", "%q is listed twice", k.Key)
		}
		seen[k.Key] = true
		sure += k.Requests - k.Error
		sureThrottled += k.Throttled - k.Error
	}
	n := int64(len(p.Top))
	switch {
	case sure > t.Requests:
		c.failf("partitions.top", "counts %d requests to its keys for sure, more than the run's %d", sure, t.Requests)
	case sureThrottled > throttled:
		c.failf("partitions.top", "counts %d throttled requests to its keys for sure, more than the run's %d", sureThrottled, throttled)
	case n > 0 && p.UnlistedMax > p.Top[n-1].Requests:
		c.failf("partitions.unlisted_max", "is %d, more than the last listed key's %d requests", p.UnlistedMax, p.Top[n-1].Requests)
	case p.DistinctExact && p.Distinct < n:
		c.failf("partitions.distinct", "is %d, fewer than the %d keys listed", p.Distinct, n)
	case p.DistinctExact && p.Distinct > t.Requests:
		c.failf("partitions.distinct", "is %d, more than the run's %d requests", p.Distinct, t.Requests)
	case p.DistinctExact && p.UnlistedMax == 0 && p.Distinct != n:
		c.failf("partitions.distinct", "is %d, but the top lists every key touched (unlisted_max is 0), and it lists %d", p.Distinct, n)
	}
}

// heatmap checks the heat map against itself and the run's seconds: its
// cells hold the requests, successes and throttled requests the intervals
// hold, column by column (on a merged run, in all: its shards' columns
// land in the merged one where they start).
func (c *checker) heatmap() {
	r, h := c.r, c.r.Heatmap
	if h == nil || c.err != nil {
		return
	}
	switch {
	case h.ColumnSec < 1 || h.ColumnSec&(h.ColumnSec-1) != 0:
		c.failf("heatmap.column_sec", "is %d; a column spans a power of two of seconds", h.ColumnSec)
	case h.Columns < 0 || h.Columns > HeatmapColumns:
		c.failf("heatmap.columns", "is %d; a heat map has 0 to %d", h.Columns, HeatmapColumns)
	case len(h.Rows) > HeatmapRows:
		c.failf("heatmap.rows", "hold %d rows; a heat map has at most %d", len(h.Rows), HeatmapRows)
	}
	if c.err != nil {
		return
	}
	cols := make([]Interval, h.Columns)
	var all Interval
	cells := func(f string, cs HeatCells) {
		for j, cell := range cs {
			fc := fmt.Sprintf("%s.cells[%d]", f, j)
			switch {
			case cell.Column < 0 || cell.Column >= h.Columns:
				c.failf(fc, "is in column %d, outside the heat map's %d columns", cell.Column, h.Columns)
			case j > 0 && cell.Column <= cs[j-1].Column:
				c.failf(fc, "is in column %d, not after the cell before it (%d)", cell.Column, cs[j-1].Column)
			case cell.Requests < 1 || cell.OK < 0 || cell.Throttled < 0 || cell.OK+cell.Throttled > cell.Requests:
				c.failf(fc, "counts %d requests, %d ok and %d throttled", cell.Requests, cell.OK, cell.Throttled)
			}
			if c.err != nil {
				return
			}
			col := &cols[cell.Column]
			failed := cell.Requests - cell.OK - cell.Throttled
			col.Requests, col.Throttled, col.Errors = col.Requests+cell.Requests, col.Throttled+cell.Throttled, col.Errors+failed
			all.Requests, all.Throttled, all.Errors = all.Requests+cell.Requests, all.Throttled+cell.Throttled, all.Errors+failed
		}
	}
	for i, row := range h.Rows {
		f := fmt.Sprintf("heatmap.rows[%d]", i)
		switch {
		case row.Lo > row.Hi:
			c.failf(f, "ends (%q) before it starts (%q)", row.Hi, row.Lo)
		case i > 0 && row.Lo <= h.Rows[i-1].Hi:
			c.failf(f, "starts at %q, not after the row before it ends (%q): rows are apart, in key order", row.Lo, h.Rows[i-1].Hi)
		}
		cells(f, row.Cells)
	}
	cells("heatmap.no_key", h.NoKey)
	if c.err != nil {
		return
	}
	if len(r.Intervals) == 0 {
		if all.Requests < r.Totals.Requests {
			c.failf("heatmap", "holds %d requests, fewer than totals.requests %d", all.Requests, r.Totals.Requests)
		}
		return
	}
	var want Interval
	wantCols := make([]Interval, h.Columns)
	for _, iv := range r.Intervals {
		want.Requests += iv.Requests
		want.Throttled += iv.Throttled
		want.Errors += iv.Errors
		if k := iv.Second - h.StartSec; k >= 0 && k/h.ColumnSec < h.Columns {
			w := &wantCols[k/h.ColumnSec]
			w.Requests += iv.Requests
			w.Throttled += iv.Throttled
			w.Errors += iv.Errors
		}
	}
	if all.Requests != want.Requests || all.Throttled != want.Throttled || all.Errors != want.Errors {
		c.failf("heatmap", "holds %d requests, %d throttled and %d failed otherwise, but the intervals %d, %d and %d", all.Requests, all.Throttled, all.Errors, want.Requests, want.Throttled, want.Errors)
		return
	}
	if len(r.MergedFrom) > 0 {
		return
	}
	for i := range cols {
		if cols[i].Requests != wantCols[i].Requests || cols[i].Throttled != wantCols[i].Throttled || cols[i].Errors != wantCols[i].Errors {
			s0 := h.StartSec + i*h.ColumnSec
			c.failf(fmt.Sprintf("heatmap column %d", i), "(seconds %d to %d) holds %d requests, %d throttled and %d failed otherwise, but the intervals %d, %d and %d",
				s0, s0+h.ColumnSec, cols[i].Requests, cols[i].Throttled, cols[i].Errors, wantCols[i].Requests, wantCols[i].Throttled, wantCols[i].Errors)
			return
		}
	}
}
