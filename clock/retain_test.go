package clock_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
)

// collected runs tasks that sleep with ctx on a clock of their own until
// they end, drops the clock, and reports whether the garbage collector
// then frees it.
func collected(t *testing.T, ctx context.Context) bool {
	t.Helper()
	freed := make(chan struct{})
	func() {
		c := clock.NewVirtual(epoch)
		runtime.SetFinalizer(c, func(*clock.Virtual) { close(freed) })
		var ss []*stepper
		c.Hold(1)
		for range 1000 {
			s := &stepper{c: c, ctx: ctx, step: time.Second, n: 3, ended: make(chan struct{})}
			ss = append(ss, s)
			c.GoTask(s)
		}
		c.Release()
		for _, s := range ss {
			<-s.ended
		}
	}()
	for range 20 {
		runtime.GC()
		select {
		case <-freed:
			return true
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// TestEndedTasksDoNotKeepTheirClock: once a clock's tasks have ended, the
// contexts they slept with do not keep the clock (and its heap, as large
// as its threads were many) alive. A suite's runs each have a clock, and
// every run's threads sleep with the suite's context, which lives until
// the last run ends.
func TestEndedTasksDoNotKeepTheirClock(t *testing.T) {
	if !collected(t, context.Background()) {
		t.Skip("the collector keeps a clock even without a context: the check says nothing")
	}
	suite, cancel := context.WithCancel(context.Background())
	defer cancel()
	if !collected(t, suite) {
		t.Fatal("the clock of ended tasks is still reachable from the context they slept with")
	}
	runtime.KeepAlive(suite)
}
