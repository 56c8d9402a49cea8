package results

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tablebench/tablebench/tables"
)

// Outcomes of a request besides an error code.
const (
	OutcomeOK        = "ok"
	OutcomeThrottled = tables.CodeServerBusy        // 503
	OutcomeTimedOut  = tables.CodeOperationTimedOut // 500
	// OutcomeRateLimited is Cosmos DB's throttling answer, 429
	// RequestRateTooLarge; it counts as throttled, beside ServerBusy.
	OutcomeRateLimited = tables.CodeRequestRateTooLarge
	// Outcomes without an answer from the endpoint.
	OutcomeTransport     = "transport"     // the connection failed
	OutcomeClientTimeout = "ClientTimeout" // the client stopped waiting
	// OutcomeNotSent is an open-loop request that was due in the measured
	// window but never sent, because its thread was still waiting for an
	// earlier answer when the run ended. Its latency counts from when it
	// was due to the end, so a stalled endpoint cannot hide in the tail.
	OutcomeNotSent = "NotSent"
)

// Throttling reports whether an outcome is the service refusing for load:
// 503 ServerBusy, 429 RequestRateTooLarge or 500 OperationTimedOut.
func Throttling(outcome string) bool {
	return outcome == OutcomeThrottled || outcome == OutcomeRateLimited || outcome == OutcomeTimedOut
}

// NoAnswer reports whether an outcome is a request the endpoint never
// answered.
func NoAnswer(outcome string) bool {
	return outcome == OutcomeTransport || outcome == OutcomeClientTimeout || outcome == OutcomeNotSent
}

// Histogram range: latencies are recorded in microseconds, from 1 µs to an
// hour, to two significant digits (1% resolution), which keeps a histogram
// near 30 KiB: a run holds one a second and one per operation and outcome.
const (
	histMin    = 1
	histMax    = int64(time.Hour / time.Microsecond)
	histDigits = 2
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(histMin, histMax, histDigits) }

// Live holds counters that a progress display reads while a run goes on.
// Workers add to them atomically; nothing on the request path locks.
type Live struct {
	Requests  atomic.Int64
	Entities  atomic.Int64
	Throttled atomic.Int64
	Errors    atomic.Int64
}

// IntervalDelta is one worker's part of one second of a run, handed to the
// collector when the worker moves on to a later second.
type IntervalDelta struct {
	Second int
	Counts Counts
	// Samples are the latencies of every request completed in the second.
	// The collector records them, in the second's histogram and the run's:
	// a worker only appends, and a few hot histograms in one goroutine cost
	// far less than hundreds of workers' own, each written a value at a
	// time and all merged at the end.
	Samples []Sample
	// Hist is the collector's histogram of the second.
	Hist *hdr.Histogram
	// keys are the samples' PartitionKeys, run by run, in order.
	keys []keyRun
}

// Sample is one request's latency as a worker hands it to the collector.
type Sample struct {
	US        int64 // latency in µs
	PerEntity int64 // latency per entity in µs; 0 unless the request succeeded with entities
	// The run's histograms the sample counts in: nil for a request due
	// outside the measured window.
	key, perEntityKey *histKey
}

// keyRun is a run of consecutive samples of a second that went to one
// PartitionKey ("" for none) with one outcome class: the collector counts
// them in the heat map and, in the measured window, the hottest keys. A
// thread's requests mostly share a key, so that a run costs far less than
// a key in every sample.
type keyRun struct {
	pk    string
	class outcomeClass
	n     int
}

// Counts are the counters of a run or of a part of it.
type Counts struct {
	Requests     int64            `json:"requests"`
	Entities     int64            `json:"entities"`      // entities written or read successfully
	EntitiesSent int64            `json:"entities_sent"` // entities in every request, refused or not
	Throttled    int64            `json:"throttled"`     // 503 ServerBusy and 429 RequestRateTooLarge
	TimedOut     int64            `json:"timed_out"`     // 500 OperationTimedOut
	Errors       map[string]int64 `json:"errors,omitempty"`
	Retries      int64            `json:"retries"`
	LateStarts   int64            `json:"late_starts"` // open loop: requests that could not start on time
	// RequestUnits are the request units the service charged (Cosmos DB's
	// x-ms-request-charge), refused requests' included.
	RequestUnits float64 `json:"request_units,omitempty"`
	// Dropped counts an open load's requests that fell due and were never
	// sent: every thread was busy (or, queued, the run ended first). They
	// are no requests: not sent, not billed, in no histogram.
	Dropped int64 `json:"dropped,omitempty"`
}

