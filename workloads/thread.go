package workloads

import (
	"context"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
)

// Sender is implemented by sessions whose target knows a request's answer
// the moment it is sent, in model time (the in-tree engine on a virtual
// clock): Send returns when the response arrives without waiting for it.
// A thread on such a target is a task of the clock instead of a goroutine,
// and costs no stack and no goroutine switch per request.
type Sender interface {
	Send(ctx context.Context, op *Op) (done time.Time, err error)
}

// phase is where a thread's loop waits.
type phase uint8

const (
	phaseStart   phase = iota // not started
	phaseFree                 // until the thread may send
	phaseDue                  // open load: until the request it took is due
	phaseFlight               // until the response to the request in flight
	phaseOwnRead              // until the response to a read of a retried insert's row
	phaseBackoff              // until a retry
	phaseWrite                // an update's read succeeded: until its write may go
	phaseEnded
)

// loop is a thread's state between its waits: the worker's loop as a
// state machine, so that one implementation runs as a goroutine (a
// target in wall time) or as a task of a virtual clock (the engine as a
// simulator, thousands of threads on one goroutine).
type loop struct {
	// What every request reads and writes comes first, together: a
	// simulator steps thousands of threads in turn, and each request then
	// reads fewer scattered cache lines.
	phase   phase
	open    bool
	virtual bool // the target's clock is virtual
	write   bool // the request is an update's write
	// warmed tells that the clock warmed the thread for the step it is
	// in (see WarmDeep), and so will again.
	warmed bool
	kind   OpKind
	// ctx bounds requests (one in flight at the deadline still completes);
	// stop ends sending (the deadline, or an interrupt).
	ctx, stop context.Context
	clock     clock.Clock
	send      sender // sess, when it can send without waiting
	// The request in progress: when the thread became free, when the
	// request was due and sent, its lag, its attempt, its client work,
	// and the answer to its last attempt.
	free, next, due, sent time.Time
	lag, work             time.Duration
	attempt               int
	done                  time.Time
	err                   error
}

// loopRare is what a thread's loop holds that its requests mostly leave
// alone: kept apart from loop, at the worker's end, so that the cache
// lines a simulator warms for a thread's step are the ones it reads.
type loopRare struct {
	start, to time.Time // the run's start, and its deadline for an open load
	sess      Session
	ended     func() // called once, when the thread ends
	readTry   int
	read      *Op // a read of a retried insert's row
	got       tables.Entity
	readAt    time.Time
	readErr   error
}

// Step runs the thread from one wait to the next: it is the clock.Task
// of a thread on a virtual clock, and drive's body elsewhere.
func (w *worker) Step(woke error) (time.Time, context.Context, bool) {
	l := &w.loop
	switch l.phase {
	case phaseStart:
		w.rare.sess = w.r.target.NewSession(w.rand.Uint64())
		l.virtual = w.r.virtual()
		if l.virtual {
			// Only here: in wall time a request's context carries its
			// timeout, which only Do keeps. A virtual clock has no
			// wall-time deadline: the target keeps the client's patience.
			l.send = asSender(w.rare.sess)
			w.op.ClientTimeout = w.r.spec.RequestTimeout
		}
		// Threads start within 10 ms of each other, not in lockstep.
		l.free = w.rare.start.Add(time.Duration(w.rand.Int64N(int64(10 * time.Millisecond))))
		l.open = w.r.arrivals != nil
		if l.open { // free from the start: the schedule says when to send
			l.free = w.rare.start
		}
		return w.top(false)
	case phaseFree:
		if woke != nil {
			return w.end()
		}
		return w.freed()
	case phaseDue:
		if woke != nil {
			return w.end()
		}
		return w.begin()
	case phaseFlight:
		if woke != nil { // as a session that waits returns: the wait's error
			l.err = woke
		}
		return w.answered()
	case phaseOwnRead:
		if woke != nil {
			w.rare.readErr = woke
		}
		return w.ownRead()
	case phaseBackoff:
		if woke != nil {
			return w.end()
		}
		l.sent = l.clock.Now()
		l.due, l.lag = l.sent, 0
		l.attempt++
		return w.attempt()
	case phaseWrite:
		if woke != nil {
			return w.end()
		}
		w.prepareWrite()
		l.sent = l.clock.Now()
		l.due, l.lag, l.write = l.sent, 0, true
		return w.request()
	}
	return time.Time{}, nil, false
}

