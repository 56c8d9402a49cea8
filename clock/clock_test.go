package clock_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
)

var ctx = context.Background()

var epoch = time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)

func TestVirtualClockAdvancesWhenAllWait(t *testing.T) {
	c := clock.NewVirtual(epoch)
	c.Hold(3)
	var mu sync.Mutex
	var woke []time.Duration
	var wg sync.WaitGroup
	for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
		wg.Go(func() {
			defer c.Release()
			if err := c.SleepUntil(ctx, epoch.Add(d)); err != nil {
				t.Error(err)
			}
			mu.Lock()
			woke = append(woke, c.Now().Sub(epoch))
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(woke) != 3 || c.Now() != epoch.Add(3*time.Second) {
		t.Fatalf("woke at %v, clock at %v", woke, c.Now())
	}
	for _, w := range woke {
		if w != time.Second && w != 2*time.Second && w != 3*time.Second {
			t.Fatalf("a sleeper saw %v", w)
		}
	}
}

func TestVirtualClockStandsStillWhileAParticipantRuns(t *testing.T) {
	c := clock.NewVirtual(epoch)
	c.Hold(2)
	busy := make(chan struct{})
	done := make(chan struct{})
	go func() { // waits on the clock
		defer c.Release()
		c.SleepUntil(ctx, epoch.Add(time.Hour))
		close(done)
	}()
	go func() { // runs without waiting on the clock until told
		defer c.Release()
		<-busy
	}()
	time.Sleep(20 * time.Millisecond) // real time: the clock must not move meanwhile
	if got := c.Now(); got != epoch {
		t.Fatalf("time passed to %v while a participant ran", got)
	}
	close(busy)
	<-done
	if c.Now() != epoch.Add(time.Hour) {
		t.Fatalf("clock at %v", c.Now())
	}
}

func TestVirtualClockBackgroundDoesNotDrive(t *testing.T) {
	c := clock.NewVirtual(epoch)
	bg := clock.Background(context.Background())
	ticks := make(chan time.Time, 100)
	stop, cancel := context.WithCancel(bg)
	var wg sync.WaitGroup
	wg.Go(func() { // a balancer-like loop
		next := epoch
		for {
			next = next.Add(15 * time.Second)
			if c.SleepUntil(stop, next) != nil {
				return
			}
			ticks <- c.Now()
		}
	})
	time.Sleep(20 * time.Millisecond)
	if c.Now() != epoch || len(ticks) != 0 {
		t.Fatalf("a lone background loop made time pass: %v, %d ticks", c.Now(), len(ticks))
	}
	c.Hold(1) // a participant sleeps a minute: the loop ticks 4 times meanwhile
	c.SleepUntil(ctx, epoch.Add(time.Minute))
	c.Release()
	cancel()
	wg.Wait()
	if len(ticks) != 4 {
		t.Fatalf("%d background ticks in a minute, want 4", len(ticks))
	}
}

// TestVirtualClockCancel checks that a sleep ends when its context does,
// during the sleep and, for a Sleeper's, before it, and that the clock's
// accounting survives: another participant's sleep still advances time to
// its own wake-up, not the cancelled one's.
func TestVirtualClockCancel(t *testing.T) {
	for _, sleeper := range []bool{false, true} {
		c := clock.NewVirtual(epoch)
		c.Hold(2)
		cctx, cancel := context.WithCancel(ctx)
		sctx := cctx
		if sleeper {
			var release func()
			sctx, release = clock.Sleeper(cctx)
			defer release()
		}
		vctx := context.WithValue(sctx, otherKey{}, 1) // values added on top keep a Sleeper's waiter
		errc := make(chan error, 2)
		go func() {
			defer c.Release()
			errc <- c.SleepUntil(vctx, epoch.Add(time.Hour))
			errc <- c.SleepUntil(sctx, epoch.Add(time.Hour)) // already cancelled
		}()
		time.Sleep(10 * time.Millisecond)
		cancel()
		for range 2 {
			select {
			case err := <-errc:
				if err != context.Canceled {
					t.Fatalf("sleeper %v: got %v, want %v", sleeper, err, context.Canceled)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("sleeper %v: a sleep with a cancelled context did not end", sleeper)
			}
		}
		c.SleepUntil(ctx, epoch.Add(time.Second))
		c.Release()
		if c.Now() != epoch.Add(time.Second) {
			t.Fatalf("sleeper %v: clock at %v", sleeper, c.Now())
		}
	}
}

// TestSleeperReusesItsWaiter checks that sleeps with a Sleeper's context
// wake on time and allocate nothing.
func TestSleeperReusesItsWaiter(t *testing.T) {
	c := clock.NewVirtual(epoch)
	c.Hold(1)
	defer c.Release()
	sctx, release := clock.Sleeper(context.Background())
	defer release()
	next := epoch
	allocs := testing.AllocsPerRun(100, func() {
		next = next.Add(time.Millisecond)
		if err := c.SleepUntil(sctx, next); err != nil {
			t.Fatal(err)
		}
		if c.Now() != next {
			t.Fatalf("woke at %v, want %v", c.Now(), next)
		}
	})
	if allocs != 0 {
		t.Fatalf("a sleep allocated %v times", allocs)
	}
}

// TestSleeperShared checks that goroutines wrongly sharing one Sleeper's
// context still each sleep their own time: the second gets a waiter of
// its own.
func TestSleeperShared(t *testing.T) {
	c := clock.NewVirtual(epoch)
	sctx, release := clock.Sleeper(ctx)
	defer release()
	const n = 8
	c.Hold(n)
	var mu sync.Mutex
	woke := map[time.Duration]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer c.Release()
			for j := range 50 {
				d := time.Duration(i*1000+j+1) * time.Millisecond
				if err := c.SleepUntil(sctx, epoch.Add(d)); err != nil {
					t.Error(err)
					return
				}
				if got := c.Now().Sub(epoch); got != d {
					t.Errorf("slept until %v, woke at %v", d, got)
				}
				mu.Lock()
				woke[d]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(woke) != n*50 {
		t.Fatalf("%d wake-ups, want %d", len(woke), n*50)
	}
}

// otherKey is a context value of some other package's.
type otherKey struct{}

// TestVirtualClockWakesInTurn checks that participants due at the same
// model time wake one at a time, in the order their sleeps began, and that
// participants started with Go begin in the order of the calls: what they
// share then sees them in an order that does not depend on how the machine
// schedules goroutines.
func TestVirtualClockWakesInTurn(t *testing.T) {
	const n = 16
	c := clock.NewVirtual(epoch)
	var running atomic.Int32
	var mu sync.Mutex
	var order []int
	turn := func(i int) {
		if running.Add(1) != 1 {
			t.Errorf("participant %d runs while another does", i)
		}
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		for range 10 { // a chance for any other woken participant to run meanwhile
			runtime.Gosched()
		}
		running.Add(-1)
	}
	var wg sync.WaitGroup
	wg.Add(n)
	c.Hold(1) // no time passes until all are started
	for i := range n {
		c.Go(func() {
			defer wg.Done()
			turn(i)
			for s := 1; s <= 3; s++ { // all due at once, three times
				if err := c.SleepUntil(ctx, epoch.Add(time.Duration(s)*time.Second)); err != nil {
					t.Error(err)
				}
				turn(i)
			}
		})
	}
	c.Release()
	wg.Wait()
	for k, i := range order {
		if i != k%n {
			t.Fatalf("participants woke in the order %v, want 0 to %d four times", order, n-1)
		}
	}
	if len(order) != 4*n || c.Now() != epoch.Add(3*time.Second) {
		t.Fatalf("%d turns, clock at %v", len(order), c.Now())
	}
}

// TestVirtualClockCancelIsAnEvent checks that a context a participant ends
// with Cancel wakes its sleepers at that moment of model time, one at a
// time in the order they began to sleep, before time passes to another
// participant's wake-up.
func TestVirtualClockCancelIsAnEvent(t *testing.T) {
	const n = 16
	c := clock.NewVirtual(epoch)
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	type woke struct {
		i   int
		at  time.Duration
		err error
	}
	var mu sync.Mutex
	var got []woke
	var wg sync.WaitGroup
	wg.Add(n + 2)
	c.Hold(1)
	c.Go(func() { // cancels at 1 s
		defer wg.Done()
		c.SleepUntil(ctx, epoch.Add(time.Second))
		c.Cancel(cancel)
	})
	c.Go(func() { // another participant, due at 2 s
		defer wg.Done()
		c.SleepUntil(ctx, epoch.Add(2*time.Second))
	})
	for i := range n {
		c.Go(func() {
			defer wg.Done()
			sctx := stop
			if i%2 == 0 { // Sleepers and plain contexts alike
				var release func()
				sctx, release = clock.Sleeper(stop)
				defer release()
			}
			err := c.SleepUntil(sctx, epoch.Add(time.Hour+time.Duration(i)))
			mu.Lock()
			got = append(got, woke{i, c.Now().Sub(epoch), err})
			mu.Unlock()
			for range 10 {
				runtime.Gosched()
			}
		})
	}
	c.Release()
	wg.Wait()
	for k, w := range got {
		if w.i != k || w.at != time.Second || w.err != context.Canceled {
			t.Fatalf("sleep %d of %d: sleeper %d woke at %v with %v, want sleeper %d at 1s with %v", k+1, n, w.i, w.at, w.err, k, context.Canceled)
		}
	}
	if len(got) != n || c.Now() != epoch.Add(2*time.Second) {
		t.Fatalf("%d sleepers woke, clock at %v", len(got), c.Now())
	}
}

// TestGoBackgroundStartsInTurn checks that a background loop started with
// GoBackground starts from the model time it was started at, however long
// its goroutine waits for a CPU while the drivers run.
func TestGoBackgroundStartsInTurn(t *testing.T) {
	c := clock.NewVirtual(epoch)
	bctx, cancel := context.WithCancel(ctx)
	var first time.Time
	var ticks int
	done := make(chan struct{})
	clock.GoBackground(c, bctx, func(ctx context.Context) {
		defer close(done)
		next := c.Now()
		first = next
		for {
			next = next.Add(15 * time.Second)
			if c.SleepUntil(ctx, next) != nil {
				return
			}
			ticks++
		}
	})
	driven := make(chan struct{})
	c.Hold(1)
	c.Go(func() {
		defer close(driven)
		for s := 1; s <= 3600; s++ {
			c.SleepUntil(ctx, epoch.Add(time.Duration(s)*time.Second))
		}
	})
	c.Release()
	<-driven
	cancel()
	<-done
	if !first.Equal(epoch) || ticks != 240 {
		t.Fatalf("the loop started at %v and ticked %d times in an hour, want %v and 240", first.Sub(epoch), ticks, time.Duration(0))
	}
}