func (c *Counts) add(o *Counts) {
	c.Requests += o.Requests
	c.Entities += o.Entities
	c.EntitiesSent += o.EntitiesSent
	c.Throttled += o.Throttled
	c.TimedOut += o.TimedOut
	c.Retries += o.Retries
	c.LateStarts += o.LateStarts
	c.RequestUnits += o.RequestUnits
	c.Dropped += o.Dropped
	for k, v := range o.Errors {
		if c.Errors == nil {
			c.Errors = map[string]int64{}
		}
		c.Errors[k] += v
	}
}

// Recorder records one worker's requests. It is not safe for concurrent
// use: each worker owns one, made by Collector.Recorder, and the
// collector's Close adds them up.
type Recorder struct {
	start, from, to time.Time // run start; the measured window [from, to)
	live            *Live
	out             chan<- IntervalDelta
	keys            *histKeys

	Totals Counts
	ops    map[string]*Counts // the measured window's requests by operation
	last   *histKey           // the key of the last request in the window, which most often the next one shares
	lastPE *histKey           // and of its per-entity latency
	maxLag time.Duration
	wake   *hdr.Histogram // how late the thread woke for each request, in target time
	onTime int64          // wakes not late by a microsecond, kept out of wake: in virtual time all are

	sec     int
	secCnt  Counts
	secVals []Sample

	retryAfter *hdr.Histogram // what the service's 429s asked to wait, in µs
	secKeys    []keyRun
}

// histKey names a run histogram: an operation and an outcome, or the
// operation's per-entity latency.
type histKey struct{ op, outcome string }

// perEntityOutcome is the outcome part of a per-entity histogram's key.
const perEntityOutcome = "per-entity"

// histKeys interns a run's histogram keys, so that samples carry a
// pointer and the collector finds a histogram by it without hashing
// strings. Each collector has its own: workers intern concurrently, and
// nothing outlives the run.
type histKeys struct{ m sync.Map } // histKey -> *histKey

// key returns the interned key of op and outcome.
func (ks *histKeys) key(op, outcome string) *histKey {
	k := histKey{op, outcome}
	if p, ok := ks.m.Load(k); ok {
		return p.(*histKey)
	}
	p, _ := ks.m.LoadOrStore(k, &k)
	return p.(*histKey)
}

// name is the key's name in a record's histograms: "op/outcome".
func (k *histKey) name() string { return histName(k.op, k.outcome) }

// histName names a run histogram: "op/outcome", or "op/per-entity" for the
// operation's latency per entity.
func histName(op, outcome string) string { return op + "/" + outcome }

// histOutcome is the outcome part of a histogram's name.
func histOutcome(name string) string {
	i := strings.LastIndexByte(name, '/')
	return name[i+1:]
}

// Wake records how late, past its schedule, the thread woke to send a
// request: the harness's own lag (timers, scheduling), zero in virtual
// time.
func (r *Recorder) Wake(late time.Duration) {
	if late < time.Microsecond {
		r.onTime++
		return
	}
	if r.wake == nil {
		r.wake = NewHistogram()
	}
	r.wake.RecordValue(late.Microseconds() + histMin)
}