// Warm prefetches the thread's own state that its next step reads
// (clock.Warmer): the worker's head and loop, its operation's head (Op
// keeps what a request reads first) and its keys. It reads none of it:
// the clock calls it two threads ahead, and
// WarmDeep, a step later, follows the pointers once they have arrived. A
// simulator of thousands of threads then meets their cache misses
// together, while the threads before it run, rather than one by one.
func (w *worker) Warm() {
	clock.Prefetch(unsafe.Pointer(w), workerHead)
	// Not &w.ownKeys, for which the compiler checks w against nil with a
	// load, which waits for the line this prefetches.
	clock.Prefetch(unsafe.Add(unsafe.Pointer(w), unsafe.Offsetof(w.ownKeys)), keysHead)
}

// workerHead is the part of a worker that a request reads: through its
// loop, and its operation up to what only some operations read.
const workerHead = unsafe.Offsetof(worker{}.op) + unsafe.Offsetof(Op{}.PartitionKey)

// keysHead is the part of a thread's keys that a request reads, when its
// PartitionKey is its own or the shared one: a simulation of many threads
// most often gives each its own.
const keysHead = unsafe.Offsetof(keys{}.scheme)

// WarmDeep prefetches what the thread's state points at and its next
// step reads (clock.DeepWarmer): its recorder, its session, its VM, its
// next RowKey's bytes, and the places its last step left as hints, where
// its next request's record and the engine's state of its key are. Read a
// step after Warm, the pointers and hints are in the cache: in one stage,
// with their loads waiting on the worker's lines, prefetching the keys'
// bytes and the VM measured no faster.
func (w *worker) WarmDeep() {
	if w.rec != nil {
		w.rec.Warm()
	}
	if w.loop.send != nil {
		w.loop.send.Warm()
	}
	if w.machine != nil {
		w.machine.Warm()
	}
	if k := &w.ownKeys; len(k.spelled) > 0 {
		clock.Prefetch(unsafe.Pointer(unsafe.StringData(k.spelled)), uintptr(k.rkLen))
	}
	clock.PrefetchHints(w.hints[:])
	w.loop.warmed = true
}

// hinter is a thread's part (its session, its recorder) that can say
// where its next request most often goes, once its step is done.
type hinter interface {
	Hints(hs []clock.Hint) []clock.Hint
}

// hint keeps, at the end of a step the clock warmed, where the thread's
// next step will most likely go: everything it reads to know is still in
// the cache.
func (w *worker) hint() {
	hs := w.hints[:0]
	if w.rec != nil {
		hs = w.rec.Hints(hs)
	}
	if s := w.loop.send; s != nil {
		hs = s.Hints(hs)
	}
	clear(w.hints[copy(w.hints[:], hs):])
	w.loop.warmed = false
}

// sender is a session that can send without waiting (Sender) as a
// thread keeps it: in one interface with its warming and its hints, which
// a simulator's thread reads at every step, among its state's lines.
type sender interface {
	Sender
	clock.Warmer
	hinter
}

// asSender returns sess as a sender, or nil if it is no Sender.
func asSender(sess Session) sender {
	switch s := sess.(type) {
	case sender:
		return s
	case Sender:
		p := partSender{Sender: s}
		p.warm, _ = sess.(clock.Warmer)
		p.hint, _ = sess.(hinter)
		return p
	}
	return nil
}

// partSender is a Sender that lacks the warming or the hints of a
// sender: it does without them.
type partSender struct {
	Sender
	warm clock.Warmer
	hint hinter
}

func (p partSender) Warm() {
	if p.warm != nil {
		p.warm.Warm()
	}
}

func (p partSender) Hints(hs []clock.Hint) []clock.Hint {
	if p.hint != nil {
		return p.hint.Hints(hs)
	}
	return hs
}

// maxHints is how many hints a thread keeps: its recorder's two and the
// engine's six at most.
const maxHints = 8

