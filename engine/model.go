package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
)

// Call is one caller's state in the engine. A worker that issues requests in
// a loop keeps one Call, and its Client, and sets Arrival before each
// request; the engine fills Timing.
type Call struct {
	// Arrival is the model time at which the request leaves the client; zero
	// means now. A client model that spends CPU before sending sets it ahead
	// of now, and the engine still sleeps only once.
	Arrival time.Time
	// Rand, when set, is used for the request's random draws, so a caller
	// with its own seeded source gets runs that do not depend on how its
	// requests interleave with other callers'.
	Rand *rand.Rand
	// Timeout is the request's server timeout (the timeout= parameter);
	// zero or more than the profile's maximum means the maximum.
	Timeout time.Duration
	// Timing is the modelled timing of the last request.
	Timing Timing
	// Detach returns the request as soon as it is modelled, without waiting
	// until Timing.Done: the caller waits itself, and may stop waiting
	// sooner (a client timeout) while the service finishes the work.
	Detach bool

	// slot is where the caller's last PartitionKey, slotPK, sits in the
	// partition map slots: see table.lockFor.
	slots  *partitionMap
	slotPK string
	slot   int
	key    keyCache
	// plainPK is the caller's last PartitionKey that a write found plain
	// and not too long: a caller's writes mostly repeat their key, and a
	// string equal to it needs no check. (Go's strings do not change; a
	// caller that made one over memory it reuses must not keep its Call
	// across that reuse, as the REST server, with a Call a request, does not.)
	plainPK string
	// moved says that the last request found the key cache holding
	// another key than its own: a caller whose every request goes to a key
	// of its own (a new PartitionKey each time) gains nothing from
	// prefetching the last one's state (see Hints).
	moved bool
}

// keyCache is what a caller found for its last PartitionKey in a range
// partition, its budget and its rows, so that its next request there looks
// neither up: each holds while the partition's generation it was found in
// does. Forgetting a key's budget or its rows, after which another would
// be found, moves that generation on.
type keyCache struct {
	rp         *rangePartition
	pk         string
	bucket     *bucket
	rows       *pkRows
	bgen, rgen uint64
}

// keys returns c's key cache for pk in rp, emptied if it held another
// key's; nil for no caller.
func (c *Call) keys(rp *rangePartition, pk string) *keyCache {
	if c == nil {
		return nil
	}
	k := &c.key
	if k.rp != rp || !sameKey(k.pk, pk) {
		*k = keyCache{rp: rp, pk: pk}
		c.moved = true
	}
	return k
}

