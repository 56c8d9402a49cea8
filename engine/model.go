package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Profile holds the parameters of the performance model. Durations are model
// time. The lane of a range partition serves one request at a time at a cost
// of WriteA + WriteB·units for a write, Get for a point read and
// Get + Scan·scanned for a query; the front-end and commit stages around it run
// in parallel.
type Profile struct {
	Name  string
	Model bool // false: no latency, no throttling

	AccountRate      float64       // entity units per second for the account
	AccountBurst     time.Duration // how much of its rate the account's budget can save up
	PartitionKeyRate float64       // entity units per second for one PartitionKey
	Burst            time.Duration // how much of its rate a key's budget can save up

	WriteA, WriteB time.Duration // lane cost of a write: a + b·units
	Get            time.Duration // lane cost of a point read
	Scan           time.Duration // lane cost per entity a query scans
	ScanLimit      time.Duration // a query page stops after this much scanning

	ThrottleAt  int     // θ: requests queued at a lane at which every request is throttled
	ThrottleExp float64 // k: throttle probability is (queued/θ)^k

	FEWrite, FEWriteUnit time.Duration // front-end stage of a write: fe0 + fe1·units
	FERead               time.Duration
	PostWrite, PostUnit  time.Duration // commit stage of a write: post0 + post1·entities
	PostRead             time.Duration
	CV, LaneCV           float64 // coefficient of variation of the stage and lane draws

	HiccupP              float64 // probability that a request's commit stage stalls
	HiccupMin, HiccupMax time.Duration

	Servers, ServerCores int
	ServerTimeout        time.Duration // the longest a request may take; 500 OperationTimedOut past it
	HoldMax              time.Duration // how long a request waits for an unavailable partition
	SplitPauseMin        time.Duration
	SplitPauseMax        time.Duration
	MoveMin, MoveMax     time.Duration // how long a moved partition is unavailable
}

// WA2010 returns the profile calibrated to the 2010 case study: a single
// PartitionKey serves ~1,000 single inserts/s (its lane) and ~2,500 batched
// entities/s (its budget), an unloaded get takes ~30 ms and an insert ~35 ms
// at the server.
//
// The key budget's rate and burst and the front end's cost per batched
// entity were fitted in virtual time against Figures 4, 7, 10 and 15
// together, with the client model of workloads/vm, over several seeds. Under
// a rate cap and the 3 s pause, the throttled shares at 30 and 50 threads of
// Figure 15 move together: a lower rate raises both. A larger burst lowers
// the 20-thread share, which the case study puts at almost none. 2,450/s with
// a 500 ms burst gives ~1.6%, ~10% and ~25% at 20, 30 and 50 threads (11% and
// 22% were published); a cheaper front end shortens batches until an XL
// VM's client saturates by 15 threads (against Figure 10).
func WA2010() Profile {
	return Profile{
		Name: "wa2010", Model: true,
		AccountRate: 20000, AccountBurst: time.Second, PartitionKeyRate: 2450, Burst: 500 * time.Millisecond,
		WriteA: 650 * time.Microsecond, WriteB: 350 * time.Microsecond,
		Get: 500 * time.Microsecond, Scan: 50 * time.Microsecond, ScanLimit: 5 * time.Second,
		ThrottleAt: 1330, ThrottleExp: 3.2,
		FEWrite: 20 * time.Millisecond, FEWriteUnit: 5500 * time.Microsecond, FERead: 20 * time.Millisecond,
		PostWrite: 10 * time.Millisecond, PostUnit: 700 * time.Microsecond, PostRead: 8 * time.Millisecond,
		CV: 0.25, LaneCV: 0.5,
		HiccupP: 0.001, HiccupMin: 100 * time.Millisecond, HiccupMax: time.Second,
		Servers: 16, ServerCores: 4,
		ServerTimeout: 30 * time.Second, HoldMax: 3 * time.Second,
		SplitPauseMin: 200 * time.Millisecond, SplitPauseMax: time.Second,
		MoveMin: 10 * time.Second, MoveMax: 20 * time.Second,
	}
}

// SteadySplit is the number of range partitions a table is pre-split into
// to stand for the steady state the case study measured after its warm-up:
// one per core of every server. A lane serves one request at a time, so
// fewer range partitions than cores would leave cores idle while lanes
// queue, which the load balancer would have split away.
func (p Profile) SteadySplit() int { return max(p.Servers*p.ServerCores, 1) }

