package clock

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// warmTask sleeps through a fixed pseudo-random plan and logs its steps,
// and, as a Warmer, the warm-ups the clock asks of it.
type warmTask struct {
	id    int
	c     *Virtual
	log   *[]string
	left  int
	state [4]uint64
	done  func()
}

func (t *warmTask) Step(error) (time.Time, context.Context, bool) {
	*t.log = append(*t.log, fmt.Sprintf("step %d", t.id))
	if t.left == 0 {
		t.done()
		return time.Time{}, nil, false
	}
	t.left--
	d := time.Duration(1+(t.id*7919+t.left*104729)%13) * time.Millisecond
	return t.c.Now().Add(d), context.Background(), true
}

func (t *warmTask) Warm() {
	*t.log = append(*t.log, fmt.Sprintf("warm %d", t.id))
	Prefetch(unsafe.Pointer(&t.state), unsafe.Sizeof(t.state))
}

// runWarmTasks runs n warmTasks on a clock that warms them from warmAt
// tasks on, and returns the log.
func runWarmTasks(n, warmAt int) []string {
	c := NewVirtual(time.Unix(0, 0))
	c.warmAt = warmAt
	var log []string
	var wg sync.WaitGroup
	c.Hold(1)
	for i := range n {
		wg.Add(1)
		c.GoTask(&warmTask{id: i, c: c, log: &log, left: 20, done: wg.Done})
	}
	c.Release()
	wg.Wait()
	return log
}

// TestWarmIsForTheNextTask checks that warming changes nothing in what
// the tasks do, and that the task warmed, right after a step, is the one
// the clock steps next, unless the task just stepped wakes first.
func TestWarmIsForTheNextTask(t *testing.T) {
	cold := runWarmTasks(300, 1<<30)
	warm := runWarmTasks(300, 1)
	steps := slices.DeleteFunc(slices.Clone(warm), func(s string) bool { return s[:4] == "warm" })
	if !slices.Equal(cold, steps) {
		t.Fatal("the tasks stepped in another order when warmed")
	}
	if slices.ContainsFunc(cold, func(s string) bool { return s[:4] == "warm" }) {
		t.Fatal("a clock below its warmAt warmed a task")
	}
	warmed, hits := 0, 0
	for i, s := range warm {
		var id int
		if _, err := fmt.Sscanf(s, "warm %d", &id); err != nil {
			continue
		}
		warmed++
		// step W, warm X, then the next step is X's, or W's again.
		if i == 0 || warm[i-1][:4] != "step" {
			t.Fatalf("a warm-up not right after a step: %q", warm[max(0, i-1):i+1])
		}
		now := warm[i-1]
		next := slices.IndexFunc(warm[i+1:], func(s string) bool { return s[:4] == "step" })
		if next < 0 {
			t.Fatalf("no step after %q", warm[i:])
		}
		switch warm[i+1+next] {
		case fmt.Sprintf("step %d", id):
			hits++
		case now:
		default:
			t.Fatalf("stepped %q, warmed task %d, then stepped %q", now, id, warm[i+1+next])
		}
	}
	if warmed < len(steps)/2 || hits < warmed*9/10 {
		t.Fatalf("%d steps, %d warm-ups, %d of them for the next task", len(steps), warmed, hits)
	}
}

// deepTask is a warmTask that is warmed in two stages (DeepWarmer).
type deepTask struct{ warmTask }

func (t *deepTask) WarmDeep() { *t.log = append(*t.log, fmt.Sprintf("deep %d", t.id)) }

// TestDeepWarmIsInTwoStages checks that a DeepWarmer is warmed in stages a
// step apart: after a step, the next task's deep warm-up, then the shallow
// one of the task after it; that its deep warm-up is most often the
// step's just before it and its shallow one the step's before that; and
// that warming changes nothing in what the tasks do.
func TestDeepWarmIsInTwoStages(t *testing.T) {
	run := func(warmAt int) []string {
		c := NewVirtual(time.Unix(0, 0))
		c.warmAt = warmAt
		var log []string
		var wg sync.WaitGroup
		c.Hold(1)
		for i := range 300 {
			wg.Add(1)
			c.GoTask(&deepTask{warmTask{id: i, c: c, log: &log, left: 20, done: wg.Done}})
		}
		c.Release()
		wg.Wait()
		return log
	}
	cold, warm := run(1<<30), run(1)
	steps := slices.DeleteFunc(slices.Clone(warm), func(s string) bool { return s[:4] != "step" })
	if !slices.Equal(cold, steps) {
		t.Fatal("the tasks stepped in another order when warmed")
	}
	var order []int // the tasks in the order they stepped
	for _, s := range steps {
		var id int
		fmt.Sscanf(s, "step %d", &id)
		order = append(order, id)
	}
	// After step k: deep for order[k+1], then warm for order[k+2].
	k, deepHits, warmHits, deeps, warms := -1, 0, 0, 0, 0
	for i, s := range warm {
		var id int
		switch {
		case s[:4] == "step":
			k++
		case s[:4] == "deep":
			fmt.Sscanf(s, "deep %d", &id)
			deeps++
			if warm[i-1][:4] != "step" {
				t.Fatalf("a deep warm-up not right after a step: %q", warm[i-1:i+1])
			}
			if k+1 < len(order) && order[k+1] == id {
				deepHits++
			}
		case s[:4] == "warm":
			fmt.Sscanf(s, "warm %d", &id)
			warms++
			if p := warm[i-1][:4]; p != "deep" && p != "step" {
				t.Fatalf("a warm-up after neither a step nor a deep one: %q", warm[i-1:i+1])
			}
			if k+2 < len(order) && order[k+2] == id {
				warmHits++
			}
		}
	}
	t.Logf("%d steps: %d deep, %d hits; %d warm, %d hits", len(steps), deeps, deepHits, warms, warmHits)
	if deeps < len(steps)/2 || deepHits < deeps*9/10 || warms < len(steps)/2 || warmHits < warms*9/10 {
		t.Fatalf("%d steps: %d deep warm-ups, %d for the next task; %d warm-ups, %d for the one after", len(steps), deeps, deepHits, warms, warmHits)
	}
}

