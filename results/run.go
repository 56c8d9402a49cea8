package results

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tablebench/tablebench/clock"
)

// Run is the record of one run: what was run, where, and what was measured.
// Its JSON form is the run record tablebench stores and prints with --json.
//
// Each field has one writer:
//   - the coordinator (workloads.Coordinator) writes what the run was: its
//     identity (ID, Figure, Series, X, as it was told before the run, or
//     its table's name), Spec and Setup, Env, Interrupted, Shard,
//     ClientCPUPct, Events, RangePartitions and OpenLoad; and, from its
//     checks, Warnings, Notes and Refused;
//   - Collector.Close writes what was measured: Start, MeasuredSec, the
//     rates, Totals, Billable, ThrottledPct, Errors, the latency
//     summaries, MaxStartLagMs, HarnessLagMs, Intervals, Histograms,
//     IntervalHists, Partitions and Heatmap;
//   - MergeRuns writes a new record from its shards', MergedFrom included;
//   - the command that ran it writes Thresholds, the bars its user set.
//
// Readers may load IntervalHists from the run's .hlog (ReadHlog), or drop
// the bulky parts they do not need, but change nothing else.
//
// Readers read Setup, never Spec: Spec is the spec as the run's tool wrote
// it, kept as an archive, and its form is not this package's to know.
type Run struct {
	ID     string          `json:"id"`
	Figure string          `json:"figure,omitempty"` // the figure the run belongs to
	Series string          `json:"series,omitempty"` // its series in the figure
	X      float64         `json:"x,omitempty"`      // its x value in the figure
	Spec   json.RawMessage `json:"spec"`             // the run's spec, archived as written
	Setup  RunSpec         `json:"setup"`            // what readers need of the spec
	Env    Environment     `json:"environment"`

	Start       time.Time `json:"start"` // in the target's time: model time on the engine
	MeasuredSec float64   `json:"measured_sec"`
	Interrupted bool      `json:"interrupted,omitempty"`

	EntitiesPerSec     float64          `json:"entities_per_sec"`
	EntitiesSentPerSec float64          `json:"entities_sent_per_sec"`
	RequestsPerSec     float64          `json:"requests_per_sec"`
	Billable           int64            `json:"billable_transactions"` // a batch is one; throttled requests are billed too
	ThrottledPct       float64          `json:"throttled_pct"`         // % of requests answered 503 ServerBusy, 429 RequestRateTooLarge or 500 OperationTimedOut
	Errors             map[string]int64 `json:"errors"`                // error code -> count, throttling included
	Totals             Counts           `json:"totals"`
	LatencyMs          Percentiles      `json:"latency_ms"`            // every request
	SuccessLatencyMs   Percentiles      `json:"success_latency_ms"`    // successful requests
	PerEntityMs        Percentiles      `json:"per_entity_latency_ms"` // successful requests' latency / entities
	// Ops is each operation's part of a run of a workload's mix, by the
	// operation's name; a run of one operation, as the case study's, has
	// none: its totals are its operation's.
	Ops map[string]OpStats `json:"ops,omitempty"`
	// OpenLoad is, for an open load, what became of its schedule: the
	// requests due, those dropped, and the rates intended and achieved.
	OpenLoad      *OpenLoad `json:"open_load,omitempty"`
	MaxStartLagMs float64   `json:"max_start_lag_ms,omitempty"`
	// RequestUnitsPerSec is the request units the service charged per
	// second of the measured window (Cosmos DB's x-ms-request-charge);
	// Totals.RequestUnits holds their sum. Zero when the service charges
	// none.
	RequestUnitsPerSec float64 `json:"request_units_per_sec,omitempty"`
	// RetryAfterMs summarizes how long the service's throttling answers
	// asked clients to wait (x-ms-retry-after-ms), and RetryAfter is their
	// compressed histogram in µs; absent when no answer said.
	RetryAfterMs *Percentiles `json:"retry_after_ms,omitempty"`
	RetryAfter   string       `json:"retry_after_hist,omitempty"`
	// HarnessLagMs is how late, in the target's time, threads woke to send
	// their requests: timers and scheduling on the client machine. Zero in
	// virtual time; in wall time it says whether the numbers hold.
	HarnessLagMs *Percentiles `json:"harness_lag_ms,omitempty"`
	// Warnings say why a run's numbers may not be trusted: an endpoint that
	// stopped answering, many requests without a response, a lagging
	// harness. A run without warnings has none of these.
	Warnings []string `json:"warnings,omitempty"`
	// Notes are information about what decided a run's numbers that does
	// not put them in doubt: a modelled client saturated on purpose, as the
	// case study's figures about the 2010 client mean it to be.
	Notes []string `json:"notes,omitempty"`
	// Refused marks a run whose numbers cannot stand: its harness lagged
	// more than its time scale tolerates.
	Refused bool `json:"refused,omitempty"`
	// ClientCPUPct is, per modelled VM, how busy the resource that limits
	// it was over the measured window: its serial section or its cores,
	// whichever was busier.
	ClientCPUPct []float64 `json:"client_cpu_pct,omitempty"`
	// Thresholds are the bars the run's user set (--threshold), each
	// checked against the run's numbers.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	// Shard is set on the record of one shard of a run; MergedFrom on the
	// record merged from every shard's.
	Shard      *Shard        `json:"shard,omitempty"`
	MergedFrom []ShardSource `json:"merged_from,omitempty"`

	Intervals  []Interval        `json:"intervals,omitempty"`
	Histograms map[string]string `json:"histograms,omitempty"` // "op/outcome" or "op/per-entity" -> compressed HDR (µs)
	Events     []Event           `json:"events,omitempty"`

	// Partitions are the PartitionKeys the measured requests touched: how
	// many, and the hottest. Heatmap is where every request landed in the
	// key space over time. Both are bounded whatever the number of keys.
	Partitions *Partitions `json:"partitions,omitempty"`
	Heatmap    *Heatmap    `json:"heatmap,omitempty"`
	// RangePartitions are how the target divided the run's table at its
	// end, when it says (the engine does).
	RangePartitions []RangePartition `json:"range_partitions,omitempty"`

	// IntervalHists are the per-second histograms, stored in the run's .hlog.
	IntervalHists []*hdr.Histogram `json:"-"`
}

