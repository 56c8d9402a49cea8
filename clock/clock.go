// Package clock is tablebench's time: a Virtual clock on which time passes
// only when every participant waits (exact, and as fast as the CPU allows),
// and a Scaled clock in wall time. The engine models in it, the harness
// measures in it, and the SDK target runs on a Scaled clock at 1: each
// target supplies the clock that a run's coordinator and recorder use, so
// it sits beneath the data flow, not in the engine.
package clock

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Clock is the engine's one source of time. Model time is what the engine and
// its callers reason in (latencies, rates, the load balancer's delays); a
// Clock maps it onto wall time.
type Clock interface {
	// Now returns the current model time.
	Now() time.Time
	// SleepUntil blocks until model time t or until ctx is done, in which
	// case it returns ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

// Scaled runs model time Scale times faster than wall time, from the
// wall time at which it was made. A Scale of 1 is wall time itself. Inside a
// testing/synctest bubble it runs on the bubble's virtual time.
type Scaled struct {
	start time.Time
	scale float64
}

// NewScaled returns a clock whose model time runs scale times faster than
// wall time. A scale of zero or less is taken as 1.
func NewScaled(scale float64) *Scaled {
	if scale <= 0 {
		scale = 1
	}
	return &Scaled{start: time.Now(), scale: scale}
}

// Scale returns how many model seconds pass in one wall second.
func (c *Scaled) Scale() float64 { return c.scale }

// Now returns the current model time.
func (c *Scaled) Now() time.Time {
	if c.scale == 1 {
		return time.Now()
	}
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.scale))
}

