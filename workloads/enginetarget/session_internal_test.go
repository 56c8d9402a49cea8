package enginetarget

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
)

// TestSessionsBeginOnALine: a simulation's sessions, which its threads
// read at every request, are whole cache lines and each begins on one;
// threads that start theirs at once get sessions of their own; and once
// the simulation ends the target keeps none of them.
func TestSessionsBeginOnALine(t *testing.T) {
	if size := unsafe.Sizeof(session{}); size%64 != 0 {
		t.Errorf("a session is %d bytes, not whole lines", size)
	}
	tg, err := New(engine.Config{Profile: engine.None(), Clock: clock.NewVirtual(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	tg.Unshared(true)
	const n = 3*sessions + 1
	got := make([]*session, n)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = tg.NewSession(uint64(i)).(*session) })
	}
	wg.Wait()
	seen := map[*session]bool{}
	for i, s := range got {
		if p := uintptr(unsafe.Pointer(s)); p%64 != 0 {
			t.Fatalf("session %d begins %d bytes into a line", i, p%64)
		}
		if seen[s] {
			t.Fatalf("two threads were given one session")
		}
		seen[s] = true
		if s.call != &s.own || s.call.Rand != &s.rand {
			t.Fatalf("session %d calls the engine with another's state", i)
		}
	}
	tg.Unshared(false)
	if tg.made.Held() {
		t.Errorf("the target keeps an array of sessions after the simulation")
	}
	if s := tg.NewSession(1).(*session); s.call != &s.own {
		t.Errorf("a session in wall time calls the engine with another's state")
	}
}