// Environment is where a run ran.
type Environment struct {
	Tablebench string `json:"tablebench"`
	GoVersion  string `json:"go"`
	OS         string `json:"os"`
	CPUs       int    `json:"cpus"`
	Target     string `json:"target"`
	Endpoint   string `json:"endpoint,omitempty"` // with any secret removed
	Profile    string `json:"profile,omitempty"`
	// ProfileFile and ProfileSHA256 say that the profile was read from a
	// file and is not the built-in one of its name: the file as given, and
	// the hash of its parameters, which tells two files of one name apart.
	ProfileFile   string  `json:"profile_file,omitempty"`
	ProfileSHA256 string  `json:"profile_sha256,omitempty"`
	TimeScale     float64 `json:"time_scale,omitempty"`
}

// Shard says which shard of a run a record is, when the run was sharded.
type Shard struct {
	Index int `json:"index"` // from 0
	Count int `json:"count"`
	// Start is when every shard started its warm-up, in the service's time.
	Start time.Time `json:"start"`
	// SkewMs is the service's clock minus this machine's, measured from the
	// service's Date header (to about half a second), when the target has one.
	SkewMs *float64 `json:"skew_ms,omitempty"`
}

// Percentiles summarizes a latency histogram, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// Interval is one second of a run, warm-up included.
type Interval struct {
	Second    int     `json:"second"`
	Warmup    bool    `json:"warmup,omitempty"`
	Requests  int64   `json:"requests"`
	Entities  int64   `json:"entities"`
	Throttled int64   `json:"throttled"`           // 503, 429 and 500-timeout
	Errors    int64   `json:"errors"`              // other errors
	NoAnswer  int64   `json:"no_answer,omitempty"` // of the errors, requests the endpoint never answered
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	// RequestUnits are the request units charged in the second: RU/s.
	RequestUnits float64 `json:"request_units,omitempty"`
}

// Event is something the target did during a run, such as a partition split.
type Event struct {
	Second float64 `json:"second"`
	Kind   string  `json:"kind"`
	Detail string  `json:"detail"`
	// The range of PartitionKeys the event acted on, [Lo, Hi) with "" as
	// Hi for the end of the key space, and the keys a split split it at,
	// when the target says.
	Lo string   `json:"lo,omitempty"`
	Hi string   `json:"hi,omitempty"`
	At []string `json:"at,omitempty"`
}

// RangePartition is a range of a table's PartitionKeys from Lo, and the
// server that holds it. A table's ranges are listed in key order, each up
// to where the next begins: the first from "", the last to the end.
type RangePartition struct {
	Lo     string `json:"lo"`
	Server int    `json:"server"`
}

