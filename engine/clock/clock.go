// Package clock is tablebench's time: a Virtual clock on which time passes
// only when every participant waits (exact, and as fast as the CPU allows),
// and a Scaled clock in wall time. The engine models in it, the harness
// measures in it, and the SDK target runs on a Scaled clock at 1.
package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
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
// Goroutines that drive time are declared with Hold before they start and
// call Release when they end. Background goroutines (the load balancer) wait
// with a context from Background: they are woken when their time comes but
// never make time pass on their own.
type Virtual struct {
	mu      sync.Mutex
	now     time.Time
	active  int // participants running (not waiting on the clock)
	drivers int // participants waiting on the clock
	q       waiters
}

// NewVirtual returns a virtual clock that starts at start.
func NewVirtual(start time.Time) *Virtual { return &Virtual{now: start} }

// Now returns the current model time.
func (c *Virtual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Hold declares n participants that are about to start.
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

type backgroundKey struct{}

// bgToken is one background goroutine's state: whether the clock woke it
// and it has not waited again yet, so time must not pass under it.
type bgToken struct{ running bool }

// Background marks ctx as one background goroutine's: on a Virtual it
// is woken on time but does not make time pass. Each background goroutine
// needs its own.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, &bgToken{})
}

type waiter struct {
	t     time.Time
	ch    chan struct{}
	bg    *bgToken // nil for a participant
	index int      // in the heap; -1 once woken or removed
}

// SleepUntil waits until model time t, or until ctx is done.
func (c *Virtual) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if !t.After(c.now) {
		c.mu.Unlock()
		return ctx.Err()
	}
	w := &waiter{t: t, ch: make(chan struct{})}
	w.bg, _ = ctx.Value(backgroundKey{}).(*bgToken)
	heap.Push(&c.q, w)
	switch {
	case w.bg == nil:
		c.active--
		c.drivers++
	case w.bg.running:
		w.bg.running = false
		c.active--
	}
	c.advance()
	c.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.index < 0 {
			// Woken at t as the context ended: the sleep is over, and saying so
			// keeps a run's last tick from depending on which case select saw.
			return nil
		}
		heap.Remove(&c.q, w.index) // still waiting: leave the queue and run again
		w.index = -1
		if w.bg == nil {
			c.drivers--
			c.active++
		}
		c.advance()
		return ctx.Err()
	}
}

// advance moves time to the next wake-up while every participant waits.
// Called with c.mu held.
func (c *Virtual) advance() {
	for c.active == 0 && c.drivers > 0 && c.q.Len() > 0 {
		c.now = maxTime(c.now, c.q[0].t)
		for c.q.Len() > 0 && !c.q[0].t.After(c.now) {
			w := heap.Pop(&c.q).(*waiter)
			if w.bg != nil {
				w.bg.running = true // runs until it waits again
			} else {
				c.drivers--
			}
			c.active++
			close(w.ch)
		}
	}
}

type waiters []*waiter

func (q waiters) Len() int { return len(q) }
func (q waiters) Less(i, j int) bool {
	return q[i].t.Before(q[j].t)
}
func (q waiters) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *waiters) Push(x any) {
	w := x.(*waiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *waiters) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*q = old[:len(old)-1]
	return w
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