// Record records one request (one attempt) of op to PartitionKey pk ("" for
// a request of no one partition) carrying n entities that was due at due,
// completed at done, with the given outcome (OutcomeOK, a throttling
// outcome, or an error code). lag is how late it started. A request belongs
// to the measured window when it was due in it, however late it completed:
// a request in flight at the end is recorded, not lost.
func (r *Recorder) Record(op, pk string, n int, due, done time.Time, outcome string, lag time.Duration, retry bool) {
	lat := done.Sub(due)
	us := max(lat.Microseconds(), histMin)
	ok := outcome == OutcomeOK
	r.live.Requests.Add(1)
	switch {
	case ok:
		r.live.Entities.Add(int64(n))
	case Throttling(outcome):
		r.live.Throttled.Add(1)
	default:
		r.live.Errors.Add(1)
	}
	if sec := int(done.Sub(r.start) / time.Second); sec != r.sec {
		r.flushSecond()
		r.sec = sec
	}
	count(&r.secCnt, n, outcome, lag, retry)
	class := classOf(outcome)
	if k := len(r.secKeys) - 1; k >= 0 && r.secKeys[k].pk == pk && r.secKeys[k].class == class {
		r.secKeys[k].n++
	} else {
		r.secKeys = append(r.secKeys, keyRun{pk: pk, class: class, n: 1})
	}
	sm := Sample{US: us}
	if !due.Before(r.from) && due.Before(r.to) {
		count(&r.Totals, n, outcome, lag, retry)
		oc := r.ops[op]
		if oc == nil {
			if r.ops == nil {
				r.ops = map[string]*Counts{}
			}
			oc = &Counts{}
			r.ops[op] = oc
		}
		count(oc, n, outcome, lag, retry)
		r.maxLag = max(r.maxLag, lag)
		if r.last == nil || r.last.op != op || r.last.outcome != outcome {
			r.last = r.keys.key(op, outcome)
		}
		sm.key = r.last
		if ok && n > 0 {
			if r.lastPE == nil || r.lastPE.op != op {
				r.lastPE = r.keys.key(op, perEntityOutcome)
			}
			sm.PerEntity, sm.perEntityKey = max(us/int64(n), histMin), r.lastPE
		}
	}
	r.secVals = append(r.secVals, sm)
}

// Charge records what the service said of the request Record last
// recorded, which was due at due: the request units it charged (0 when it
// did not say) and, for a throttled answer, how long it asked the client
// to wait (0 when it did not say). Call it right after Record.
func (r *Recorder) Charge(due time.Time, ru float64, retryAfter time.Duration) {
	r.secCnt.RequestUnits += ru
	if due.Before(r.from) || !due.Before(r.to) {
		return
	}
	r.Totals.RequestUnits += ru
	if retryAfter > 0 {
		if r.retryAfter == nil {
			r.retryAfter = NewHistogram()
		}
		r.retryAfter.RecordValue(max(retryAfter.Microseconds(), histMin))
	}
}

// Drop records an open load's request that was due at due and never sent.
func (r *Recorder) Drop(due time.Time) {
	if !due.Before(r.from) && due.Before(r.to) {
		r.Totals.Dropped++
	}
}

func count(c *Counts, n int, outcome string, lag time.Duration, retry bool) {
	c.Requests++
	c.EntitiesSent += int64(n)
	switch outcome {
	case OutcomeOK:
		c.Entities += int64(n)
	case OutcomeThrottled, OutcomeRateLimited:
		c.Throttled++
	case OutcomeTimedOut:
		c.TimedOut++
	}
	if outcome != OutcomeOK {
		if c.Errors == nil {
			c.Errors = map[string]int64{}
		}
		c.Errors[outcome]++
	}
	if retry {
		c.Retries++
	}
	if lag > time.Millisecond {
		c.LateStarts++
	}
}

func (r *Recorder) flushSecond() {
	if r.sec >= 0 && r.secCnt.Requests > 0 {
		r.out <- IntervalDelta{Second: r.sec, Counts: r.secCnt, Samples: r.secVals, keys: r.secKeys}
		r.secVals, r.secKeys = newSamples(), newKeyRuns() // the collector owns the sent ones, and returns them to the pools
	}
	r.secCnt, r.secVals, r.secKeys = Counts{}, r.secVals[:0], r.secKeys[:0]
}

// samples are sample slices: a worker hands one to the collector every
// second of a run, which returns it when recorded.
var samples = sync.Pool{New: func() any { return new([]Sample) }}

func newSamples() []Sample { return (*samples.Get().(*[]Sample))[:0] }

func putSamples(s []Sample) {
	if cap(s) <= 1<<16 {
		samples.Put(&s)
	}
}

// keyRuns are key run slices, handed to the collector and returned as
// samples are.
var keyRuns = sync.Pool{New: func() any { return new([]keyRun) }}

func newKeyRuns() []keyRun { return (*keyRuns.Get().(*[]keyRun))[:0] }

// putKeyRuns returns a slice to the pool, cleared: a pooled slice pins no
// request's PartitionKey.
func putKeyRuns(s []keyRun) {
	if cap(s) <= 1<<16 {
		clear(s)
		keyRuns.Put(&s)
	}
}