// SleepUntil blocks until model time t or until ctx is done.
func (c *Scaled) SleepUntil(ctx context.Context, t time.Time) error {
	d := t.Sub(c.Now())
	if d <= 0 {
		return ctx.Err()
	}
	if c.scale != 1 {
		d = time.Duration(float64(d) / c.scale)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Virtual is a discrete-event clock: model time stands still while any
// participant runs and jumps to the next wake-up when every participant is
// waiting on the clock. A run on it goes as fast as the CPU allows and does
// not depend on how the machine schedules goroutines.
//
// That independence rests on four rules. The clock wakes one participant
// at a time, and the next only when it waits again or ends, so whatever
// participants share is touched in model-time order. Wake-ups at the same
// model time come in the order their sleeps began (a sequence number, not
// the race to a lock), which is itself deterministic because only one
// participant runs at a time. Participants that start together start
// through Go, which gives each its turn in the order of the calls. And a
// context that a participant ends with Cancel wakes its sleepers at that
// moment, in turn, before time passes.
//
// Goroutines that drive time are started with Go, or declared with Hold
// before they start and call Release when they end. Background goroutines
// (the load balancer) wait with a context from Background, and start with
// GoBackground: they are woken when their time comes but never make time
// pass on their own.
type Virtual struct {
	mu    sync.Mutex
	start time.Time // waiters keep their time as an offset from it
	// Whether start has no monotonic reading, and then its seconds
	// (wordsOf's ext) and nanoseconds: Now builds the time from them, and
	// since subtracts them, at much less than the cost of start.Add and
	// Sub.
	plain               bool
	startSec, startNsec int64
	// now is model time as an offset from start: written under mu, read
	// without it, so that reading the time (every request does, often)
	// takes no lock.
	now     atomic.Int64
	active  int // participants running (not waiting on the clock)
	drivers int // participants waiting on the clock
	q       queue
	seq     uint64 // sleeps begun, the order of wake-ups at one time

	// Tasks (GoTask) are participants without goroutines of their own:
	// one loop goroutine runs them while any lives. run hands the loop a
	// task woken by another participant's wait; next is one it woke itself
	// (owner: the loop is the caller of advance), which it runs without a
	// hand-off.
	tasks   int
	looping bool
	owner   bool
	next    *waiter
	run     chan *waiter
	warmAt  int               // how many tasks the loop runs before it warms them: warmTasks
	waiters Arrays[waiter]    // where new tasks' waiters come from (see taskWaiters)
	watched []<-chan struct{} // the Done of every context a task has slept with
	unwatch []func() bool     // stops each watch: a context outlives the run's clock
}

// NewVirtual returns a virtual clock that starts at start.
func NewVirtual(start time.Time) *Virtual {
	c := &Virtual{warmAt: warmTasks, start: start, plain: !monotonic(&start)}
	if c.plain {
		w := wordsOf(&start)
		c.startSec, c.startNsec = w.ext, int64(w.wall)
	}
	return c
}

// Now returns the current model time.
func (c *Virtual) Now() time.Time {
	d := c.offset()
	t := c.start
	if !c.plain || d < 0 {
		return t.Add(d)
	}
	// start.Add(d), as it adds to a time without a monotonic reading:
	// to its seconds and nanoseconds, its location kept.
	sec, nsec := int64(d/time.Second), c.startNsec+int64(d%time.Second)
	if nsec >= 1e9 {
		sec++
		nsec -= 1e9
	}
	w := wordsOf(&t)
	w.wall, w.ext = uint64(nsec), c.startSec+sec
	return t
}

// since returns t.Sub(c.start), the offset of a sleep's wake-up.
func (c *Virtual) since(t time.Time) time.Duration {
	if w := wordsOf(&t); c.plain && w.wall>>63 == 0 {
		if s := w.ext - c.startSec; -maxSpan < s && s < maxSpan {
			return time.Duration(s)*time.Second + time.Duration(int64(w.wall)-c.startNsec)
		}
	}
	return t.Sub(c.start)
}

// maxSpan is how many seconds apart two times may be for Sub's shortcut:
// their difference in nanoseconds then fits in a Duration.
const maxSpan = 9e9

// Sub returns t.Sub(u), exactly, at a fraction of its cost for times with
// no monotonic reading (a Virtual clock's, and every time derived from
// them), which it subtracts as Unix times. time.Time's Sub checks its
// result for overflow with an Add and an Equal; a simulated request
// subtracts times several times over, so Sub is small enough to inline,
// and leaves the rest to subSlow.
func Sub(t, u time.Time) time.Duration {
	if a, b := wordsOf(&t), wordsOf(&u); (a.wall|b.wall)>>63 == 0 {
		if s := a.ext - b.ext; -maxSpan < s && s < maxSpan {
			return time.Duration(s)*time.Second + time.Duration(int64(a.wall)-int64(b.wall))
		}
	}
	return subSlow(t, u)
}

// subSlow is Sub for times that are far apart, or that have monotonic
// readings.
func subSlow(t, u time.Time) time.Duration {
	if !monotonic(&t) || !monotonic(&u) { // Sub uses wall times when either has no monotonic reading
		if s := t.Unix() - u.Unix(); -maxSpan < s && s < maxSpan {
			return time.Duration(s)*time.Second + time.Duration(t.Nanosecond()-u.Nanosecond())
		}
	}
	return t.Sub(u)
}

// words is a time.Time's layout. A Time without a monotonic reading (the
// top bit of wall clear) has its nanoseconds in wall, and nothing else,
// and its seconds since the year 1 in ext; Unix seconds are ext plus a
// constant. TestTimeWords holds time.Time to this.
type words struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

// wordsOf returns t's words.
func wordsOf(t *time.Time) *words { return (*words)(unsafe.Pointer(t)) }

// monotonic reports whether t has a monotonic clock reading, as
// t != t.Round(0) does, without the call: it is the top bit of a Time's
// first word (its wall field's hasMonotonic flag), which
// TestMonotonicIsRound holds to.
func monotonic(t *time.Time) bool { return *(*uint64)(unsafe.Pointer(t))>>63 != 0 }

// offset is model time since the clock's start.
func (c *Virtual) offset() time.Duration { return time.Duration(c.now.Load()) }

// Hold declares n participants that are about to start. They run together
// until each first waits, in whatever order the machine runs them: Go
// starts participants in a set order.
func (c *Virtual) Hold(n int) {
	c.mu.Lock()
	c.active += n
	c.mu.Unlock()
}

// Release declares that a participant has ended.
func (c *Virtual) Release() {
	c.mu.Lock()
	c.active--
	c.advance()
	c.mu.Unlock()
}

// Go starts fn in a new goroutine as a participant that drives time, and
// releases it when fn returns. The participant begins in its turn at the
// current model time: participants started at one time begin one at a
// time, in the order of the calls, however the machine schedules their
// goroutines. Call Go from a running participant, or between Hold(1) and
// Release, so that time cannot pass before the last one is started.
func (c *Virtual) Go(fn func()) {
	w := &waiter{ch: make(chan struct{}, 1)}
	c.mu.Lock()
	w.at = c.offset()
	c.push(w)
	c.drivers++
	c.advance()
	c.mu.Unlock()
	go func() {
		<-w.ch
		defer c.Release()
		fn()
	}()
}

// GoBackground starts fn in a new goroutine as a background participant of
// c, with a context from Background. On a Virtual clock fn begins in its
// turn at the current model time, before the participants started after
// it, so the time it starts from does not depend on when the machine first
// runs its goroutine; if ctx ends first, fn begins at once. On other clocks
// it is a plain goroutine.
func GoBackground(c Clock, ctx context.Context, fn func(context.Context)) {
	bctx := Background(ctx)
	v, ok := c.(*Virtual)
	if !ok {
		go fn(bctx)
		return
	}
	st := bctx.Value(stateKey{}).(*ctxState)
	w := &waiter{ch: make(chan struct{}, 1), st: st}
	v.mu.Lock()
	w.at = v.offset()
	v.push(w)
	v.advance()
	v.mu.Unlock()
	go func() {
		select {
		case <-w.ch:
		case <-ctx.Done():
			v.mu.Lock()
			if w.queued { // not woken: begin outside the clock's turns
				v.q.remove(w)
			}
			v.mu.Unlock()
		}
		fn(bctx)
		v.mu.Lock()
		if st.running { // it ended without waiting again: time may pass
			st.running = false
			v.active--
			v.advance()
		}
		v.mu.Unlock()
	}()
}

// Cancel calls cancel, which ends a context that participants may sleep
// with, as an event at the current model time: every driving participant
// whose sleep it ends wakes now, in its turn, in the order its sleep began,
// before time passes. (A context ended by anything else, such as an
// interrupt, wakes its sleepers at once, as the machine runs them.) Call
// it from a running participant.
func (c *Virtual) Cancel(cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Under the lock, so that a Sleeper's wake-up on cancellation, and a
	// select that sees the context end, find their waiter already moved.
	cancel()
	now := c.offset()
	moved := false
	c.q.unrun() // moved to now, the run's sleeps would be out of its order
	for i := range c.q.h {
		s := &c.q.h[i]
		w := s.w
		if !s.live() || w.done == nil || w.cancelled || (w.st != nil && w.st.bg) {
			continue
		}
		select {
		case <-w.done:
			s.at, w.at, w.cancelled, moved = now, now, true, true
		default:
		}
	}
	if moved {
		c.q.h.init()
	}
	c.advance()
}

type stateKey struct{}

// ctxState is what a context tells a Virtual clock about the goroutine
// that sleeps with it.
type ctxState struct {
	// bg marks a background goroutine; running is whether the clock woke
	// it and it has not waited again yet, so time must not pass under it.
	bg, running bool
	// A sleeper's one waiter, reused by every sleep with the context, so a
	// sleep allocates nothing and waits on one channel instead of a select.
	w     *waiter
	done  <-chan struct{}         // the context's Done
	clock atomic.Pointer[Virtual] // the one clock w waits on, set by its first sleep
}

// Background marks ctx as one background goroutine's: on a Virtual it
// is woken on time but does not make time pass. Each background goroutine
// needs its own.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, stateKey{}, &ctxState{bg: true})
}

// Sleeper returns ctx for the one goroutine that will sleep with it (and
// with contexts that only add values to it): a Virtual clock then reuses
// one waiter for all its sleeps, which costs a run's every request much
// less than a new waiter and a select. Other contexts, and a sleep while
// another goroutine sleeps with the same one, work as before. Call release
// when the goroutine is done with the context.
func Sleeper(ctx context.Context) (_ context.Context, release func()) {
	st := &ctxState{w: &waiter{ch: make(chan struct{}, 1), done: ctx.Done()}, done: ctx.Done()}
	st.w.st = st
	release = func() {}
	if st.done != nil {
		// Woken here, not by a select: the sleep then waits on its channel alone.
		stop := context.AfterFunc(ctx, func() {
			c := st.clock.Load()
			if c == nil {
				return
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if w := st.w; w.queued && !w.cancelled { // not moved to now by Cancel already
				c.q.remove(w)
				w.cancelled = true
				c.drivers--
				c.active++
				c.advance()
				w.ch <- struct{}{}
			}
		})
		release = func() { stop() }
	}
	return context.WithValue(ctx, stateKey{}, st), release
}

// waiter is a participant's sleep. A task's sleep reads its first cache
// line alone, which is all that the clock prefetches of the sleeps about
// to wake (see warmAhead): a waiter is 128 bytes, its first 64 a line
// when it begins on one, as a task's do (see taskWaiter).
type waiter struct {
	t         steppedTask     // a task's, run by the clock's loop; nil for a goroutine's
	ctx       context.Context // a task's sleep's context, whose Err its wake-up reports
	at        time.Duration   // since the clock's start
	seq       uint64          // when the sleep began, among the clock's sleeps
	st        *ctxState       // nil for a participant without a context of its own
	queued    bool            // in the heap, not yet woken or removed
	cancelled bool            // woken, or to be woken, because its context ended
	reused    bool            // the Sleeper's own waiter, taken for this sleep
	// What a task's sleep reads only when its context changes or ends.
	ch   chan struct{}   // receives one token when the sleep ends; buffered
	done <-chan struct{} // the sleep's context's Done, for Cancel
	_    [48]byte
}

// waiterHead is the part of a waiter that a task's sleep reads.
const waiterHead = unsafe.Offsetof(waiter{}.ch)

// A task's sleep reads one line of its waiter at most (see waiter; its
// whole size, two lines on a 64-bit machine, is TestWaiterIsTwoLines').
var _ [64 - waiterHead]struct{}

// steppedTask is a task as the clock steps and warms it: a DeepWarmer as it
// is, and any other task through an adapter (see GoTask), which makes a
// waiter one interface shorter.
type steppedTask interface {
	Task
	DeepWarmer
}

// shallowTask is a Task that is a Warmer and no DeepWarmer: warmed once,
// just before its step.
type shallowTask struct {
	Task
	w Warmer
}

func (shallowTask) Warm()       {}
func (s shallowTask) WarmDeep() { s.w.Warm() }

// coldTask is a Task that warms nothing.
type coldTask struct{ Task }

func (coldTask) Warm()     {}
func (coldTask) WarmDeep() {}

// SleepUntil waits until model time t, or until ctx is done.
func (c *Virtual) SleepUntil(ctx context.Context, t time.Time) error {
	st, _ := ctx.Value(stateKey{}).(*ctxState)
	own := st != nil && st.w != nil && ctx.Done() == st.done && (st.clock.Load() == c || st.clock.CompareAndSwap(nil, c))
	c.mu.Lock()
	if c.since(t) <= c.offset() {
		c.mu.Unlock()
		return ctx.Err()
	}
	var w *waiter
	if own && !st.w.reused { // the waiter is c's alone, guarded by c.mu
		if err := ctx.Err(); err != nil { // its wake-up on cancellation may have come and gone
			c.mu.Unlock()
			return err
		}
		w = st.w
		w.cancelled, w.reused = false, true
	} else {
		w = &waiter{ch: make(chan struct{}, 1), done: ctx.Done()}
		if st != nil && st.bg {
			w.st = st
		}
	}
	w.at = c.since(t)
	c.push(w)
	switch {
	case w.st == nil || !w.st.bg:
		c.active--
		c.drivers++
	case w.st.running:
		w.st.running = false
		c.active--
	}
	c.advance()
	c.mu.Unlock()
	if w.reused {
		<-w.ch
		c.mu.Lock()
		w.reused = false
		cancelled := w.cancelled
		c.mu.Unlock()
		if cancelled {
			return ctx.Err()
		}
		return nil
	}
	select {
	case <-w.ch:
		c.mu.Lock()
		cancelled := w.cancelled
		c.mu.Unlock()
		if cancelled {
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if w.cancelled { // Cancel moved the sleep to now: wake in turn
			c.mu.Unlock()
			<-w.ch
			return ctx.Err()
		}
		defer c.mu.Unlock()
		if !w.queued {
			// Woken at t as the context ended: the sleep is over, and saying so
			// keeps a run's last tick from depending on which case select saw.
			return nil
		}
		c.q.remove(w) // still waiting: leave the queue and run again
		if w.st == nil || !w.st.bg {
			c.drivers--
			c.active++
		}
		c.advance()
		return ctx.Err()
	}
}

// push queues w, after every sleep begun before it. Called with c.mu held.
func (c *Virtual) push(w *waiter) {
	c.seq++
	w.seq = c.seq
	c.q.push(w)
}

// advance wakes the next participant, moving time to its wake-up, when
// every participant waits: one at a time, so that what participants share
// sees them in model-time order and, at one time, in the order they began
// to sleep. Without a driver time stands still, but a background wake-up
// that is due already still comes. Called with c.mu held.
func (c *Virtual) advance() {
	if c.active != 0 || !c.q.ready() || (c.drivers == 0 && c.q.first().at > c.offset()) {
		return
	}
	c.wake(c.q.pop())
}

// wake wakes w, the next participant, moving time to its wake-up. Called
// with c.mu held.
func (c *Virtual) wake(w *waiter) {
	if w.at > c.offset() {
		c.now.Store(int64(w.at))
	}
	if w.st != nil && w.st.bg {
		w.st.running = true // runs until it waits again
	} else {
		c.drivers--
	}
	c.active++
	switch {
	case w.t == nil:
		w.ch <- struct{}{}
	case c.owner:
		c.next = w
	default: // the loop waits for it: one participant runs at a time, so run is empty
		c.run <- w
	}
}

// queue holds the sleeps in the order they wake: by wake-up time, then
// by when the sleep began. A sleep that wakes after every sleep in its
// run joins the run, in order, at no cost (see put): an open load's threads each
// take the next request of the schedule and sleep until it is due, each
// later than the last, which in a heap would sift every wake-up from its
// top to its bottom. Other sleeps go into the heap. The next to wake is
// the first of the run's and the heap's. A waiter removed before its
// time (a context ended) is only marked so: its slot is dropped when it
// comes first.
type queue struct {
	h    waiters
	run  []slot // from head on, each after the one before
	head int
}

// waiters is a min-heap of sleeps by wake-up time, then by when the
// sleep began. It keeps each sleep's key beside its waiter, four children
// to a node, so that ordering 15,000 sleeping threads reads a few
// contiguous cache lines instead of a waiter per comparison.
type waiters []slot

// slot is one sleep in the queue: its key, and its waiter, which is still
// waiting on it while its queued mark and sequence number say so.
type slot struct {
	at  time.Duration
	seq uint64
	w   *waiter
}

// live reports whether the slot's sleep is still waited for: a waiter is
// reused, and a removed sleep leaves its slot behind.
func (s *slot) live() bool { return s.w.queued && s.w.seq == s.seq }

// before reports whether a wakes before b.
func before(a, b *slot) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// earlier is before as a number, 1 or 0, found without a branch: the
// keys compare as one 128-bit number, at above seq. A queued sleep's at
// is never negative (it is after now, which starts at zero), so it
// compares as unsigned.
func earlier(a, b *slot) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at), uint64(b.at), borrow)
	return borrow
}

