package results

import (
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tablebench/tablebench/clock"
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
// Workers add to them atomically, every eighth of a second of the run's
// time that they record requests in, and all they have left at Close:
// nothing on the request path locks.
type Live struct {
	Requests  atomic.Int64
	Entities  atomic.Int64
	Throttled atomic.Int64
	Errors    atomic.Int64
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
//
// A run holds one for each of its threads, up to hundreds of thousands,
// and records every request through one: it keeps what a request changes
// close together and small, and leaves what the run's record needs of
// counts by name (errors by code, operations by name) to Close.
type Recorder struct {
	// What a request touches comes first, within a few cache lines: a run
	// of many threads finds few of them in the cache.
	c            *Collector    // the run's start and window, and where seconds go
	sec          int           // the second being recorded, from the run's start
	secLo, secHi time.Duration // the offsets that complete in sec, [secLo, secHi): a request compares rather than divides
	secCnt       secCounts     // its counts
	secVals      []sample      // its requests' latencies
	secKeys      []keyRun      // and where they landed
	last         *histKey      // the key of the last failed request in the window, which most often the next one shares
	op           *opCounts     // and its operation's counts: op0's, or one of those after it
	maxLag       time.Duration
	// The live counters are added to every liveEvery of the run's time, of
	// the second's counts, those up to pub already added.
	liveAt time.Duration
	op0    opCounts // the first operation's counts, and the others' in a list; a thread mostly has one
	live   *Live
	pub    liveCounts
	id     int32 // the recorder's number in its collector
	// vals0 and keys0 hold a second's first requests, where secVals and
	// secKeys begin when the collector is sequential (see
	// Collector.Sequential): a thread of a large simulated client records
	// one or two a second, which its own lines then hold, and a busier
	// thread's grow onto the heap as they would.
	vals0 [2]sample
	keys0 [1]keyRun

	// spare is a buffer the collector emptied of this recorder's second,
	// for its next: a thread's seconds are alike, so that its buffers
	// keep the room they grew to. It is most often own, the recorder's
	// own: a thread in wall time that hands a second over at nearly every
	// request has a buffer that is not one more allocation to miss. A
	// sequential collector's recorders use neither.
	own   secBuf
	spare atomic.Pointer[secBuf]

	// What only some runs' requests touch: those charged request units,
	// an open load's dropped ones, wall time's wakes, and 429s.
	ru         float64 // the measured window's request units
	dropped    int64
	onTime     int64          // wakes not late by a microsecond, kept out of wake: in virtual time all are
	wake       *hdr.Histogram // how late the thread woke for each request, in target time
	retryAfter *hdr.Histogram // what the service's 429s asked to wait, in µs
	_          [40]byte       // whole cache lines, in the collector's arrays (see recorders)
}

// Warm prefetches the recorder, which its next request reads: a
// simulator calls it (through its thread's clock.Warmer) while the thread
// before this one runs. It reads nothing of the recorder, whose lines are
// still on their way: it prefetches what a simulator's request reads, up
// to the buffers that a simulator's recorders (a sequential collector's)
// never use.
func (r *Recorder) Warm() {
	clock.Prefetch(unsafe.Pointer(r), unsafe.Offsetof(r.own))
}

// Hints appends where the recorder's next request's sample and key go,
// for its thread to prefetch a step before it (clock.DeepWarmer): none
// while they are the recorder's own (vals0, keys0), which Warm warms. A
// simulator's recorders, the only ones warmed, are a sequential
// collector's, whose seconds begin in those again.
func (r *Recorder) Hints(hs []clock.Hint) []clock.Hint {
	if v := r.secVals; len(v) < cap(v) && !r.inline(v) {
		hs = append(hs, clock.Hinted(unsafe.Pointer(unsafe.SliceData(v[len(v):cap(v)])), unsafe.Sizeof(sample{})))
	}
	if k := r.secKeys; len(k) > 0 && unsafe.SliceData(k) != &r.keys0[0] {
		hs = append(hs, clock.Hinted(unsafe.Pointer(&k[len(k)-1]), unsafe.Sizeof(keyRun{})))
	}
	return hs
}

// inline reports whether v is the recorder's own vals0.
func (r *Recorder) inline(v []sample) bool { return unsafe.SliceData(v) == &r.vals0[0] }

// liveEvery is how often, in the run's time, a recorder adds to its live
// counters: often enough for a progress display, and seldom enough that
// its atomic additions, on counters its VM's threads share, cost a
// request nothing.
const liveEvery = time.Second / 8

// liveCounts are the part of a second's counts a recorder added to its
// live counters: a thread's second counts far fewer than 2^31.
type liveCounts struct{ requests, entities, throttled, errors int32 }

// publish adds the second's counts not yet added to the live counters.
func (r *Recorder) publish() {
	s, p := &r.secCnt, &r.pub
	if d := s.requests - p.requests; d != 0 {
		r.live.Requests.Add(int64(d))
	}
	if d := s.entities - p.entities; d != 0 {
		r.live.Entities.Add(int64(d))
	}
	if d := s.throttled - p.throttled; d != 0 {
		r.live.Throttled.Add(int64(d))
	}
	if d := s.errors - p.errors; d != 0 {
		r.live.Errors.Add(int64(d))
	}
	*p = liveCounts{s.requests, s.entities, s.throttled, s.errors}
}

// ops calls f with the counts of each operation in the window.
func (r *Recorder) ops(f func(*opCounts)) {
	if r.op == nil {
		return
	}
	for o := &r.op0; o != nil; o = o.next {
		f(o)
	}
}

// secCounts are what a second's interval counts of a worker's requests:
// a thread's second counts far fewer than 2^31.
type secCounts struct {
	requests, entities int32
	throttled          int32 // throttling outcomes: 503, 429 and 500-timeout
	errors, noAnswer   int32 // other errors, and of them the requests never answered
	requestUnits       float64
}

// opCounts count one operation's requests in the measured window.
type opCounts struct {
	// What a successful request touches comes first.
	op                       string
	ok                       *histKey // the operation's key for its OK outcome, the most frequent
	requests, entities, sent int64
	throttled, timedOut      int64
	retries, lateStarts      int64
	// The errors by outcome, in the order first met: the first in err0,
	// in the recorder's lines (a thread's failures mostly share one code,
	// a throttled run's ServerBusy), the others in errs.
	err0 codeCount
	errs []codeCount
	next *opCounts // the next operation's
}

// codeCount counts an error code.
type codeCount struct {
	code string
	n    int64
}

// addTo adds the operation's counts to c.
func (o *opCounts) addTo(c *Counts) {
	c.Requests += o.requests
	c.Entities += o.entities
	c.EntitiesSent += o.sent
	c.Throttled += o.throttled
	c.TimedOut += o.timedOut
	c.Retries += o.retries
	c.LateStarts += o.lateStarts
	if o.err0.n == 0 {
		return
	}
	if c.Errors == nil {
		c.Errors = map[string]int64{}
	}
	c.Errors[o.err0.code] += o.err0.n
	for _, e := range o.errs {
		c.Errors[e.code] += e.n
	}
}

// histKey names a run histogram: an operation and an outcome, or the
// operation's per-entity latency.
type histKey struct {
	op, outcome string
	// id numbers the key in its run, from 1; pe is an OK outcome's
	// per-entity key's id, else 0. Samples carry these, and no pointer,
	// so that the collector's garbage is not theirs to scan.
	id, pe uint32
	// past says that a worker left out a sample past the histograms'
	// range: the key has its histogram, empty or not, as it would have
	// had it been recorded, and refused.
	past atomic.Bool
}

// perEntityOutcome is the outcome part of a per-entity histogram's key.
const perEntityOutcome = "per-entity"

// histKeys interns a run's histogram keys, so that samples carry a
// number and the collector finds a histogram by it without hashing
// strings. Each collector has its own: workers intern concurrently, and
// nothing outlives the run.
type histKeys struct {
	m   sync.Map // struct{op, outcome string} -> *histKey
	mu  sync.Mutex
	all []*histKey // by id - 1
}

// key returns the interned key of op and outcome.
func (ks *histKeys) key(op, outcome string) *histKey {
	type name struct{ op, outcome string }
	n := name{op, outcome}
	if p, ok := ks.m.Load(n); ok {
		return p.(*histKey)
	}
	var pe uint32
	if outcome == OutcomeOK {
		pe = ks.key(op, perEntityOutcome).id
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if p, ok := ks.m.Load(n); ok {
		return p.(*histKey)
	}
	k := &histKey{op: op, outcome: outcome, id: uint32(len(ks.all) + 1), pe: pe}
	ks.all = append(ks.all, k)
	ks.m.Store(n, k)
	return k
}

// byID returns the key numbered id.
func (ks *histKeys) byID(id uint32) *histKey {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.all[id-1]
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

// inWindowAt reports whether a request due at due from the run's start
// belongs to the measured window.
func (r *Recorder) inWindowAt(due time.Duration) bool {
	return due >= r.c.fromOff && due < r.c.toOff
}

// Record records one request (one attempt) of op to PartitionKey pk ("" for
// a request of no one partition) carrying n entities that was due at due,
// completed at done, with the given outcome (OutcomeOK, a throttling
// outcome, or an error code). lag is how late it started. A request belongs
// to the measured window when it was due in it, however late it completed:
// a request in flight at the end is recorded, not lost.
func (r *Recorder) Record(op, pk string, n int, due, done time.Time, outcome string, lag time.Duration, retry bool) {
	dueOff, doneOff := r.Offsets(due, done)
	r.RecordAt(op, pk, n, dueOff, doneOff, outcome, lag, retry)
}

// Offsets returns due's and done's offsets from the run's start, as
// RecordAt takes them: Sub's, at a fraction of its cost when the start
// has no monotonic clock reading (a virtual clock's has none), their wall
// times' differences.
func (r *Recorder) Offsets(due, done time.Time) (dueOff, doneOff time.Duration) {
	c := r.c
	dueSec, doneSec := due.Unix()-c.startSec, done.Unix()-c.startSec
	if c.wall && -maxSpan < dueSec && dueSec < maxSpan && -maxSpan < doneSec && doneSec < maxSpan {
		return c.wallOffset(dueSec, due.Nanosecond()), c.wallOffset(doneSec, done.Nanosecond())
	}
	return c.offsets(due, done)
}

// offsets is Offsets the long way, by Sub.
func (c *Collector) offsets(due, done time.Time) (dueOff, doneOff time.Duration) {
	return clock.Sub(due, c.start), clock.Sub(done, c.start)
}

// maxSpan is how many seconds from the run's start a time may be for
// Offsets' shortcut: its offset in nanoseconds then fits in a Duration.
const maxSpan = 9e9

// wallOffset is the offset from the start of a time sec seconds after
// the start's second (in Unix time) and ns nanoseconds into its own.
func (c *Collector) wallOffset(sec int64, ns int) time.Duration {
	return time.Duration(sec)*time.Second + time.Duration(int64(ns)-c.startNs)
}

// RecordAt is Record with the times given from the run's start (the
// start NewCollector was given): for a caller that keeps time as a
// duration, whose requests then cost no time.Time arithmetic.
func (r *Recorder) RecordAt(op, pk string, n int, dueOff, doneOff time.Duration, outcome string, lag time.Duration, retry bool) {
	us := max((doneOff - dueOff).Microseconds(), histMin)
	ok := outcome == OutcomeOK
	class := classOK
	if !ok {
		class = classFailed
		if Throttling(outcome) {
			class = classThrottled
		}
	}
	if doneOff < r.secLo || doneOff >= r.secHi {
		r.toSecond(doneOff)
	}
	s := &r.secCnt
	s.requests++
	switch class {
	case classOK:
		s.entities += int32(n)
	case classThrottled:
		s.throttled++
	default:
		s.errors++
		if NoAnswer(outcome) {
			s.noAnswer++
		}
	}
	if doneOff >= r.liveAt {
		r.publish()
		r.liveAt = doneOff - doneOff%liveEvery + liveEvery
	}
	sm := sample{us: histValue(us)}
	measured := r.inWindowAt(dueOff)
	if measured {
		o := r.op
		if o == nil || !equalString(o.op, op) {
			o = r.opCounts(op)
		}
		o.requests++
		o.sent += int64(n)
		if ok {
			o.entities += int64(n)
		} else {
			switch outcome {
			case OutcomeThrottled, OutcomeRateLimited:
				o.throttled++
			case OutcomeTimedOut:
				o.timedOut++
			}
			o.countError(outcome)
		}
		if retry {
			o.retries++
		}
		if lag > time.Millisecond {
			o.lateStarts++
		}
		r.maxLag = max(r.maxLag, lag)
		var k *histKey
		switch {
		case ok:
			if k = o.ok; k == nil {
				k = r.c.keys.key(op, outcome)
				o.ok = k
			}
		case r.last != nil && r.last.op == op && r.last.outcome == outcome:
			k = r.last
		default:
			k = r.c.keys.key(op, outcome)
			r.last = k
		}
		sm.key = k.id
		if sm.us == 0 {
			k.past.Store(true)
		}
		if ok && n > 0 {
			sm.pe = k.pe
			pe := us // a request of one entity is most common, and a division is slow
			if n != 1 {
				pe = max(us/int64(n), histMin)
			}
			if sm.perEntity = histValue(pe); sm.perEntity == 0 {
				r.c.keys.byID(sm.pe).past.Store(true)
			}
		}
	}
	r.secVals = append(r.secVals, sm)
	if k := len(r.secKeys) - 1; k >= 0 {
		if kr := &r.secKeys[k]; kr.class == class && equalString(kr.pk, pk) {
			kr.n++
			if measured {
				kr.measured++
			}
			return
		}
	}
	kr := keyRun{pk: pk, class: class, n: 1}
	if measured {
		kr.measured = 1
	}
	r.secKeys = append(r.secKeys, kr)
}

// toSecond moves the recorder to the second a request that completed at
// done (from the run's start) completed in, handing the last over to the
// collector if it is another.
func (r *Recorder) toSecond(done time.Duration) {
	sec := int(done / time.Second)
	if sec != r.sec {
		r.flushSecond()
		r.sec = sec
	}
	// The offsets whose second, truncated as the division truncates, is
	// sec; an overflowing bound leaves the range empty, and each request
	// then comes here to divide.
	lo, hi := time.Duration(sec)*time.Second, time.Duration(sec+1)*time.Second
	switch {
	case sec == 0:
		lo = -time.Second + 1
	case sec < 0:
		lo, hi = lo-time.Second+1, lo+1
	}
	r.secLo, r.secHi = lo, hi
}

// equalString is a == b, without a call when they are the same bytes in
// memory, as a thread's operation and PartitionKey mostly are from one
// request to the next.
func equalString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// opCounts returns op's counts in the window, made on its first request.
func (r *Recorder) opCounts(op string) *opCounts {
	switch {
	case r.op == nil:
		r.op0.op = op
		r.op = &r.op0
		return r.op
	case r.op0.op == op:
		r.op = &r.op0
		return r.op
	}
	o := &r.op0
	for ; o.next != nil; o = o.next {
		if o.next.op == op {
			r.op = o.next
			return r.op
		}
	}
	o.next = &opCounts{op: op}
	r.op = o.next
	return r.op
}

// countError counts an error outcome.
func (o *opCounts) countError(code string) {
	switch {
	case o.err0.n == 0:
		o.err0 = codeCount{code, 1}
		return
	case equalString(o.err0.code, code):
		o.err0.n++
		return
	}
	for i := range o.errs {
		if o.errs[i].code == code {
			o.errs[i].n++
			return
		}
	}
	o.errs = append(o.errs, codeCount{code, 1})
}

// Charge records what the service said of the request Record last
// recorded, which was due at due: the request units it charged (0 when it
// did not say) and, for a throttled answer, how long it asked the client
// to wait (0 when it did not say). Call it right after Record.
func (r *Recorder) Charge(due time.Time, ru float64, retryAfter time.Duration) {
	if ru == 0 && retryAfter <= 0 { // inlined: most requests have nothing to say
		return
	}
	r.charge(due, ru, retryAfter)
}

// charge is Charge of something to say.
func (r *Recorder) charge(due time.Time, ru float64, retryAfter time.Duration) {
	r.ChargeAt(due.Sub(r.c.start), ru, retryAfter)
}

// ChargeAt is Charge with due given from the run's start, as RecordAt's.
func (r *Recorder) ChargeAt(due time.Duration, ru float64, retryAfter time.Duration) {
	if ru == 0 && retryAfter <= 0 {
		return
	}
	r.secCnt.requestUnits += ru
	if !r.inWindowAt(due) {
		return
	}
	r.ru += ru
	if retryAfter > 0 {
		if r.retryAfter == nil {
			r.retryAfter = NewHistogram()
		}
		r.retryAfter.RecordValue(max(retryAfter.Microseconds(), histMin))
	}
}

// Drop records an open load's request that was due at due and never sent.
func (r *Recorder) Drop(due time.Time) { r.DropAt(due.Sub(r.c.start)) }

// DropAt is Drop with due given from the run's start, as RecordAt's.
func (r *Recorder) DropAt(due time.Duration) {
	if r.inWindowAt(due) {
		r.dropped++
	}
}

func (r *Recorder) flushSecond() {
	r.publish()
	r.pub = liveCounts{}
	if r.c.seq {
		r.handSecond()
		return
	}
	if r.sec >= 0 && r.secCnt.requests > 0 {
		// The collector owns the sent slices, and returns them emptied in
		// a buffer for another second.
		b := r.spare.Swap(nil)
		if b == nil { // the collector has yet to empty one
			b = newSecBuf(len(r.secVals), len(r.secKeys))
		}
		full := secBuf{r.secVals, r.secKeys}
		r.secVals, r.secKeys = b.samples[:0], b.keys[:0]
		*b = full
		r.c.c <- secDelta{rec: r.id, sec: r.sec, counts: r.secCnt, buf: b}
	}
	r.secCnt, r.secVals, r.secKeys = secCounts{}, r.secVals[:0], r.secKeys[:0]
}

// secDelta is one worker's part of one second of a run, handed to the
// collector when the worker moves on to a later second; or, from a
// sequential collector's recorders, a chunk of many.
type secDelta struct {
	rec    int32 // the recorder's id
	sec    int
	counts secCounts
	buf    *secBuf
	chunk  *chunk // the seconds of many, and no other field
}

// secBuf holds a worker's requests of a second.
type secBuf struct {
	// samples are the latencies of every request completed in the second.
	// The collector records them, in the second's histogram and the run's:
	// a worker only appends, and a few hot histograms in one goroutine cost
	// far less than hundreds of workers' own, each written a value at a
	// time and all merged at the end.
	samples []sample
	// keys are the samples' PartitionKeys, run by run, in order.
	keys []keyRun
}

// sample is one request's latency as a worker hands it to the collector.
type sample struct {
	us        uint32 // latency in µs (histValue)
	perEntity uint32 // latency per entity in µs; 0 unless the request succeeded with entities in the window
	// The ids of the run's histograms the sample counts in (histKey): 0
	// for a request due outside the measured window, and pe for one
	// without a per-entity latency.
	key, pe uint32
}

// histValue is a latency in µs as a sample holds it: 0 for one past what
// a histogram records (2^32 µs, 71 minutes), which the collector leaves
// out as the histogram would.
func histValue(us int64) uint32 {
	if us >= 1<<32 {
		return 0
	}
	return uint32(us)
}

// keyRun is a run of consecutive samples of a second that went to one
// PartitionKey ("" for none) with one outcome class: the collector counts
// them in the heat map and, in the measured window, the hottest keys. A
// thread's requests mostly share a key, so that a run costs far less than
// a key in every sample.
type keyRun struct {
	pk          string
	n, measured int32 // the samples, and those in the measured window
	class       outcomeClass
}

// newSecBuf returns a buffer for a worker's second with room for
// somewhat more than the requests and keys of the second before, which
// the next is most often like: it need not grow from a few, request by
// request. It has room for a few at least: a thread of a large simulated
// client sends one or two a second, and its requests mostly share a key.
func newSecBuf(samples, keys int) *secBuf {
	return &secBuf{samples: make([]sample, 0, samples+samples/4+4), keys: make([]keyRun, 0, keys+keys/4+2)}
}

// recycle gives a buffer the collector is done with back to the recorder
// that sent it, emptied, and cleared of keys: a spare buffer pins no
// request's PartitionKey. A buffer grown past reason is left to the
// garbage: emptied of its arrays when it is the recorder's own, which then
// serves again as it was at first. A recorder keeps at most one spare,
// its own before any other, and so holds two buffers, as it did with a
// shared pool; from a pool, in virtual time, every thread drew at once
// when a second ended, before the collector had emptied any.
func (b *secBuf) recycle(r *Recorder) {
	own := b == &r.own
	if cap(b.samples) > 1<<16 || cap(b.keys) > 1<<16 {
		*b = secBuf{}
		if own {
			r.spare.Store(b)
		}
		return
	}
	clear(b.keys)
	b.samples, b.keys = b.samples[:0], b.keys[:0]
	if own {
		r.spare.Store(b)
	} else {
		r.spare.CompareAndSwap(nil, b) // a spare the recorder already has is its own
	}
}

// histCounts are a latency histogram's counts by bucket, in the layout of
// NewHistogram's histograms: the collector counts each sample in the
// second's histogram and its key's, and the library would find the bucket
// for each (and check it, and count the total) again. Close makes them
// histograms.
type histCounts []int64

// histHalfBits is the log2 of half a bucket's sub-buckets in
// NewHistogram's layout: 2·10^histDigits values at 1 µs resolution take
// 2^8 sub-buckets; histIndex's test holds it to the library's.
const histHalfBits = 7

// histLen is the number of NewHistogram's buckets; histIndex of every
// uint32 is below it.
var histLen = len(NewHistogram().Export().Counts)

// histShape is NewHistogram's layout, without counts.
var histShape = func() hdr.Snapshot {
	s := *NewHistogram().Export()
	s.Counts = nil
	return s
}()

func newHistCounts() histCounts { return make(histCounts, histLen) }

// histIndex is the bucket NewHistogram's histograms count v in, as the
// library computes it for a histogram of lowest value 1.
func histIndex(v uint32) int {
	b := bits.Len32(v|(1<<(histHalfBits+1)-1)) - (histHalfBits + 1)
	return b<<histHalfBits + int(v>>b)
}

// counted reports whether the counts count anything.
func (h histCounts) counted() bool {
	for _, n := range h {
		if n != 0 {
			return true
		}
	}
	return false
}

// histogram returns the histogram of the counts (nil: empty).
func (h histCounts) histogram() *hdr.Histogram {
	if h == nil {
		return NewHistogram()
	}
	s := histShape
	s.Counts = h
	return hdr.Import(&s)
}