// Modern returns a profile of today's service: 2,000 entities/s per
// PartitionKey, 20,000 per account, single-digit-millisecond latency.
func Modern() Profile {
	return Profile{
		Name: "modern", Model: true,
		AccountRate: 20000, AccountBurst: time.Second, PartitionKeyRate: 2000, Burst: time.Second,
		WriteA: 250 * time.Microsecond, WriteB: 250 * time.Microsecond,
		Get: 250 * time.Microsecond, Scan: 20 * time.Microsecond, ScanLimit: 5 * time.Second,
		ThrottleAt: 2660, ThrottleExp: 3.2,
		FEWrite: time.Millisecond, FEWriteUnit: 20 * time.Microsecond, FERead: time.Millisecond,
		PostWrite: 5 * time.Millisecond, PostUnit: 20 * time.Microsecond, PostRead: 2 * time.Millisecond,
		CV: 0.5, LaneCV: 0.5,
		HiccupP: 0.0005, HiccupMin: 20 * time.Millisecond, HiccupMax: 200 * time.Millisecond,
		Servers: 16, ServerCores: 8,
		ServerTimeout: 30 * time.Second, HoldMax: 3 * time.Second,
		SplitPauseMin: 200 * time.Millisecond, SplitPauseMax: time.Second,
		MoveMin: time.Second, MoveMax: 5 * time.Second,
	}
}

// None returns the raw engine's profile: no latency, no throttling, no load
// balancing.
func None() Profile { return Profile{Name: "none", Servers: 16, ServerCores: 4} }

// ProfileNames lists the profiles ProfileByName knows.
func ProfileNames() []string { return []string{"wa2010", "modern", "none"} }

// ProfileByName returns the named profile.
func ProfileByName(name string) (Profile, error) {
	switch name {
	case "wa2010":
		return WA2010(), nil
	case "modern":
		return Modern(), nil
	case "none":
		return None(), nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q: use wa2010, modern or none", name)
}

func (p *Profile) validate() error {
	if p.Servers < 0 || p.ServerCores < 0 {
		return fmt.Errorf("engine: profile %q: servers and cores must not be negative", p.Name)
	}
	if !p.Model {
		return nil
	}
	if p.AccountRate <= 0 || p.PartitionKeyRate <= 0 || p.ThrottleAt <= 0 || p.ServerTimeout <= 0 {
		return fmt.Errorf("engine: profile %q: rates, throttle threshold and server timeout must be positive", p.Name)
	}
	return nil
}

// Call carries one caller's request context into the engine. A worker that
// issues requests in a loop keeps one Call in its context (WithCall) and sets
// Arrival before each request; the engine fills Timing.
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
}

// Timing is how the model spent a request's time.
type Timing struct {
	Arrival  time.Time     // the request left the client
	Done     time.Time     // the response was sent
	FrontEnd time.Duration // front-end stage
	Wait     time.Duration // waiting for the partition: unavailable, queued behind other requests or for a core
	Lane     time.Duration // served by the partition's lane
	Post     time.Duration // commit or read stage
	Units    float64       // entity units charged to the targets
}

type callKey struct{}

// WithCall returns a context that carries c into the engine's operations.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

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
	last                time.Time
}

func (b *bucket) refill(now time.Time) {
	if b.last.IsZero() {
		b.last = now
		return
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = math.Min(b.burst, b.tokens+b.rate*dt.Seconds())
		b.last = now
	}
}

func newBucket(rate float64, burst time.Duration) *bucket {
	b := rate * burst.Seconds()
	if b <= 0 {
		b = rate
	}
	return &bucket{rate: rate, burst: b, tokens: b}
}

// take removes cost tokens if there are enough.
func (b *bucket) take(now time.Time, cost float64) bool {
	b.refill(now)
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}

// charge removes cost tokens, going into debt if need be (queries are charged
// for what they scanned, after the scan).
func (b *bucket) charge(now time.Time, cost float64) {
	b.refill(now)
	b.tokens -= cost
}

// server is a partition server: its cores serve the lanes of the range
// partitions it hosts.
type server struct {
	id    int
	mu    sync.Mutex
	cores []schedule
	busy  time.Duration
	util  float64 // core utilisation over the last balancer window
	hot   hotState
}

func newServer(id, cores int) *server {
	return &server{id: id, cores: make([]schedule, cores)}
}

// reserve schedules d of work of a lane on the first core free at or after
// at when the lane is free too, and returns when it starts. Work that could
// start only after deadline is not scheduled, and ok is false.
func (s *server) reserve(l *schedule, at, now, deadline time.Time, d time.Duration) (start time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start = l.fit(at, d)
	for !start.After(deadline) {
		best, core := time.Time{}, -1
		for i := range s.cores {
			s.cores[i].prune(now.Add(-pruneMargin))
			if t := s.cores[i].fit(start, d); core < 0 || t.Before(best) {
				best, core = t, i
			}
		}
		if best.Equal(start) {
			s.cores[core].add(start, d)
			l.add(start, d)
			s.busy += d
			return start, true
		}
		start = l.fit(best, d)
	}
	return start, false
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
	buckets          map[string]*bucket
	win              window
	hot              hotState
	util             float64 // lane utilisation over the last balancer window
	single           bool    // holds one PartitionKey only: can never be split
}