// push queues w, its key set.
func (q *queue) push(w *waiter) {
	w.queued = true
	q.put(slot{at: w.at, seq: w.seq, w: w})
}

// put queues s: into the run when it wakes after the run's last, or in
// place of the last when it wakes after the one before (the last, a sleep
// far ahead of the others, then goes into the heap: it would keep the run
// from growing), and into the heap otherwise.
func (q *queue) put(s slot) {
	switch n := len(q.run) - q.head; {
	case n == 0 || !before(&s, &q.run[len(q.run)-1]):
	case n == 1 || !before(&s, &q.run[len(q.run)-2]):
		last := q.run[len(q.run)-1]
		q.run = q.run[:len(q.run)-1]
		if last.live() {
			q.h.push(last)
		}
	default:
		q.h.push(s)
		return
	}
	q.join(s)
}

// join appends s, which wakes after every sleep in the run, to the run.
func (q *queue) join(s slot) {
	if q.head == len(q.run) {
		q.run, q.head = q.run[:0], 0
	} else if q.head >= 1024 && q.head >= len(q.run)/2 { // reuse the room before head
		n := copy(q.run, q.run[q.head:])
		clear(q.run[n:])
		q.run, q.head = q.run[:n], 0
	}
	q.run = append(q.run, s)
}