var _ clock.DeepWarmer = (*worker)(nil) // the clock warms a thread only if it is one

// drive runs the thread's loop on its own goroutine, waiting on the
// target's clock between steps.
func (w *worker) drive() {
	l := &w.loop
	if w.r.virtual() { // every wait sleeps on the clock: with one waiter of its own
		var releaseCtx, releaseStop func()
		l.ctx, releaseCtx = clock.Sleeper(l.ctx)
		l.stop, releaseStop = clock.Sleeper(l.stop)
		defer releaseCtx()
		defer releaseStop()
	}
	var err error
	for {
		at, ctx, ok := w.Step(err)
		if !ok {
			return
		}
		err = l.clock.SleepUntil(ctx, at)
	}
}

// wait ends a step: the thread sleeps in phase p until at, or until ctx
// is done.
func (w *worker) wait(p phase, ctx context.Context, at time.Time) (time.Time, context.Context, bool) {
	w.loop.phase = p
	if w.loop.warmed {
		w.hint()
	}
	return at, ctx, true
}

// end ends the thread.
func (w *worker) end() (time.Time, context.Context, bool) {
	if w.loop.phase != phaseEnded {
		w.loop.phase = phaseEnded
		w.rare.sess = nil
		if w.rare.ended != nil {
			w.rare.ended()
		}
	}
	return time.Time{}, nil, false
}

// top is the top of the loop: the thread sends until stop is done, next
// once it is free. now says it is free now, on a virtual clock: its wait
// would end at once, as the clock steps a task whose wake-up is not after
// now again without a turn of the loop, so it goes on without one.
func (w *worker) top(now bool) (time.Time, context.Context, bool) {
	if w.loop.stop.Err() != nil {
		return w.end()
	}
	if now {
		w.loop.phase = phaseFree
		return w.freed()
	}
	return w.wait(phaseFree, w.loop.stop, w.loop.free)
}

// freed goes on from a thread's becoming free: it takes the open load's
// next request and waits until it is due, or begins the next request.
func (w *worker) freed() (time.Time, context.Context, bool) {
	l := &w.loop
	l.next = l.free // when the request is due
	if l.open {
		due, ok := w.r.arrivals.take(l.clock.Now(), w.rare.to, w.rec.Drop)
		if !ok {
			return w.end()
		}
		l.next = due
		return w.wait(phaseDue, l.stop, due)
	}
	return w.begin()
}

// begin sends the next request of the mix, at its due time.
func (w *worker) begin() (time.Time, context.Context, bool) {
	l := &w.loop
	// A request is stamped when it is really sent, never backdated to
	// when it was due: a thread that wakes late sends late, and its
	// lateness is the harness's lag, measured here.
	now := l.clock.Now()
	// A queued request was due before its thread was free. On a virtual
	// clock a thread wakes exactly on time, and a wake on time counts
	// only beside a late one: the recorder is not touched for it.
	due := l.free // a closed loop's request is due when its thread is free: freed set next to it
	if l.open {
		due = later(l.next, l.free)
	}
	if late := clock.Sub(now, due); late > 0 || !l.virtual {
		w.rec.Wake(late)
	}
	l.due, l.sent, l.lag = now, now, 0
	if l.open { // latency counts from the intended start
		l.due = l.next
		l.lag = max(0, clock.Sub(now, l.next))
	}
	l.kind = w.mix.next(&w.rand)
	w.prepare(l.clock, l.kind)
	l.write = false
	return w.request()
}

// request sends the prepared operation, and retries it as the policy
// says, recording each attempt.
func (w *worker) request() (time.Time, context.Context, bool) {
	w.loop.work = w.clientWork()
	w.loop.attempt = 0
	return w.attempt()
}

// attempt sends one attempt of the prepared operation.
func (w *worker) attempt() (time.Time, context.Context, bool) {
	l := &w.loop
	w.op.Ready = time.Time{}
	if w.machine != nil {
		w.op.Ready = w.machine.Spend(l.sent, w.loop.work)
	}
	if l.send != nil {
		l.done, l.err = l.send.Send(l.ctx, &w.op)
		return w.wait(phaseFlight, l.ctx, l.done)
	}
	rctx, cancel := w.r.requestContext(l.ctx)
	l.done, l.err = w.rare.sess.Do(rctx, &w.op)
	cancel()
	return w.answered()
}