// TestPrefetchAnyAddress checks that Prefetch neither faults nor runs on:
// nil, a length of zero, memory past an object's end, a length as large
// as can be, and addresses at the top of the address space, where the
// next line's address wraps to zero.
func TestPrefetchAnyAddress(t *testing.T) {
	Prefetch(nil, 0)
	Prefetch(nil, 1<<20)
	var b [3]byte
	Prefetch(unsafe.Pointer(&b), 1<<16)
	Prefetch(unsafe.Pointer(&b), ^uintptr(0))
	for back := range uintptr(130) {
		for _, n := range []uintptr{1, 16, 64, 65, 200, ^uintptr(0)} {
			Prefetch(unsafe.Add(nil, ^uintptr(0)-back), n)
		}
	}
}

// TestHintKeepsWhereAndHowMuch: a hint, one word, keeps its address and
// length as they were given; one that cannot keep them is a hint of
// nothing, never one of another place.
func TestHintKeepsWhereAndHowMuch(t *testing.T) {
	var x [320]byte
	p := uintptr(unsafe.Pointer(&x))
	for _, n := range []uintptr{0, 8, 320, 4096, 1<<16 - 1} {
		if a, m := Hinted(unsafe.Pointer(&x), n).where(); a != p || m != n {
			t.Errorf("Hinted(%#x, %d) keeps %#x and %d", p, n, a, m)
		}
	}
	for _, c := range []struct{ addr, n uint64 }{{1 << 48, 8}, {1<<64 - 64, 8}, {uint64(p), 1 << 16}} {
		if h := hintOf(c.addr, c.n); h != (Hint{}) {
			a, m := h.where()
			t.Errorf("a hint of %d bytes at %#x keeps %#x and %d, not nothing", c.n, c.addr, a, m)
		}
	}
}

// TestTaskWaitersBeginOnALine: a task's waiter begins on a cache line, so
// that the line warmAhead prefetches of it is all that its sleep reads.
func TestTaskWaitersBeginOnALine(t *testing.T) {
	c := NewVirtual(time.Unix(0, 0))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range 2*taskWaiters + 1 {
		if p := uintptr(unsafe.Pointer(c.taskWaiter())); p%64 != 0 {
			t.Fatalf("task waiter %d begins %d bytes into a line", i, p%64)
		}
	}
}

// TestWaiterIsTwoLines: on a 64-bit machine a waiter is two cache lines,
// so that in taskWaiter's arrays each begins on one.
func TestWaiterIsTwoLines(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(waiter{}) != 128 {
		t.Errorf("a waiter is %d bytes, not 128", unsafe.Sizeof(waiter{}))
	}
}

// TestEndedTasksAreLetGo: a clock that outlives its tasks (an engine's,
// over a suite's runs) keeps none of their state, though their waiters
// came from one array.
func TestEndedTasksAreLetGo(t *testing.T) {
	c := NewVirtual(time.Unix(0, 0))
	const n = 10
	var freed atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		task := &warmTask{c: c, log: new([]string), left: 3, done: wg.Done}
		runtime.AddCleanup(task, func(*atomic.Int32) { freed.Add(1) }, &freed)
		c.GoTask(task)
	}
	wg.Wait()
	if got := collected(&freed, n); got != n {
		t.Errorf("%d of %d ended tasks were freed while their clock lives", got, n)
	}
	runtime.KeepAlive(c)
}

// TestEndedTasksAreLetGoAmongLiveOnes: tasks that end while another still
// lives, their waiters in one array with its, are let go too.
func TestEndedTasksAreLetGoAmongLiveOnes(t *testing.T) {
	c := NewVirtual(time.Unix(0, 0))
	// No time passes until every task is started: the others' first
	// steps, at time 0, come before g's second, which holds the loop.
	c.Hold(1)
	g := &gated{c: c, entered: make(chan struct{}), gate: make(chan struct{}), ended: make(chan struct{})}
	c.GoTask(g)
	const n = 10
	var freed atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		task := &warmTask{c: c, log: new([]string), done: wg.Done} // ends at its first step, before g's second
		runtime.AddCleanup(task, func(*atomic.Int32) { freed.Add(1) }, &freed)
		c.GoTask(task)
	}
	c.Release()
	wg.Wait()
	<-g.entered // g lives, in its second step
	if got := collected(&freed, n); got != n {
		t.Errorf("%d of %d ended tasks were freed while another task lives", got, n)
	}
	close(g.gate)
	<-g.ended
}

// gated is a task that sleeps a millisecond, and then, in its second
// step, waits for its gate before it ends.
type gated struct {
	c                    *Virtual
	steps                int
	entered, gate, ended chan struct{}
}

func (g *gated) Step(error) (time.Time, context.Context, bool) {
	g.steps++
	if g.steps == 1 {
		return g.c.Now().Add(time.Millisecond), context.Background(), true
	}
	close(g.entered)
	<-g.gate
	close(g.ended)
	return time.Time{}, nil, false
}

// collected collects garbage until freed counts n, for a while at most,
// and returns what it counts.
func collected(freed *atomic.Int32, n int32) int32 {
	for range 20 {
		runtime.GC()
		if freed.Load() == n {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return freed.Load()
}