// ready drops removed sleeps from the fronts and reports whether any sleep
// is left: first is then the next to wake.
func (q *queue) ready() bool {
	for q.head < len(q.run) && !q.run[q.head].live() {
		q.run[q.head] = slot{}
		q.head++
	}
	for len(q.h) > 0 && !q.h[0].live() {
		q.h.drop()
	}
	return q.head < len(q.run) || len(q.h) > 0
}

// fromRun reports whether the next to wake is the run's first, after
// ready found one.
func (q *queue) fromRun() bool {
	return q.head < len(q.run) && (len(q.h) == 0 || before(&q.run[q.head], &q.h[0]))
}

// first returns the next sleep to wake, which ready found.
func (q *queue) first() *slot {
	if q.fromRun() {
		return &q.run[q.head]
	}
	return &q.h[0]
}

// warmAhead returns the waiters of the next two sleeps to wake, nil
// where there are none, after prefetching the waiters of every sleep that
// may wake after the first: the run's next, and the heap top's children,
// which are the waiters warmAhead reads at the next step. The second is the
// run's or the heap's next after the first: in a 4-ary heap, the least of
// the top's children. A sleep removed since it was queued may be among
// them: it is only warmed for nothing.
func (q *queue) warmAhead() (first, second *waiter) {
	const size = waiterHead
	run, heap := q.head < len(q.run), len(q.h) > 0
	if !run && !heap {
		return nil, nil
	}
	if i := q.head + 1; i < len(q.run) {
		Prefetch(unsafe.Pointer(q.run[i].w), size)
	}
	var rest *slot // the heap's least after its top: the least of its children
	for i := 1; i < min(5, len(q.h)); i++ {
		Prefetch(unsafe.Pointer(q.h[i].w), size)
		if rest == nil || before(&q.h[i], rest) {
			rest = &q.h[i]
		}
	}
	if run && (!heap || before(&q.run[q.head], &q.h[0])) {
		first = q.run[q.head].w
		if heap {
			Prefetch(unsafe.Pointer(q.h[0].w), size)
			second = q.h[0].w
		}
		if i := q.head + 1; i < len(q.run) && (second == nil || before(&q.run[i], &q.h[0])) {
			second = q.run[i].w
		}
		return first, second
	}
	first = q.h[0].w
	if run {
		Prefetch(unsafe.Pointer(q.run[q.head].w), size)
		second = q.run[q.head].w
	}
	if rest != nil && (second == nil || before(rest, &q.run[q.head])) {
		second = rest.w
	}
	return first, second
}