// PercentilesOf summarizes a histogram of microseconds.
func PercentilesOf(h *hdr.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	v := h.ValueAtPercentiles([]float64{50, 90, 95, 99, 99.9})
	return Percentiles{Count: h.TotalCount(), P50: ms(v[50]), P90: ms(v[90]), P95: ms(v[95]), P99: ms(v[99]), P999: ms(v[99.9]), Max: ms(h.Max()), Mean: h.Mean() / 1000}
}

// medianAndP99 are PercentilesOf(h)'s P50 and P99, all an interval
// needs, without its mean and maximum, which walk the histogram's buckets
// each: a run has an interval a second.
func medianAndP99(h *hdr.Histogram) (p50, p99 float64) {
	v := h.ValueAtPercentilesSlice([]float64{50, 99})
	return float64(v[0]) / 1000, float64(v[1]) / 1000
}

// Collector gathers a run's measurements: it makes each worker's
// Recorder, merges the seconds they hand off, and, once the workers are
// done, Close computes the run's record from them. As vegeta's Metrics,
// a consumer adds and then closes once; nothing reads a recorder but the
// collector. Its channel is buffered so that a worker's once-a-second
// hand-off does not wait.
type Collector struct {
	start, from, to time.Time     // the run's start and measured window [from, to)
	fromOff, toOff  time.Duration // the window from the start
	c               chan secDelta
	keys            histKeys
	recs            []*Recorder
	hints           []keyHint // by recorder id
	secs            map[int]*second
	hists           []histCounts // the measured window's, by histKey id
	pks             *keyCounter  // the measured window's PartitionKeys
	heat            *heatBuilder
	done            chan struct{}
	perOp           bool // see PerOperation
	// A sequential collector's (see Sequential): its recorders share the
	// chunk being filled, and chunks, of which it made so many, come back
	// emptied.
	seq     bool
	fill    *chunk
	chunks  int
	emptied chan *chunk
	// made is where new recorders come from: a simulator's thread reads
	// its recorder at every request, and one that begins on a cache line
	// is read in fewer of them (see recorders).
	made clock.Arrays[Recorder]
	// last is the second the collector added to last, and the one that
	// comes next most often.
	lastSec int
	last    *second
	// wall says that start has no monotonic clock reading, as a virtual
	// clock's times have none: a time's offset from it is then its wall
	// time's, which Offsets finds from start's Unix time, taken once.
	wall              bool
	startSec, startNs int64
}

// second is what the collector gathers of one second of a run.
type second struct {
	counts secTotals
	lat    histCounts // every request's latency
}

// secTotals are the counts of a second of a run.
type secTotals struct {
	requests, entities, throttled, errors, noAnswer int64
	requestUnits                                    float64
}

// keyHint is the number of a recorder's last key plus one (0: none),
// which its next second's requests most often share: the collector checks
// that the number is still that key's rather than look it up among every
// thread's.
type keyHint int32

// PerOperation has the run's record hold each operation's counts, rates
// and latency (Run.Ops), as a workload's mix needs. Call it before Close.
func (c *Collector) PerOperation() { c.perOp = true }

// NewCollector starts the collector of a run that starts at start and is
// measured in [from, to).
func NewCollector(start, from, to time.Time) *Collector {
	c := &Collector{start: start, from: from, to: to, fromOff: from.Sub(start), toOff: to.Sub(start),
		c: make(chan secDelta, 4096), secs: map[int]*second{},
		pks: newKeyCounter(), heat: newHeatBuilder(to.Sub(start)), done: make(chan struct{}),
		emptied: make(chan *chunk, maxChunks)}
	c.pks.renumbered = func() { clear(c.hints) }
	c.wall, c.startSec, c.startNs = start == start.Round(0), start.Unix(), int64(start.Nanosecond())
	go c.collect()
	return c
}

// collect adds the workers' seconds as they come, until Close closes the
// channel. A simulation's thousands of threads send theirs in chunks
// (see Sequential); a second on its own is a thread's in wall time.
func (c *Collector) collect() {
	defer close(c.done)
	for d := range c.c {
		if d.chunk != nil {
			c.addChunk(d.chunk)
			continue
		}
		c.add(d.rec, d.sec, &d.counts, d.buf.samples, d.buf.keys)
		d.buf.recycle(c.recs[d.rec])
	}
}