// answered goes on from an attempt's answer: records it, and retries,
// pauses or goes on to the next request.
func (w *worker) answered() (time.Time, context.Context, bool) {
	l := &w.loop
	if l.err != nil && l.ctx.Err() != nil {
		return w.end() // interrupted: the run is marked so, and this request is not a result
	}
	if l.attempt > 0 && w.r.spec.TxnID && Outcome(l.err) == tables.CodeEntityAlreadyExists {
		// A retried insert that conflicts may be our own earlier attempt
		// that the service did after all: its transaction id says so.
		r := &w.rare
		r.read = &Op{Kind: OpGet, Table: w.op.Table, PartitionKey: w.op.Entity.PartitionKey, RowKey: w.op.Entity.RowKey, Read: &r.got, ClientTimeout: w.op.ClientTimeout}
		r.readTry = 0
		return w.readOwn()
	}
	return w.recorded()
}

// recorded records the attempt and decides what the thread does next.
func (w *worker) recorded() (time.Time, context.Context, bool) {
	l := &w.loop
	s := &w.r.spec
	w.record(l.due, l.done, l.err, l.lag, l.attempt > 0)
	if l.err == nil {
		// A sender's thread sleeps until done, exactly, for an answer
		// without error (ownRead's included): it is free now.
		return w.finished(l.done, l.send != nil)
	}
	if s.Retry.Policy == RetryNone {
		if answered(w.op.Kind, l.err) {
			return w.finished(l.done, false)
		}
		return w.finished(l.done.Add(s.Retry.Pause), false)
	}
	if !retriable(l.err) || l.attempt >= s.Retry.MaxRetries {
		return w.finished(l.done, false)
	}
	wait := w.backoff(l.attempt + 1)
	if ra := retryAfter(l.err); ra > 0 && s.Retry.Policy == RetrySDK {
		// As azcore's retry policy: it waits what x-ms-retry-after-ms
		// says, and gives up on a wait longer than its maximum.
		if s.Retry.MaxBackoff > 0 && ra > s.Retry.MaxBackoff {
			return w.finished(l.done, false)
		}
		wait = ra
	}
	return w.wait(phaseBackoff, l.stop, l.done.Add(wait))
}

// finished goes on from a request that is over, its last attempt
// answered: the thread is free at free, which is now if now says so.
func (w *worker) finished(free time.Time, now bool) (time.Time, context.Context, bool) {
	l := &w.loop
	l.free = free
	if l.kind == OpUpdate && !l.write && l.err == nil { // the read succeeded: now its write
		return w.wait(phaseWrite, l.stop, free)
	}
	return w.top(now)
}

// TxnProperty is the property that carries an insert's transaction id when
// the spec asks for one.
const TxnProperty = "TxnId"

// readOwn sends a read of the entity a retried insert conflicted with,
// to learn whether it is this insert's own earlier attempt; a careful
// application retries its read too.
func (w *worker) readOwn() (time.Time, context.Context, bool) {
	l, r := &w.loop, &w.rare
	if l.send != nil {
		r.readAt, r.readErr = l.send.Send(l.ctx, r.read)
		return w.wait(phaseOwnRead, l.ctx, r.readAt)
	}
	rctx, cancel := w.r.requestContext(l.ctx)
	r.readAt, r.readErr = r.sess.Do(rctx, r.read)
	cancel()
	return w.ownRead()
}

// ownRead goes on from the read's answer: retries it, or takes the
// insert as done when the row holds its transaction id.
func (w *worker) ownRead() (time.Time, context.Context, bool) {
	l, r := &w.loop, &w.rare
	if err := r.readErr; err != nil && retriable(err) && l.ctx.Err() == nil && r.readTry < w.r.spec.Retry.MaxRetries {
		r.readTry++
		return w.readOwn()
	}
	if r.readErr == nil {
		if p, ok := r.got.Property(TxnProperty); ok && p.Value == w.txn {
			l.done, l.err = r.readAt, nil
		}
	}
	r.read, r.got = nil, tables.Entity{}
	return w.recorded()
}