// pop takes out the next sleep to wake, which ready found, and returns
// its waiter.
func (q *queue) pop() *waiter {
	var w *waiter
	if q.fromRun() {
		w = q.run[q.head].w
		q.run[q.head] = slot{}
		q.head++
	} else {
		w = q.h[0].w
		q.h.drop()
	}
	w.queued = false
	return w
}

// pushPop queues w, its key set, and takes out the next sleep to wake,
// as push and then ready and pop would, and returns its waiter. It is a
// task's every sleep, so it does their work in one pass: most often the
// heap's top wakes next and w goes into the heap, in its place.
func (q *queue) pushPop(w *waiter) *waiter {
	for q.head < len(q.run) && !q.run[q.head].live() {
		q.run[q.head] = slot{}
		q.head++
	}
	for len(q.h) > 0 && !q.h[0].live() {
		q.h.drop()
	}
	s := slot{at: w.at, seq: w.seq, w: w}
	run := q.head < len(q.run)
	if len(q.h) > 0 && (!run || before(&q.h[0], &q.run[q.head])) {
		if before(&s, &q.h[0]) {
			return w // it would wake first: no need to queue it
		}
		w.queued = true
		// Not into the run, where put would put it: the run is in
		// order, so a sleep before its last but one is before its last
		// too.
		if n := len(q.run) - q.head; n >= 2 && before(&s, &q.run[len(q.run)-2]) {
			top := q.h[0].w
			q.h[0] = s
			q.h.down(0)
			top.queued = false
			return top
		}
	} else if !run || before(&s, &q.run[q.head]) {
		return w
	} else {
		w.queued = true
	}
	top := q.pop()
	q.put(s)
	return top
}