// add records a worker's second: recorder rec's counts, samples and keys
// of second sec.
func (c *Collector) add(rec int32, sec int, counts *secCounts, samples []sample, keys []keyRun) {
	s := c.last
	if s == nil || c.lastSec != sec {
		if s = c.secs[sec]; s == nil {
			s = &second{lat: newHistCounts()}
			c.secs[sec] = s
		}
		c.last, c.lastSec = s, sec
	}
	s.counts.add(counts)
	// A sample counts in the second's histogram and its key's, which
	// share a bucket; and runs of samples share their keys, whose counts
	// are found once a run.
	for len(samples) > 0 {
		key, pe := samples[0].key, samples[0].pe
		var keyLat, peLat histCounts
		if key != 0 {
			keyLat = c.hist(key)
		}
		if pe != 0 {
			peLat = c.hist(pe)
		}
		samples = samples[countRun(s.lat, keyLat, peLat, samples):]
	}
	col, h := c.heat.column(sec), &c.hints[rec]
	for _, k := range keys {
		if k.pk == "" {
			c.heat.add(col, &c.heat.noKey, k.class, int64(k.n))
			continue
		}
		id := c.pks.id(k.pk, int32(*h)-1)
		*h = keyHint(id + 1)
		c.heat.add(col, c.heat.rowOf(&c.pks.keys[id]), k.class, int64(k.n))
		if k.measured > 0 {
			c.pks.add(id, k.class == classThrottled, int64(k.measured))
		}
	}
}

// countRun counts the latencies of the samples up to the first of
// another key or per-entity key than the first's: each in lat, and in
// keyLat and peLat, the counts of their keys (nil for none). It returns
// how many it counted. It calls nothing, so that its loop keeps its
// values in registers.
func countRun(lat, keyLat, peLat histCounts, samples []sample) int {
	key, pe := samples[0].key, samples[0].pe
	for n, v := range samples {
		if v.key != key || v.pe != pe {
			return n
		}
		i := 0
		if v.us != 0 {
			i = histIndex(v.us)
			lat[i]++
			if key != 0 {
				keyLat[i]++
			}
		}
		if v.perEntity != 0 {
			if v.perEntity != v.us { // else a request of one entity, in the same bucket
				i = histIndex(v.perEntity)
			}
			peLat[i]++
		}
	}
	return len(samples)
}

// hist returns the run's histogram counts of a key.
func (c *Collector) hist(id uint32) histCounts {
	if int(id) >= len(c.hists) {
		c.hists = slices.Grow(c.hists, int(id)+1-len(c.hists))[:id+1]
	}
	h := c.hists[id]
	if h == nil {
		h = newHistCounts()
		c.hists[id] = h
	}
	return h
}

// add adds a worker's counts of a second.
func (s *secTotals) add(o *secCounts) {
	s.requests += int64(o.requests)
	s.entities += int64(o.entities)
	s.throttled += int64(o.throttled)
	s.errors += int64(o.errors)
	s.noAnswer += int64(o.noAnswer)
	s.requestUnits += o.requestUnits
}

// recorders is how many recorders a collector makes at once, in an array
// the allocator begins on a cache line, as each of them then begins: a
// recorder is whole lines.
const recorders = 128

// Recorder returns a new worker's recorder, whose live counters go to
// live. Make every recorder before the workers start, from one goroutine.
func (c *Collector) Recorder(live *Live) *Recorder {
	r := c.made.Next(recorders)
	*r = Recorder{c: c, live: live, sec: -1, id: int32(len(c.recs))}
	if c.seq {
		r.secVals, r.secKeys = r.vals0[:0], r.keys0[:0]
	} else {
		r.spare.Store(&r.own)
	}
	c.recs = append(c.recs, r)
	c.hints = append(c.hints, 0)
	return r
}