func (l *lane) init(srv *server, rng *rand.Rand) {
	l.srv, l.rng, l.buckets = srv, rng, map[string]*bucket{}
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
// reserved service, once occupy has run.
type admission struct {
	t0, t1, laneStart, deadline, start time.Time
	lane                               time.Duration
	rng                                *rand.Rand
	units                              float64
}

func lognormal(rng *rand.Rand, mean time.Duration, cv float64) time.Duration {
	if mean <= 0 {
		return 0
	}
	if cv <= 0 {
		return mean
	}
	s2 := math.Log(1 + cv*cv)
	mu := math.Log(float64(mean)) - s2/2
	return time.Duration(math.Exp(mu + math.Sqrt(s2)*rng.NormFloat64()))
}

func scaleDur(d time.Duration, x float64) time.Duration { return time.Duration(float64(d) * x) }

// admit runs a request through the front end and the partition's admission
// checks: account and key budgets, availability, the backlog throttle and the
// deadline. It is called with rp locked. On refusal it returns the error and
// the model time at which the refusal is answered.
func (e *Engine) admit(c *Call, rp *rangePartition, k opKind, pk string, units float64) (admission, time.Time, *Error) {
	p := &e.cfg.Profile
	a := admission{rng: rp.rng, units: units}
	if c != nil && c.Rand != nil {
		a.rng = c.Rand
	}
	a.t0 = e.clock.Now()
	if c != nil && !c.Arrival.IsZero() {
		a.t0 = c.Arrival
	}
	timeout := p.ServerTimeout
	if c != nil && c.Timeout > 0 && c.Timeout < timeout {
		timeout = c.Timeout
	}
	a.deadline = a.t0.Add(timeout)
	var fe time.Duration
	if k == opWrite {
		fe = lognormal(a.rng, p.FEWrite+scaleDur(p.FEWriteUnit, units), p.CV)
	} else {
		fe = lognormal(a.rng, p.FERead, p.CV)
	}
	a.t1 = a.t0.Add(fe)
	rp.win.observe(rp.rng, pk, units)

	busy := func(msg string, at time.Time) (admission, time.Time, *Error) {
		rp.win.throttled++
		return a, at, newError(http.StatusServiceUnavailable, CodeServerBusy, msg)
	}
	timedOut := func() (admission, time.Time, *Error) {
		rp.win.timeouts++
		return a, a.deadline, newError(http.StatusInternalServerError, CodeOperationTimedOut, MsgTimedOut)
	}
	if k != opQuery { // a query is charged for what it scans, after the scan
		e.acctMu.Lock()
		ok := e.acct.take(a.t1, units)
		e.acctMu.Unlock()
		if !ok {
			return busy(MsgAccountOverLimit, a.t1)
		}
		if !rp.keyBucket(pk, p.PartitionKeyRate, p.Burst).take(a.t1, units) {
			return busy(MsgServerBusy, a.t1)
		}
	}
	start := a.t1
	if start.Before(rp.unavailableUntil) {
		if rp.unavailableUntil.Sub(start) > p.HoldMax {
			if at := start.Add(p.HoldMax); at.After(a.deadline) {
				return timedOut()
			}
			return busy(MsgServerBusy, start.Add(p.HoldMax))
		}
		start = rp.unavailableUntil
	}
	rp.sched.prune(e.clock.Now().Add(-pruneMargin))
	rp.queue.prune(e.clock.Now().Add(-pruneMargin))
	a.laneStart = rp.sched.fit(start, 0)
	if n := rp.queue.ahead(start); n > 0 {
		if a.rng.Float64() < math.Pow(float64(n)/float64(p.ThrottleAt), p.ThrottleExp) {
			return busy(MsgServerBusy, start)
		}
	}
	if a.laneStart.After(a.deadline) { // cannot start in time even in the first gap
		return timedOut()
	}
	a.laneStart = start
	return a, time.Time{}, nil
}

// occupy draws an admitted request's lane service time and reserves it on
// the lane and a core of the partition's server. A request that could start
// only after its deadline is not served: it gets 500 OperationTimedOut,
// answered at the deadline. scanned is the number of entities a query
// scanned; a query is charged for them whether or not it is served.
func (e *Engine) occupy(a *admission, rp *rangePartition, k opKind, pk string, scanned int) *Error {
	p := &e.cfg.Profile
	var mean time.Duration
	switch k {
	case opWrite:
		mean = p.WriteA + scaleDur(p.WriteB, a.units)
	case opRead:
		mean = p.Get
	case opQuery:
		mean = p.Get + time.Duration(scanned)*p.Scan
		a.units = math.Max(1, float64(scanned))
		e.acctMu.Lock()
		e.acct.charge(a.t1, a.units)
		e.acctMu.Unlock()
		rp.keyBucket(pk, p.PartitionKeyRate, p.Burst).charge(a.t1, a.units)
	}
	s := lognormal(a.rng, mean, p.LaneCV)
	start, ok := rp.srv.reserve(&rp.sched, a.laneStart, e.clock.Now(), a.deadline, s)
	if !ok {
		rp.win.timeouts++
		return newError(http.StatusInternalServerError, CodeOperationTimedOut, MsgTimedOut)
	}
	rp.win.busy += s
	rp.queue.add(start.Add(s))
	a.start, a.lane = start, s
	return nil
}

func (rp *rangePartition) keyBucket(pk string, rate float64, burst time.Duration) *bucket {
	b, ok := rp.buckets[pk]
	if !ok {
		b = newBucket(rate, burst)
		rp.buckets[pk] = b
	}
	return b
}

// serve returns the timing of a request whose service occupy reserved: its
// commit or read stage follows the lane.
func (e *Engine) serve(a *admission, k opKind, entities int) Timing {
	p := &e.cfg.Profile
	var post time.Duration
	if k == opWrite {
		post = lognormal(a.rng, p.PostWrite+time.Duration(entities)*p.PostUnit, p.CV)
	} else {
		post = lognormal(a.rng, p.PostRead, p.CV)
	}
	if p.HiccupP > 0 && a.rng.Float64() < p.HiccupP {
		post += p.HiccupMin + time.Duration(a.rng.Int64N(int64(p.HiccupMax-p.HiccupMin)+1))
	}
	return Timing{
		Arrival: a.t0, Done: a.start.Add(a.lane).Add(post),
		FrontEnd: a.t1.Sub(a.t0), Wait: a.start.Sub(a.t1), Lane: a.lane, Post: post,
		Units: a.units,
	}
}

// do runs fn on the live range partition of t holding pk, through the model
// when the profile has one, and sleeps once until the modelled response time.
// fn returns the number of entities it scanned (queries) or touched.
func (e *Engine) do(ctx context.Context, t *table, pk string, k opKind, entities int, units float64, fn func(rp *rangePartition, now time.Time) (int, *Error)) error {
	if !e.cfg.Profile.Model {
		read := k != opWrite
		rp := t.lock(pk, read)
		_, err := fn(rp, e.clock.Now())
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
	c := callFrom(ctx)
	rp := t.lock(pk, false)
	a, refusedAt, err := e.admit(c, rp, k, pk, units)
	// A write is reserved before it is applied, so one that times out leaves
	// nothing behind; a query's service time depends on what it scans, and a
	// late query's page is dropped.
	if err == nil && k != opQuery {
		err, refusedAt = e.occupy(&a, rp, k, pk, 0), a.deadline
	}
	var tm Timing
	if err == nil {
		at := a.start
		if k == opQuery {
			at = a.laneStart
		}
		scanned, ferr := fn(rp, at)
		if k == opQuery {
			err, refusedAt = e.occupy(&a, rp, k, pk, scanned), a.deadline
		}
		if err == nil {
			err = ferr
			tm = e.serve(&a, k, entities)
		}
	}
	if tm.Done.IsZero() {
		tm = Timing{Arrival: a.t0, Done: refusedAt, FrontEnd: a.t1.Sub(a.t0), Units: units}
		if refusedAt.After(a.t1) {
			tm.Wait = refusedAt.Sub(a.t1)
		} else {
			tm.FrontEnd = refusedAt.Sub(a.t0)
		}
	}
	rp.mu.Unlock()
	if c != nil {
		c.Timing = tm
	}
	if serr := e.clock.SleepUntil(ctx, tm.Done); serr != nil {
		return serr
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

// weightedMedian returns the load-weighted median key of a sample and the key
// with the largest share of the load, with that share.
func weightedMedian(sample []keyLoad) (median, top string, topShare float64) {
	if len(sample) == 0 {
		return "", "", 0
	}
	s := append([]keyLoad(nil), sample...)
	sort.Slice(s, func(i, j int) bool { return compareKeys(s[i].pk, s[j].pk) < 0 })
	var total float64
	for _, kl := range s {
		total += kl.units
	}
	var acc, run, best float64
	found := false
	for i, kl := range s {
		acc += kl.units
		if !found && acc >= total/2 {
			median, found = kl.pk, true
		}
		run += kl.units
		if i+1 == len(s) || s[i+1].pk != kl.pk {
			if run > best {
				best, top = run, kl.pk
			}
			run = 0
		}
	}
	return median, top, best / total
}