// remove takes w's sleep out: its slot goes when it comes first.
func (q *queue) remove(w *waiter) { w.queued = false }

// unrun moves the run's sleeps into the heap.
func (q *queue) unrun() {
	for _, s := range q.run[q.head:] {
		if s.live() {
			q.h.push(s)
		}
	}
	clear(q.run)
	q.run, q.head = q.run[:0], 0
}

// init restores the heap after wake-up times changed in place.
func (q waiters) init() {
	for i := (len(q) - 2) / 4; i >= 0; i-- {
		q.down(i)
	}
}

func (q *waiters) push(s slot) {
	*q = append(*q, s)
	q.up(len(*q) - 1)
}

// drop takes the top slot out.
func (q *waiters) drop() {
	h := *q
	last := len(h) - 1
	h[0] = h[last]
	h[last] = slot{}
	*q = h[:last]
	if last > 0 {
		q.down(0)
	}
}

func (q waiters) up(i int) {
	s := q[i]
	for i > 0 {
		p := (i - 1) / 4
		if !before(&s, &q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = s
}

// down sifts the slot at i down. Which of four children is the least is
// as good as random, so a branch on each comparison is mispredicted half
// the time, and a sift of a few levels costs more in mispredictions than
// in comparisons: down finds the least without a branch (earlier). And
// as a sleep that sifts down (one just begun, or the heap's last) wakes
// after most others, and sinks nearly to the bottom, down moves the
// least children up all the way to a leaf without comparing them with
// the slot, and then sifts the slot up from there, a step or two at most.
// Measured on the simulator at 240 threads: 2.5-5.5% less CPU time a run
// than comparing with branches, for 60 more instructions a request.
func (q waiters) down(i int) {
	s := q[i]
	top := i
	n := len(q)
	for {
		c := 4*i + 1
		if c+4 > n {
			if c < n { // the last node with children, fewer than four
				m := c
				for j := c + 1; j < n; j++ {
					if before(&q[j], &q[m]) {
						m = j
					}
				}
				q[i] = q[m]
				i = m
			}
			break
		}
		ch := q[c : c+4 : c+4]
		a := earlier(&ch[1], &ch[0])
		b := 2 + earlier(&ch[3], &ch[2])
		a ^= (a ^ b) & -earlier(&ch[b&3], &ch[a&3]) // the lesser of a and b
		m := c + int(a)
		q[i] = q[m]
		i = m
	}
	for i > top {
		p := (i - 1) / 4
		if !before(&s, &q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = s
}

// Task is a participant that drives time without a goroutine of its own:
// a state machine that a Virtual clock steps from one wake-up to the next
// on its one loop goroutine. A thousand simulated clients then cost a
// thousand small structs and no goroutine switches, where a goroutine each
// would cost a stack each and a hand-off through the scheduler at every
// wake-up.
type Task interface {
	// Step runs the task from its last wake-up until it next waits. err is
	// nil at its start and when its last sleep ran its course, and that
	// sleep's context's error when the context ended it (as SleepUntil
	// returns). It returns the model time to wake it at and the context it
	// sleeps with (one that == can compare, as every context of the
	// context package is), or ok false once it has ended. A time not after now
	// steps it again at once, with the context's error, as SleepUntil
	// returns at once.
	Step(err error) (at time.Time, ctx context.Context, ok bool)
}

// Warmer is a Task that can bring what its next step reads into the
// processor's cache ahead of time. With 15,000 simulated threads every
// thread's state is cold by its next request, and a step that met its
// cache misses one at a time, as its code reached each structure, would
// spend half its time waiting for memory. The clock calls Warm on the task
// that wakes next as soon as it has stepped the current one, once it runs
// enough tasks that their states do not stay cached (warmTasks), having
// prefetched the waiters of the tasks that may wake after it. Warm comes
// before the clock takes its lock, not before the step: the lock's atomic
// instruction waits for the step's stores to reach the cache, and the
// warm-up's misses then wait alongside them rather than after.
type Warmer interface {
	// Warm prefetches (Prefetch) what the task's next step reads. It must
	// not change the task's state, nor wait on anything but its own reads
	// of the task's pointers: its wake-up may yet change.
	Warm()
}

// DeepWarmer is a Warmer whose next step also reads what its state
// points at. The clock then warms it in two stages, a step apart: Warm two
// tasks ahead, which prefetches the task's own state without reading it,
// and WarmDeep one ahead, when that state has arrived, which reads its
// pointers without waiting and prefetches what they point at. A step then
// meets neither its own state's misses nor those of the structures behind
// it.
type DeepWarmer interface {
	Warmer
	// WarmDeep prefetches what the task's state points at. The rules of
	// Warm hold for it too.
	WarmDeep()
}

// Hint is where a task's next step will most likely read or write, kept
// by the task at the end of its step, when it knows: some bytes at an
// address. Kept as a number, it holds nothing alive, and may outlive what
// it points at (prefetchAt). It is one word, the address in its low
// hintBits and the length above them: a simulated thread keeps several
// among its state, every line of which its step must bring back.
type Hint struct{ v uint64 }

// hintBits are a hint's bits of address: a user address on amd64 and
// arm64 has 48 at most.
const hintBits = 48

// PrefetchHints prefetches every hint.
func PrefetchHints(hs []Hint) {
	for _, h := range hs {
		prefetchAt(h.where())
	}
}

// Hinted returns a hint of n bytes at p: none (a hint of nothing) for an
// address or a length too large to keep, which then goes unwarmed.
func Hinted(p unsafe.Pointer, n uintptr) Hint { return hintOf(uint64(uintptr(p)), uint64(n)) }

// hintOf is Hinted of an address as a number.
func hintOf(addr, n uint64) Hint {
	if addr >= 1<<hintBits || n >= 1<<(64-hintBits) {
		return Hint{}
	}
	return Hint{addr | n<<hintBits}
}

// where returns the address and length a hint keeps.
func (h Hint) where() (addr, n uintptr) {
	return uintptr(h.v & (1<<hintBits - 1)), uintptr(h.v >> hintBits)
}

// warmSteps warms the tasks that wake next and after it: a DeepWarmer
// each a stage further than a step ago (see DeepWarmer), and a Warmer
// that is no DeepWarmer just before its step (see shallowTask).
func warmSteps(next, after *waiter) {
	if next.t != nil {
		next.t.WarmDeep()
	}
	if after != nil && after.t != nil {
		after.t.Warm()
	}
}

// warmTasks is how many tasks a clock runs before it warms them. Fewer
// tasks' states stay in the processor's cache between their steps, and
// warming them costs time for nothing: measured on the simulator's closed
// loop, warming every task cost 7% at 2,400 threads, broke even at 3,000,
// and saved 2-10% at 6,000 and 9-14% at 15,000.
const warmTasks = 3000

// GoTask starts t as a participant that drives time, as Go starts a
// goroutine: t begins in its turn at the current model time, and its
// sleeps and wake-ups are ordered exactly as those of a goroutine that
// slept at the same points with a Sleeper context would be, so a run is
// the same whichever way its threads are driven. A task must not wait on the clock inside Step
// (SleepUntil would wait for the loop that runs it): it returns instead.
func (c *Virtual) GoTask(t Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.taskWaiter()
	switch wt := t.(type) {
	case steppedTask: // a DeepWarmer
		w.t = wt
	case Warmer:
		w.t = shallowTask{t, wt}
	default:
		w.t = coldTask{t}
	}
	if c.run == nil {
		c.run = make(chan *waiter, 1)
	}
	w.at = c.offset()
	c.push(w)
	c.drivers++
	c.tasks++
	if !c.looping {
		c.looping = true
		go c.loop()
	}
	c.advance()
}

// taskWaiters is how many waiters of tasks a clock makes at once, in an
// array: 32 KB, which the allocator begins on a cache line, as each
// waiter then begins (see waiter).
const taskWaiters = 256

// taskWaiter returns a new task's waiter. Called with c.mu held.
func (c *Virtual) taskWaiter() *waiter { return c.waiters.Next(taskWaiters) }

// loop runs tasks, one step at a time, while any lives: those another
// participant's wait hands it through run, and those it wakes itself.
func (c *Virtual) loop() {
	for w := range c.run {
		if w = c.steps(w); w == nil && !c.stillLooping() {
			return
		}
	}
}

// stillLooping reports whether the loop must wait for more tasks: it ends
// with the last, and GoTask starts another.
func (c *Virtual) stillLooping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tasks == 0 {
		c.looping = false
		// No task sleeps with the contexts any longer: a suite's context
		// that outlives this run must not keep its clock.
		for _, stop := range c.unwatch {
			stop()
		}
		c.watched, c.unwatch = nil, nil
		c.waiters.Drop() // nor the rest of an array of waiters, the ended tasks'
	}
	return c.looping
}

// steps runs w and the tasks that wake after it while each next wake-up
// is a task's, and returns nil when the next is a goroutine's (or nobody
// is due).
func (c *Virtual) steps(w *waiter) *waiter {
	var err error
	if w.cancelled {
		err = w.ctx.Err()
	}
	var next, after *waiter // to warm after the step: see warmAhead
	for {
		at, ctx, ok := w.t.Step(err)
		if next != nil {
			warmSteps(next, after)
			next, after = nil, nil
		}
		var off time.Duration
		if ok {
			off = c.since(at)
		}
		if ok && off <= c.offset() {
			// Read without the lock: time stands still while a task
			// runs, since advance moves it only when no participant does.
			err = ctx.Err()
			continue
		}
		c.mu.Lock()
		c.owner = true
		if ok {
			// Under the lock: an interrupt's wake-up (sleepTask's watch)
			// that comes after this finds the sleep queued.
			if err = ctx.Err(); err != nil { // ended already: its sleep is over before it began
				c.owner = false
				c.mu.Unlock()
				continue
			}
			c.sleepTask(w, off, ctx)
		} else {
			c.tasks--
			c.active--
			// The waiter is in an array with others (see taskWaiter):
			// it must not keep the task's state once the task ends.
			w.t, w.ctx, w.done = nil, nil, nil
			c.advance()
		}
		c.owner = false
		w, c.next = c.next, nil
		if w != nil && c.tasks >= c.warmAt {
			next, after = c.q.warmAhead()
		}
		c.mu.Unlock()
		if w == nil {
			return nil
		}
		err = nil
		if w.cancelled {
			err = w.ctx.Err()
		}
	}
}

// sleepTask queues task w's sleep until offset at with ctx and wakes the next
// participant, as advance does. Called with c.mu held.
func (c *Virtual) sleepTask(w *waiter, at time.Duration, ctx context.Context) {
	w.cancelled = false
	// A task sleeps with the context of its last sleep, most often: its
	// Done, and the watch on it, are as they were. (A context's Done is
	// the same channel every time it is asked.)
	if !sameContext(ctx, w.ctx) {
		w.ctx, w.done = ctx, ctx.Done()
		if w.done != nil && !c.watching(w.done) {
			// An end that no Cancel brings (an interrupt) wakes the tasks that
			// sleep with the context, at once, as a goroutine's sleep ends.
			c.watched = append(c.watched, w.done)
			c.unwatch = append(c.unwatch, context.AfterFunc(ctx, func() { c.Cancel(func() {}) }))
		}
	}
	w.at = at
	c.active--
	c.drivers++
	if c.active != 0 {
		c.push(w)
		c.advance()
		return
	}
	// Every participant waits, so advance would wake the first of w and
	// the queued sleeps: pushPop finds it with one sift instead of a push
	// and a pop, and w, when it is the first, never enters the heap.
	c.seq++
	w.seq = c.seq
	c.wake(c.q.pushPop(w))
}

// sameContext reports whether a and b are one context, as a == b does
// when it is true, without the runtime's call for comparing interfaces:
// the same dynamic type and the same pointer (or box). It may report
// false for equal contexts (two boxes of one value, which no context of
// the context package is): sleepTask then only does more work.
func sameContext(a, b context.Context) bool {
	type iface struct{ tab, data unsafe.Pointer }
	return *(*iface)(unsafe.Pointer(&a)) == *(*iface)(unsafe.Pointer(&b))
}

// watching reports whether the end of a context with done already wakes
// its tasks. A run's tasks sleep with two contexts, so a scan is cheap.
func (c *Virtual) watching(done <-chan struct{}) bool {
	for _, d := range c.watched {
		if d == done {
			return true
		}
	}
	return false
}