// sameKey reports whether a == b, comparing their bytes only when they are
// not one string: a caller's requests mostly repeat the very string of its
// last one, and == calls memequal even then.
func sameKey(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// Timing is how the model spent a request's time: Done is Arrival plus
// FrontEnd, Wait, Lane and Post.
type Timing struct {
	Arrival  time.Time     // the request left the client
	Done     time.Time     // the response was sent
	FrontEnd time.Duration // front-end stage
	Wait     time.Duration // waiting for the partition: unavailable, queued behind other requests or for a core
	Lane     time.Duration // served by the partition's lane
	Post     time.Duration // commit or read stage
	Units    float64       // entity units charged to the targets
	Charge   float64       // request units charged (the cosmos profile): x-ms-request-charge
}

// Client is the engine as one caller sees it: its operations draw the
// model's random choices from the caller's Call and leave their Timing in
// it, explicitly rather than through a context. The zero Call is valid.
//
// A write keeps the Properties slice of the entity it stores, so that
// writers that share one generated slice store it once: do not change a
// slice after writing it (build a new one), and treat the Properties of
// returned entities as read-only too. A slice written again is known by
// its array and not checked again, so a changed one would also pass
// unchecked.
type Client struct {
	e *Engine
	c *Call
}

// Client returns the engine as seen by the caller c, the one way to call
// its operations on entities; nil is a caller with no state of its own:
// the engine draws its own randomness and reports no timing.
func (e *Engine) Client(c *Call) Client { return Client{e: e, c: c} }

// opKind distinguishes the model's costs.
type opKind uint8

const (
	opWrite opKind = iota
	opRead
	opQuery
)

// bucket is a token bucket of entity units, refilled continuously.
type bucket struct {
	rate, burst, tokens float64
	last                int64 // Unix nanoseconds of the last refill; never: noTime
}

// noTime is a model time in Unix nanoseconds that is never reached: a
// bucket never refilled. Zero will not do, as a clock may start at the
// Unix epoch.
const noTime = math.MinInt64

func (b *bucket) refill(now int64) {
	if b.last == noTime {
		b.last = now
		return
	}
	if dt := time.Duration(now - b.last); dt > 0 {
		// The builtin min is math.Min's (NaN, -0) without its call.
		b.tokens = min(b.burst, b.tokens+b.rate*dt.Seconds())
		b.last = now
	}
}

func newBucket(rate float64, burst time.Duration) *bucket {
	b := new(bucket)
	b.reset(rate, burst)
	return b
}

// reset makes b a new bucket of rate and burst, full.
func (b *bucket) reset(rate float64, burst time.Duration) {
	n := rate * burst.Seconds()
	if n <= 0 {
		n = rate
	}
	*b = bucket{rate: rate, burst: n, tokens: n, last: noTime}
}

// take removes cost tokens if there are enough; now is in Unix
// nanoseconds, as are the other model times of a request's admission.
func (b *bucket) take(now int64, cost float64) bool {
	b.refill(now)
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}

// charge removes cost tokens, going into debt if need be (queries are charged
// for what they scanned, after the scan).
func (b *bucket) charge(now int64, cost float64) {
	b.refill(now)
	b.tokens -= cost
}

// server is a partition server: its cores serve the lanes of the range
// partitions it hosts. Its cores and busy time are guarded by the engine's
// stampMu; util and hot are the balancer's own.
type server struct {
	id    int
	cores []schedule
	busy  time.Duration
	util  float64 // core utilisation over the last balancer window
	hot   hotState
}

func newServer(id, cores int) *server {
	return &server{id: id, cores: make([]schedule, cores)}
}

// reserve schedules d of work of a lane on the first core free at or after
// at when the lane is free too, and returns when it starts, all in Unix
// nanoseconds. Work that could start only after deadline is not
// scheduled, and ok is false. Called with the engine's stampMu held.
func (s *server) reserve(l *schedule, at, now, deadline int64, d time.Duration) (start int64, ok bool) {
	// A core is pruned when it is searched: the search stops at the first
	// core free, and what a later search finds is the same as if every
	// core had been pruned each time, as the time pruned before only grows.
	past := now - int64(pruneMargin)
	dn := int64(d)
	st := l.fitAt(at, dn)
	cores := s.cores
	for st <= deadline {
		best, core := int64(0), (*schedule)(nil)
		for i := range cores {
			c := &cores[i]
			c.prune(past)
			if t := c.fitAt(st, dn); core == nil || t < best {
				best, core = t, c
				if t == st { // no core can start sooner: the first free one takes it
					break
				}
			}
		}
		if best == st {
			if !core.push(st, dn) {
				core.add(st, dn)
			}
			if !l.push(st, dn) {
				l.add(st, dn)
			}
			s.busy += d
			return st, true
		}
		st = l.fitAt(best, dn)
	}
	return st, false
}

// lane is a range partition's model state: its serial executor, per-key
// buckets and the statistics the balancer reads. Guarded by the partition's
// mutex.
type lane struct {
	srv              *server
	rng              *rand.Rand
	sched            schedule // the lane's busy intervals
	queue            queue    // when each request on the lane leaves it
	unavailableUntil time.Time
	buckets          map[string]*bucket // made with the first key's budget
	bucketGen        uint64             // moves on when a key's budget is forgotten: see keyCache
	win              window
	hot              hotState
	util             float64 // lane utilisation over the last balancer window
	single           bool    // holds one PartitionKey only: can never be split
}

func (l *lane) init(srv *server, rng *rand.Rand) {
	l.srv, l.rng = srv, rng
}

// window holds a partition's load since the balancer's last tick.
type window struct {
	busy                          time.Duration
	requests, throttled, timeouts int64
	units                         float64
	seen                          int64
	sample                        []keyLoad // reservoir sample of keys weighted by units
}

type keyLoad struct {
	pk    string
	units float64
}

const sampleSize = 256

func (w *window) observe(rng *rand.Rand, pk string, units float64) {
	w.requests++
	w.units += units
	w.seen++
	if len(w.sample) < sampleSize {
		w.sample = append(w.sample, keyLoad{pk, units})
	} else if j := rng.Int64N(w.seen); j < sampleSize {
		w.sample[j] = keyLoad{pk, units}
	}
}

// pruneMargin is how much past busy time a schedule keeps. A caller that
// wakes late on a loaded machine sends its request with its intended (past)
// arrival time; the schedule must still show what was busy then.
const pruneMargin = 2 * time.Second

// admission is a request admitted by a partition, waiting to be served.
// laneStart is when it joins the lane's queue; start and lane are its
// reserved service, once occupy has run. now is the clock when it was
// admitted: the partition stays locked until it is served, and in virtual
// time the clock cannot move meanwhile, so occupy need not read it again.
//
// Its times are Unix nanoseconds, as the schedules keep them: each request
// does some twenty sums and comparisons of them, which cost a fraction of
// time.Time's. The times a caller sees are rebuilt from arrival, the
// request's t0 as a time, so they keep its location; loc is that location
// when arrival has no monotonic reading, nil when it has one.
type admission struct {
	arrival                                 time.Time
	loc                                     *time.Location
	t0, t1, laneStart, deadline, start, now int64
	lane                                    time.Duration
	rng                                     *rand.Rand
	units                                   float64
}

// at returns the model time t, in Unix nanoseconds, as a time.
func (a *admission) at(t int64) time.Time {
	if a.loc != nil {
		// The same Time as arrival.Add: a time without a monotonic reading
		// is its Unix time and its location, and this costs a third of Add.
		return time.Unix(0, t).In(a.loc)
	}
	return a.arrival.Add(time.Duration(t - a.t0))
}

// lognorm is the shape of a lognormal distribution of a coefficient of
// variation, taken once: every request draws three times. It also keeps
// the logarithms of the means a request of one entity of up to 1 KiB
// draws, which most requests are.
type lognorm struct {
	cv, half, sd float64 // sd is σ, half σ²/2, for σ² = ln(1+cv²)
	means        [4]time.Duration
	logs         [4]float64 // math.Log(float64(means[i]))
	mus          [4]float64 // logs[i] - half, the μ of means[i]
}

// The kept means of the engine's draws, by what they are the mean of, for
// lognorm.drawKept: e.stage's, then e.laneDist's.
const (
	keptFEWrite = iota // the front end's stage of a write
	keptFERead
	keptPostWrite
	keptPostRead
)

const (
	keptWrite = iota // a write's time on the lane
	keptGet
)

func newLognorm(cv float64, means ...time.Duration) lognorm {
	s2 := math.Log(1 + cv*cv)
	l := lognorm{cv: cv, half: s2 / 2, sd: math.Sqrt(s2)}
	for i, m := range means[:min(len(means), len(l.means))] {
		l.means[i], l.logs[i] = m, math.Log(float64(m))
		l.mus[i] = l.logs[i] - l.half
	}
	return l
}

// draw returns a lognormal time of the given mean.
func (s *lognorm) draw(rng *rand.Rand, mean time.Duration) time.Duration {
	if mean <= 0 {
		return 0
	}
	if s.cv <= 0 {
		return mean
	}
	var lm float64
	if i := slices.Index(s.means[:], mean); i >= 0 {
		lm = s.logs[i]
	} else {
		lm = math.Log(float64(mean))
	}
	mu := lm - s.half
	return time.Duration(math.Exp(mu + s.sd*rng.NormFloat64()))
}

// drawKept is draw(rng, s.means[i]), for a caller that knows its mean is
// the kept one: it need not be searched for, and its μ is kept too.
func (s *lognorm) drawKept(rng *rand.Rand, i int) time.Duration {
	mean := s.means[i]
	if mean <= 0 {
		return 0
	}
	if s.cv <= 0 {
		return mean
	}
	return time.Duration(math.Exp(s.mus[i] + s.sd*rng.NormFloat64()))
}

func scaleDur(d time.Duration, x float64) time.Duration { return time.Duration(float64(d) * x) }

// admit runs a request through the front end and the partition's admission
// checks: account and key budgets, availability, the backlog throttle and the
// deadline, filling in a, which is zero. It is called with rp locked and,
// but for a query, which is charged after its scan, with the engine's
// stampMu held too. On refusal it returns the error and the model time at
// which the refusal is answered.
func (e *Engine) admit(a *admission, c *Call, rp *rangePartition, k opKind, pk string, units float64) (int64, *tables.Error) {
	p := &e.cfg.Profile
	// The caller's choices are made in locals and stored once, not stored
	// and stored over.
	rng := rp.rng
	if c != nil && c.Rand != nil {
		rng = c.Rand
	}
	now := e.clock.Now() // one reading: the clock is shared, and each costs its lock
	arrival := now
	if c != nil && !c.Arrival.IsZero() {
		arrival = c.Arrival
	}
	if l := arrival.Location(); arrival.In(l) == arrival { // In drops a monotonic reading
		a.loc = l
	}
	a.rng, a.units, a.arrival = rng, units, arrival
	a.now, a.t0 = now.UnixNano(), arrival.UnixNano()
	timeout := p.ServerTimeout
	if c != nil && c.Timeout > 0 && c.Timeout < timeout {
		timeout = c.Timeout
	}
	a.deadline = a.t0 + int64(timeout)
	var fe time.Duration
	switch {
	case k != opWrite:
		fe = e.stage.drawKept(a.rng, keptFERead)
	case units == 1:
		fe = e.stage.drawKept(a.rng, keptFEWrite)
	default:
		fe = e.stage.draw(a.rng, p.FEWrite+scaleDur(p.FEWriteUnit, units))
	}
	a.t1 = a.t0 + int64(fe)
	rp.win.observe(rp.rng, pk, units)

	busy := func(err *tables.Error, at int64) (int64, *tables.Error) {
		rp.win.throttled++
		return at, err
	}
	timedOut := func() (int64, *tables.Error) {
		rp.win.timeouts++
		return a.deadline, errTimedOut
	}
	if e.ru {
		if err := e.ruAdmit(rp, k, pk, a.at(a.t1), units); err != nil {
			return a.t1, err
		}
	}
	if k != opQuery { // a query is charged for what it scans, after the scan
		if err := e.budgeted(c, rp, pk, a.t1, units); err != nil {
			return busy(err, a.t1)
		}
	}
	start := a.t1
	if !rp.unavailableUntil.IsZero() {
		if until := rp.unavailableUntil.UnixNano(); start < until {
			if time.Duration(until-start) > p.HoldMax {
				if at := start + int64(p.HoldMax); at > a.deadline {
					return timedOut()
				}
				return busy(errServerBusy, start+int64(p.HoldMax))
			}
			start = until
		}
	}
	past := a.now - int64(pruneMargin)
	rp.sched.prune(past)
	rp.queue.prune(past)
	a.laneStart = rp.sched.fitAt(start, 0)
	if n := rp.queue.ahead(start); n > 0 {
		if a.rng.Float64() < math.Pow(float64(n)/float64(p.ThrottleAt), p.ThrottleExp) {
			return busy(errServerBusy, start)
		}
	}
	if a.laneStart > a.deadline { // cannot start in time even in the first gap
		return timedOut()
	}
	a.laneStart = start
	return 0, nil
}

// occupy draws an admitted request's lane service time and reserves it on
// the lane and a core of the partition's server. A request that could start
// only after its deadline is not served: it gets 500 OperationTimedOut,
// answered at the deadline. scanned is the number of entities a query
// scanned; a query is charged for them whether or not it is served. It is
// called with rp locked and the engine's stampMu held.
func (e *Engine) occupy(a *admission, rp *rangePartition, k opKind, pk string, scanned int) *tables.Error {
	p := &e.cfg.Profile
	var s time.Duration
	switch {
	case k == opRead:
		s = e.laneDist.drawKept(a.rng, keptGet)
	case k == opQuery:
		a.units = math.Max(1, float64(scanned))
		e.charged(rp, pk, a.t1, a.units)
		s = e.laneDist.draw(a.rng, p.Get+time.Duration(scanned)*p.Scan)
	case a.units == 1:
		s = e.laneDist.drawKept(a.rng, keptWrite)
	default:
		s = e.laneDist.draw(a.rng, p.WriteA+scaleDur(p.WriteB, a.units))
	}
	start, ok := rp.srv.reserve(&rp.sched, a.laneStart, a.now, a.deadline, s)
	if !ok {
		rp.win.timeouts++
		return errTimedOut
	}
	rp.win.busy += s
	if e := start + int64(s); !rp.queue.push(e) {
		rp.queue.add(e)
	}
	a.start, a.lane = start, s
	return nil
}

// keyBucket returns pk's budget in rp, made at rate if it has none, for
// caller c (nil for none).
func (rp *rangePartition) keyBucket(c *Call, pk string, rate float64, burst time.Duration) *bucket {
	k := c.keys(rp, pk)
	var b *bucket
	if k != nil && k.bucket != nil && k.bgen == rp.bucketGen {
		b = k.bucket
	} else {
		// A key with rows keeps its budget beside them: a caller whose keys
		// vary looks up the rows it will use anyway, and not the budget too.
		var g *pkRows
		if k != nil {
			g = rp.rows(c, pk)
		}
		if g != nil && g.budget != nil {
			b = g.budget
		} else {
			var ok bool
			if b, ok = rp.buckets[pk]; !ok {
				if g != nil { // nothing else holds g.own: see the balancer's tick
					b = &g.own
					b.reset(rate, burst)
				} else {
					b = newBucket(rate, burst)
				}
				rp.setBucket(pk, b)
			}
			if g != nil {
				g.budget = b
			}
		}
		if k != nil {
			k.bucket, k.bgen = b, rp.bucketGen
		}
	}
	b.retune(rate, burst)
	return b
}

// rows returns pk's rows in rp, nil if it has none, for caller c (nil for
// none).
func (rp *rangePartition) rows(c *Call, pk string) *pkRows {
	k := c.keys(rp, pk)
	if k == nil {
		return rp.data.rows(pk)
	}
	if k.rows == nil || k.rgen != rp.data.gen { // a key without rows is looked up each time
		k.rows, k.rgen = rp.data.rows(pk), rp.data.gen
	}
	return k.rows
}

// rowsFor returns pk's rows in rp, adding an empty set for a new key, for
// caller c (nil for none).
func (rp *rangePartition) rowsFor(c *Call, pk string) *pkRows {
	k := c.keys(rp, pk)
	if k == nil {
		return rp.data.rowsFor(pk)
	}
	if k.rows == nil || k.rgen != rp.data.gen {
		k.rows, k.rgen = rp.data.rowsFor(pk), rp.data.gen
	}
	return k.rows
}

// keptRows returns the rows of pk in rp that caller c keeps, nil if it
// keeps none that still hold: rowsFor's common case, written to inline.
func (rp *rangePartition) keptRows(c *Call, pk string) *pkRows {
	if c == nil {
		return nil
	}
	if k := &c.key; k.rp == rp && k.rgen == rp.data.gen && sameKey(k.pk, pk) {
		return k.rows
	}
	return nil
}

// setBucket keeps b as pk's budget.
func (l *lane) setBucket(pk string, b *bucket) {
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	l.buckets[pk] = b
}

// serve sets tm to the timing of a request whose service occupy reserved:
// its commit or read stage follows the lane.
func (e *Engine) serve(a *admission, k opKind, entities int, tm *Timing) {
	p := &e.cfg.Profile
	var post time.Duration
	switch {
	case k != opWrite:
		post = e.stage.drawKept(a.rng, keptPostRead)
	case entities == 1:
		post = e.stage.drawKept(a.rng, keptPostWrite)
	default:
		post = e.stage.draw(a.rng, p.PostWrite+time.Duration(entities)*p.PostUnit)
	}
	if p.HiccupP > 0 && a.rng.Float64() < p.HiccupP {
		post += p.HiccupMin + time.Duration(a.rng.Int64N(int64(p.HiccupMax-p.HiccupMin)+1))
	}
	// Field by field: a whole Timing was built on the stack, then copied.
	done := a.at(a.start + int64(a.lane) + int64(post))
	tm.Arrival, tm.Done = a.arrival, done
	tm.FrontEnd, tm.Wait, tm.Lane, tm.Post = time.Duration(a.t1-a.t0), time.Duration(a.start-a.t1), a.lane, post
	tm.Units, tm.Charge = a.units, 0
}

// do runs fn on the live range partition of t holding pk, through the model
// when the profile has one, and sleeps once until the modelled response time.
// fn runs at model time now, in Unix nanoseconds, and returns the number
// of entities it scanned (queries) or touched. Without the model, a point
// read, which has no use for the time, is given zero rather than the clock.
func (e *Engine) do(ctx context.Context, c *Call, t *table, pk string, k opKind, entities int, units float64, fn func(rp *rangePartition, now int64) (int, *tables.Error)) error {
	if c != nil {
		c.moved = false // until the request finds another key than the last
	}
	if !e.cfg.Profile.Model {
		if r := e.rates.Load(); r.Partition > 0 || r.Account > 0 {
			return e.doBudgeted(t, pk, k, units, fn)
		}
		read := k != opWrite
		var rp *rangePartition
		if read {
			rp = t.rlockMade(pk)
		} else {
			rp = t.lock(pk, false)
		}
		if rp == nil { // a read of a range no request has used: it holds nothing, and is not made to say so
			if _, err := fn(t.vacant(pk), 0); err != nil {
				return err
			}
			return nil
		}
		var now int64 // Unix nanoseconds; a read's fn does not read it
		var err *tables.Error
		if k != opRead || !rp.unavailableUntil.IsZero() { // a point read uses no time unless the partition was ever made unavailable
			t := e.clock.Now()
			now, err = t.UnixNano(), unavailableNow(rp, t)
		}
		if err == nil {
			_, err = fn(rp, now)
		}
		if read {
			rp.mu.RUnlock()
		} else {
			rp.mu.Unlock()
		}
		if err != nil {
			return err
		}
		return nil
	}
	// Unshared, a request takes no lock (Engine.Unshared); a caller
	// without a Call is not a simulator's thread.
	unshared := c != nil && e.unshared.Load()
	rp := t.lockFor(c, pk, unshared)
	// The account's budget and the servers' schedules are shared by every
	// partition, so they have a lock of their own, stampMu. A request takes
	// it once, from its admission to its reservation, rather than once for
	// each: an uncontended lock costs a request more than the work it
	// guards.
	if k != opQuery && !unshared {
		e.stampMu.Lock()
	}
	var a admission
	refusedAt, err := e.admit(&a, c, rp, k, pk, units)
	// A write is reserved before it is applied, so one that times out leaves
	// nothing behind; a query's service time depends on what it scans, and a
	// late query's page is dropped.
	if k != opQuery {
		if err == nil {
			err, refusedAt = e.occupy(&a, rp, k, pk, 0), a.deadline
		}
		if !unshared {
			e.stampMu.Unlock()
		}
	}
	// The timing is made where the caller keeps it: it is larger than
	// the rest of the request's state, and copying it cost as much.
	var tm *Timing
	if c != nil {
		tm = &c.Timing
	} else {
		tm = new(Timing)
	}
	served := false
	if err == nil {
		at := a.start
		if k == opQuery {
			at = a.laneStart
		}
		scanned, ferr := fn(rp, at)
		if k == opQuery {
			if !unshared {
				e.stampMu.Lock()
			}
			err, refusedAt = e.occupy(&a, rp, k, pk, scanned), a.deadline
			if !unshared {
				e.stampMu.Unlock()
			}
		}
		if err == nil {
			err = ferr
			e.serve(&a, k, entities, tm)
			served = true
		}
	}
	if !served {
		*tm = Timing{Arrival: a.arrival, Done: a.at(refusedAt), FrontEnd: time.Duration(a.t1 - a.t0), Units: units}
		if refusedAt > a.t1 {
			tm.Wait = time.Duration(refusedAt - a.t1)
		} else {
			tm.FrontEnd = time.Duration(refusedAt - a.t0)
		}
	}
	if e.ru {
		tm.Charge = e.ruCharge(rp, k, pk, a.at(a.t1), a.units, entities, err)
	}
	if !unshared {
		rp.mu.Unlock()
	}
	if c == nil || !c.Detach {
		if serr := e.clock.SleepUntil(ctx, tm.Done); serr != nil {
			return serr
		}
	}
	if err != nil {
		return err
	}
	return nil
}

// hotState tracks how long a partition or server has been hot.
type hotState struct {
	since  time.Time
	decide time.Duration
}

// Hints appends to hs where the caller's next request most often goes in
// the engine: its last key's rows and budget, and where an append to them
// writes next (the last leaf, its next slot and fingerprint, and its key
// bytes' end). It gives none after a request that went to another key
// than the one before it: such a caller's next request most often goes to
// yet another (a new PartitionKey each time, or one of many picked at
// random), and the last key's lines would only crowd out the ones it
// reads. A simulator's thread keeps them at the end of its step and
// prefetches them a step before its next (see clock.DeepWarmer), when the
// chain of pointers that leads to them is no longer in the cache.
func (c *Call) Hints(hs []clock.Hint) []clock.Hint {
	if c.moved {
		return hs
	}
	k := &c.key
	if b := k.bucket; b != nil && (k.rows == nil || b != &k.rows.own) {
		hs = append(hs, clock.Hinted(unsafe.Pointer(b), unsafe.Sizeof(bucket{})))
	}
	g := k.rows
	if g == nil {
		return hs
	}
	hs = append(hs, clock.Hinted(unsafe.Pointer(g), unsafe.Sizeof(pkRows{})))
	n := g.rows.tail
	if n == nil {
		return hs
	}
	hs = append(hs, clock.Hinted(unsafe.Pointer(n), leafHead))
	if l := len(n.slots); l < cap(n.slots) {
		hs = append(hs, clock.Hinted(unsafe.Pointer(unsafe.SliceData(n.slots[l:cap(n.slots)])), unsafe.Sizeof(slot{})))
	}
	if l := len(n.fps); l < cap(n.fps) {
		hs = append(hs, clock.Hinted(unsafe.Pointer(unsafe.SliceData(n.fps[l:cap(n.fps)])), 8))
	}
	if l := len(n.kb); l < cap(n.kb) {
		hs = append(hs, clock.Hinted(unsafe.Pointer(unsafe.SliceData(n.kb[l:cap(n.kb)])), 32))
	}
	return hs
}