// Close ends the run at end (at most the window's end): it hands every
// recorder's last second over, waits for them all, and returns the run's
// record with what was measured: its start, per-second intervals (those
// before the measured window marked as warm-up), totals, rates, latency
// summaries and histograms. Call it once, when every worker has stopped.
func (c *Collector) Close(end time.Time) (*Run, error) {
	for _, r := range c.recs {
		r.flushSecond()
	}
	c.sendChunk()
	close(c.c)
	<-c.done
	for _, k := range c.keys.all {
		if k.past.Load() {
			c.hist(k.id)
		}
	}
	run := &Run{Start: c.start, Partitions: c.pks.record(), Heatmap: c.heat.record()}
	warmupSecs := int(c.from.Sub(c.start) / time.Second)
	// Every second of the run has its interval, those in which no request
	// completed too: a reader that met a gap would draw a line across it,
	// or leave a silent second out of a comparison's samples.
	stop := end
	if stop.After(c.to) {
		stop = c.to
	}
	last := int((stop.Sub(c.start) - 1) / time.Second)
	for sec := range c.secs {
		last = max(last, sec)
	}
	for sec := 0; sec <= last; sec++ {
		s := c.secs[sec]
		if s == nil {
			s = &second{}
		}
		h := s.lat.histogram()
		s.lat = nil // the histogram has its own counts
		p50, p99 := medianAndP99(h)
		run.Intervals = append(run.Intervals, Interval{
			Second: sec, Warmup: sec < warmupSecs, Requests: s.counts.requests, Entities: s.counts.entities,
			Throttled: s.counts.throttled, Errors: s.counts.errors, NoAnswer: s.counts.noAnswer,
			P50Ms: p50, P99Ms: p99, RequestUnits: s.counts.requestUnits,
		})
		h.SetStartTimeMs(c.start.Add(time.Duration(sec) * time.Second).UnixMilli())
		h.SetEndTimeMs(c.start.Add(time.Duration(sec+1) * time.Second).UnixMilli())
		run.IntervalHists = append(run.IntervalHists, h)
	}

	var totals Counts
	var wake, retryAfter histSum
	var lag time.Duration
	var onTime int64
	var ops map[string]Counts
	if c.perOp {
		ops = map[string]Counts{}
	}
	for _, r := range c.recs {
		r.ops(func(n *opCounts) {
			n.addTo(&totals)
			if ops != nil {
				o := ops[n.op]
				n.addTo(&o)
				ops[n.op] = o
			}
		})
		totals.RequestUnits += r.ru
		totals.Dropped += r.dropped
		lag = max(lag, r.maxLag)
		onTime += r.onTime
		if r.wake != nil {
			wake.add(r.wake)
		}
		if r.retryAfter != nil {
			retryAfter.add(r.retryAfter)
		}
	}
	hists := make(map[string]*hdr.Histogram, len(c.hists))
	for id, h := range c.hists {
		// add makes the counts of a run of samples' keys whether or not a
		// sample counts in them: a key has its histogram when one did, or
		// one was past the histograms' range.
		if h == nil {
			continue
		}
		if k := c.keys.all[id-1]; h.counted() || k.past.Load() {
			hists[k.name()] = h.histogram()
		}
	}
	if err := summarize(run, totals, hists, ops); err != nil {
		return nil, err
	}
	if retryAfter.snap != nil {
		if err := run.setRetryAfter(retryAfter.hist()); err != nil {
			return nil, err
		}
	}
	if end.After(c.to) {
		end = c.to
	}
	run.MeasuredSec = max(0, end.Sub(c.from)).Seconds()
	if s := run.MeasuredSec; s > 0 {
		run.EntitiesPerSec = float64(totals.Entities) / s
		run.EntitiesSentPerSec = float64(totals.EntitiesSent) / s
		run.RequestsPerSec = float64(totals.Requests) / s
		run.RequestUnitsPerSec = totals.RequestUnits / s
	}
	run.opRates()
	run.MaxStartLagMs = float64(lag) / float64(time.Millisecond)
	if w := wake.hist(); w.TotalCount() > 0 && w.Max() > histMin {
		w.RecordValues(histMin, onTime)
		p := PercentilesOf(w)
		run.HarnessLagMs = &p
	}
	return run, nil
}

