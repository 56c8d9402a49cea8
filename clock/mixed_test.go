package clock_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
)

// TestInterruptWakesEveryParticipant: tasks, and goroutines that sleep
// with a Sleeper context or a plain one, beside a background participant,
// all wake and end when their context is ended from outside the clock (an
// interrupt) at a moment the machine picks: no sleep is left waiting.
func TestInterruptWakesEveryParticipant(t *testing.T) {
	for iter := range 200 {
		c := clock.NewVirtual(epoch)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		bctx, bcancel := context.WithCancel(context.Background())
		clock.GoBackground(c, bctx, func(ctx context.Context) {
			next := c.Now()
			for {
				next = next.Add(7 * time.Millisecond)
				if c.SleepUntil(ctx, next) != nil {
					return
				}
			}
		})
		c.Hold(1)
		for i := range 20 {
			wg.Add(1)
			switch i % 3 {
			case 0:
				s := &stepper{c: c, ctx: ctx, step: time.Duration(i+1) * time.Millisecond, n: 1 << 30, ended: make(chan struct{})}
				c.GoTask(s)
				go func() { <-s.ended; wg.Done() }()
			case 1:
				c.Go(func() {
					defer wg.Done()
					sctx, rel := clock.Sleeper(ctx)
					defer rel()
					for c.SleepUntil(sctx, c.Now().Add(time.Duration(i)*time.Millisecond)) == nil {
					}
				})
			case 2:
				c.Go(func() {
					defer wg.Done()
					for c.SleepUntil(ctx, c.Now().Add(time.Duration(i)*time.Millisecond)) == nil {
					}
				})
			}
		}
		c.Release()
		time.Sleep(time.Duration(iter%7) * 100 * time.Microsecond)
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("iter %d: hung", iter)
		}
		bcancel()
	}
}

// rsleeper is a participant that sleeps through a plan of sleeps, each
// with one of a few contexts, and logs what it sees: as a Task, or as a
// goroutine that sleeps at the same points with a Sleeper of each context.
type rsleeper struct {
	name  string
	c     *clock.Virtual
	log   *[]string
	ctxs  []context.Context
	steps []time.Duration
	which []int
	i     int
	done  func()
}

func (s *rsleeper) Step(err error) (time.Time, context.Context, bool) {
	if s.i > 0 {
		*s.log = append(*s.log, fmt.Sprintf("%s#%d@%v:%v", s.name, s.i, s.c.Now().Sub(epoch), err))
	}
	if s.i == len(s.steps) || (err != nil && s.i > 0 && s.i%3 == 0) {
		s.done()
		return time.Time{}, nil, false
	}
	d := s.steps[s.i]
	ctx := s.ctxs[s.which[s.i]]
	s.i++
	return s.c.Now().Add(d), ctx, true
}

// planKey is the key of the value a plan's shared context carries.
type planKey struct{}

// rschedule runs a random plan of seed: sleepers, two participants that
// end two contexts with Cancel at random moments (one context shared, through
// a value, with a third), and a background participant that ticks; a
// sleeper is a task when asTask says so. It returns the log of wake-ups.
func rschedule(seed uint64, asTask func(int) bool) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	c := clock.NewVirtual(epoch)
	var log []string
	ctx, cancel := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	vctx := context.WithValue(ctx, planKey{}, 1)
	ctxs := []context.Context{context.Background(), ctx, vctx, ctx2}
	var wg sync.WaitGroup
	bgctx, bgcancel := context.WithCancel(context.Background())
	bgdone := make(chan struct{})
	bgstep := time.Duration(1+rng.IntN(5)) * time.Millisecond
	c.Hold(1)
	clock.GoBackground(c, bgctx, func(ctx context.Context) {
		defer close(bgdone)
		next := c.Now()
		for {
			next = next.Add(bgstep)
			if c.SleepUntil(ctx, next) != nil {
				return
			}
			log = append(log, fmt.Sprintf("bg@%v", c.Now().Sub(epoch)))
		}
	})
	d1, d2 := time.Duration(rng.IntN(40))*time.Millisecond, time.Duration(rng.IntN(60))*time.Millisecond
	wg.Add(2)
	c.Go(func() {
		defer wg.Done()
		c.SleepUntil(context.Background(), epoch.Add(d1))
		log = append(log, "cancel1")
		c.Cancel(cancel)
	})
	c.Go(func() {
		defer wg.Done()
		c.SleepUntil(context.Background(), epoch.Add(d2))
		log = append(log, "cancel2")
		c.Cancel(cancel2)
	})
	n := 2 + rng.IntN(8)
	for i := range n {
		wg.Add(1)
		m := rng.IntN(12)
		s := &rsleeper{name: string(rune('a' + i)), c: c, log: &log, ctxs: ctxs, done: wg.Done}
		for range m {
			s.steps = append(s.steps, time.Duration(rng.IntN(8))*time.Millisecond)
			s.which = append(s.which, rng.IntN(len(ctxs)))
		}
		if asTask(i) {
			c.GoTask(s)
			continue
		}
		c.Go(func() {
			own := map[context.Context]context.Context{}
			for _, x := range ctxs {
				sx, rel := clock.Sleeper(x)
				defer rel()
				own[x] = sx
			}
			var err error
			for {
				at, sctx, ok := s.Step(err)
				if !ok {
					return
				}
				err = c.SleepUntil(own[sctx], at)
			}
		})
	}
	c.Release()
	wg.Wait()
	bgcancel()
	<-bgdone
	// A background tick due when the last driver ends may come or not,
	// as the machine runs the end of the run and the cancellation.
	for len(log) > 0 && strings.HasPrefix(log[len(log)-1], "bg@") {
		log = log[:len(log)-1]
	}
	return strings.Join(log, " ")
}

// TestRandomSchedulesAsGoroutinesWould: over random plans, participants
// run as tasks (all, or some) wake at the same model times, in the same
// order, with the same errors, as goroutines that sleep with Sleeper
// contexts: a task's wake-up that is due goes on without the clock's lock,
// and a task that sleeps with its last context keeps its watch, without
// changing what any participant sees.
func TestRandomSchedulesAsGoroutinesWould(t *testing.T) {
	for seed := range uint64(500) {
		want := rschedule(seed, func(int) bool { return false })
		for k, mix := range []func(int) bool{func(int) bool { return true }, func(i int) bool { return i%2 == 0 }, func(i int) bool { return i%3 == 1 }} {
			if got := rschedule(seed, mix); got != want {
				t.Fatalf("seed %d mix %d:\n got %s\nwant %s", seed, k, got, want)
			}
		}
	}
}
