package clock_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
)

// sleeper is a participant that sleeps through a list of wake-ups, some
// with a context that the deadline ends, and logs what it sees: as a
// Task, or as a goroutine that sleeps at the same points.
type sleeper struct {
	name  string
	c     *clock.Virtual
	log   *[]string
	ctx   context.Context // the deadline's: Cancel ends it
	steps []time.Duration
	i     int
	done  func()
}

func (s *sleeper) Step(err error) (time.Time, context.Context, bool) {
	if s.i > 0 {
		*s.log = append(*s.log, fmt.Sprintf("%s#%d@%v:%v", s.name, s.i, s.c.Now().Sub(epoch), err))
	}
	if s.i == len(s.steps) || (err != nil && s.i > 0) {
		s.done()
		return time.Time{}, nil, false
	}
	d := s.steps[s.i]
	s.i++
	ctx := context.Background()
	if s.i%2 == 0 {
		ctx = s.ctx
	}
	return epoch.Add(d), ctx, true
}

// schedule runs three sleepers and a deadline that cancels their context
// at 5 s, each sleeper as a task or as a goroutine, and returns the log of
// their wake-ups.
func schedule(t *testing.T, asTask []bool) string {
	t.Helper()
	c := clock.NewVirtual(epoch)
	var log []string
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	c.Hold(1)
	c.Go(func() {
		c.SleepUntil(context.Background(), epoch.Add(5*time.Second))
		log = append(log, "deadline")
		c.Cancel(cancel)
	})
	plans := [][]time.Duration{
		{time.Second, 2 * time.Second, 2 * time.Second, 7 * time.Second, 9 * time.Second},
		{2 * time.Second, 2 * time.Second, 0, 6 * time.Second, 8 * time.Second},
		{time.Second, 5 * time.Second, 5 * time.Second, 6 * time.Second, 10 * time.Second},
	}
	for i, plan := range plans {
		wg.Add(1)
		s := &sleeper{name: string(rune('a' + i)), c: c, log: &log, ctx: ctx, steps: plan, done: wg.Done}
		if asTask[i] {
			c.GoTask(s)
			continue
		}
		c.Go(func() {
			var err error
			for {
				at, sctx, ok := s.Step(err)
				if !ok {
					return
				}
				err = c.SleepUntil(sctx, at)
			}
		})
	}
	c.Release()
	wg.Wait()
	return strings.Join(log, " ")
}

// TestTasksWakeAsGoroutinesWould: a participant run as a task wakes at the
// same model times, in the same order among the others, and sees the same
// cancellations as one run as a goroutine: a run is the same whichever way
// its threads are driven.
func TestTasksWakeAsGoroutinesWould(t *testing.T) {
	want := schedule(t, []bool{false, false, false})
	for _, mix := range [][]bool{{true, true, true}, {true, false, true}, {false, true, false}} {
		if got := schedule(t, mix); got != want {
			t.Errorf("tasks %v woke as\n %s\nwhere goroutines woke as\n %s", mix, got, want)
		}
	}
	if !strings.Contains(want, "context canceled") || !strings.Contains(want, "deadline") {
		t.Fatalf("the schedule does not exercise cancellation: %s", want)
	}
}

// stepper is a task that sleeps n times, step apart, with ctx.
type stepper struct {
	c     *clock.Virtual
	ctx   context.Context
	step  time.Duration
	n     int
	woke  []error
	ended chan struct{}
}

func (s *stepper) Step(err error) (time.Time, context.Context, bool) {
	if len(s.woke) > 0 || err != nil {
		s.woke = append(s.woke, err)
	} else {
		s.woke = append(s.woke, nil)
	}
	if len(s.woke) > s.n || err != nil {
		close(s.ended)
		return time.Time{}, nil, false
	}
	return s.c.Now().Add(s.step), s.ctx, true
}

// TestTaskInterrupted: a context that ends by itself (an interrupt), not
// through Cancel, wakes the tasks that sleep with it at once.
func TestTaskInterrupted(t *testing.T) {
	c := clock.NewVirtual(epoch)
	ctx, cancel := context.WithCancel(context.Background())
	s := &stepper{c: c, ctx: ctx, step: time.Hour, n: 3, ended: make(chan struct{})}
	c.Hold(1)
	c.GoTask(s)
	c.Go(func() { // a goroutine that holds time back until the task sleeps
		c.SleepUntil(context.Background(), epoch.Add(30*time.Minute))
		cancel()
	})
	c.Release()
	select {
	case <-s.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted task never woke")
	}
	if n := len(s.woke); n == 0 || s.woke[n-1] != context.Canceled {
		t.Fatalf("the task woke with %v, want context.Canceled last", s.woke)
	}
}

// TestTaskDueNowStepsAgain: a wake-up not after now steps the task again
// at once, with its context's error, as SleepUntil returns at once.
func TestTaskDueNowStepsAgain(t *testing.T) {
	c := clock.NewVirtual(epoch)
	s := &stepper{c: c, ctx: context.Background(), step: 0, n: 4, ended: make(chan struct{})}
	c.GoTask(s)
	<-s.ended
	if len(s.woke) != 5 || c.Now() != epoch {
		t.Fatalf("woke %d times, clock at %v", len(s.woke), c.Now().Sub(epoch))
	}
}

// TestTaskLoopEnds: the loop goroutine that runs tasks ends with the last
// of them, and starts again for the next.
func TestTaskLoopEnds(t *testing.T) {
	c := clock.NewVirtual(epoch)
	before := runtime.NumGoroutine()
	for range 3 {
		var ss []*stepper
		c.Hold(1) // they start together
		for range 100 {
			s := &stepper{c: c, ctx: context.Background(), step: time.Second, n: 10, ended: make(chan struct{})}
			ss = append(ss, s)
			c.GoTask(s)
		}
		c.Release()
		for _, s := range ss {
			<-s.ended
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left, %d before", n, before)
	}
	if got := c.Now().Sub(epoch); got != 30*time.Second {
		t.Fatalf("clock at %v, want 30s: three rounds of ten 1 s sleeps", got)
	}
}