// summarize fills the numbers a run's record derives from its counters and
// its histograms by name ("op/outcome", "op/per-entity"): totals, billable
// transactions, the throttled share, errors, the latency summaries, and
// the encoded histograms. A finished run and a run merged from its shards
// are both summarized here, so that they cannot disagree on what the
// numbers mean. Rates are not: a merged run measures them over the window
// its shards share.
//
// ops, when not nil, are each operation's counts, for the run's Ops.
func summarize(run *Run, totals Counts, hists map[string]*hdr.Histogram, ops map[string]Counts) error {
	run.Totals = totals
	run.Billable = totals.Requests
	if totals.Requests > 0 {
		run.ThrottledPct = 100 * float64(totals.Throttled+totals.TimedOut) / float64(totals.Requests)
	}
	run.Errors = map[string]int64{}
	maps.Copy(run.Errors, totals.Errors)
	var all, ok, perEntity histSum
	run.Histograms = make(map[string]string, len(hists))
	var enc hlogEncoder
	for _, name := range slices.Sorted(maps.Keys(hists)) {
		h := hists[name]
		switch histOutcome(name) {
		case perEntityOutcome:
			perEntity.add(h)
		case OutcomeOK:
			ok.add(h)
			all.add(h)
		default:
			all.add(h)
		}
		b, err := enc.encode(h)
		if err != nil {
			return fmt.Errorf("encoding histogram %s: %w", name, err)
		}
		run.Histograms[name] = string(b)
	}
	run.LatencyMs = PercentilesOf(all.hist())
	run.SuccessLatencyMs = PercentilesOf(ok.hist())
	run.PerEntityMs = PercentilesOf(perEntity.hist())
	summarizeOps(run, ops, hists)
	return nil
}

// histSum adds histograms of the one geometry NewHistogram makes, count by
// count: the library's Merge walks every bucket and records each again.
type histSum struct {
	snap *hdr.Snapshot
}

// add adds a histogram NewHistogram made.
func (s *histSum) add(h *hdr.Histogram) {
	if s.snap == nil {
		s.snap = NewHistogram().Export()
	}
	for i, c := range h.Export().Counts {
		s.snap.Counts[i] += c
	}
}

// hist returns the sum; an empty sum is an empty histogram.
func (s *histSum) hist() *hdr.Histogram {
	if s.snap == nil {
		return NewHistogram()
	}
	return hdr.Import(s.snap)
}

// Histogram decodes one of the run's stored histograms (microseconds).
func (r *Run) Histogram(name string) (*hdr.Histogram, error) {
	enc, ok := r.Histograms[name]
	if !ok {
		return nil, fmt.Errorf("run %s has no histogram %q", r.ID, name)
	}
	return hdr.Decode([]byte(enc))
}

// Merged decodes and merges the run's histograms whose names have the given
// suffix, such as "/ok" for every successful request.
func (r *Run) Merged(suffix string) *hdr.Histogram {
	h := NewHistogram()
	for _, name := range slices.Sorted(maps.Keys(r.Histograms)) {
		if strings.HasSuffix(name, suffix) {
			if x, err := r.Histogram(name); err == nil {
				h.Merge(x)
			}
		}
	}
	return h
}

// WriteHlog writes the run's per-second histograms as an HdrHistogram
// interval log.
func (r *Run) WriteHlog(w io.Writer) error {
	lw := hdr.NewHistogramLogWriter(w)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	lw.OutputComment(hlogComment + r.hlogName() + hlogStarted + r.Start.UTC().Format(hlogTime) + ": request latency in microseconds, one interval per second")
	base := r.Start.UnixMilli()
	lw.SetBaseTime(base)
	lw.OutputStartTime(base)
	lw.OutputBaseTime(base)
	lw.OutputLegend()
	var enc hlogEncoder
	for _, h := range r.IntervalHists {
		if err := enc.writeInterval(w, base, h); err != nil {
			return fmt.Errorf("writing interval log: %w", err)
		}
	}
	return nil
}

// Write writes v as indented JSON.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ReadRun reads a run record.
func ReadRun(rd io.Reader) (*Run, error) {
	var r Run
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("reading run record: %w", err)
	}
	return &r, nil
}

// SortedErrors returns the error codes of a count map, most frequent first.
func SortedErrors(m map[string]int64) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// setRetryAfter keeps h, the retry-afters the service asked for in µs, in
// the record: summarized and encoded.
func (r *Run) setRetryAfter(h *hdr.Histogram) error {
	if h == nil || h.TotalCount() == 0 {
		r.RetryAfterMs, r.RetryAfter = nil, ""
		return nil
	}
	var enc hlogEncoder
	b, err := enc.encode(h)
	if err != nil {
		return fmt.Errorf("encoding the retry-after histogram: %w", err)
	}
	p := PercentilesOf(h)
	r.RetryAfterMs, r.RetryAfter = &p, string(b)
	return nil
}

// RetryAfterHistogram decodes the record's retry-after histogram (µs);
// nil when it has none.
func (r *Run) RetryAfterHistogram() (*hdr.Histogram, error) {
	if r.RetryAfter == "" {
		return nil, nil
	}
	return hdr.Decode([]byte(r.RetryAfter))
}
