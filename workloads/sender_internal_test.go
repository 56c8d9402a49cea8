package workloads

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
)

// doOnly is a session that only waits for its answers.
type doOnly struct{}

func (doOnly) Do(context.Context, *Op) (time.Time, error) { return time.Time{}, nil }

// sendOnly sends without waiting, and neither warms nor hints.
type sendOnly struct {
	doOnly
	sent *int
}

func (s sendOnly) Send(context.Context, *Op) (time.Time, error) { *s.sent++; return time.Time{}, nil }

// sendWarm sends, and warms, but keeps no hints.
type sendWarm struct {
	sendOnly
	warmed *int
}

func (s sendWarm) Warm() { *s.warmed++ }

// sendAll is a sender in full, as the engine's session is.
type sendAll struct {
	sendWarm
	at *byte
}

func (s sendAll) Hints(hs []clock.Hint) []clock.Hint {
	return append(hs, clock.Hinted(unsafe.Pointer(s.at), 1))
}

// TestAsSenderKeepsWhatTheSessionHas: a thread holds its session as one
// sender, which sends, warms and hints as the session does, and does
// nothing of what the session cannot.
func TestAsSenderKeepsWhatTheSessionHas(t *testing.T) {
	if s := asSender(doOnly{}); s != nil {
		t.Fatalf("a session that cannot send without waiting is the sender %T", s)
	}
	var sent, warmed int
	var b byte
	for _, c := range []struct {
		sess         Session
		warms, hints bool
	}{
		{sendOnly{sent: &sent}, false, false},
		{sendWarm{sendOnly{sent: &sent}, &warmed}, true, false},
		{sendAll{sendWarm{sendOnly{sent: &sent}, &warmed}, &b}, true, true},
	} {
		sent, warmed = 0, 0
		s := asSender(c.sess)
		if s == nil {
			t.Fatalf("%T is no sender", c.sess)
		}
		if _, err := s.Send(context.Background(), &Op{}); err != nil || sent != 1 {
			t.Errorf("%T: Send went to the session %d times (%v)", c.sess, sent, err)
		}
		s.Warm()
		if got := warmed == 1; got != c.warms {
			t.Errorf("%T: warmed %d times", c.sess, warmed)
		}
		if got := len(s.Hints(nil)) == 1; got != c.hints {
			t.Errorf("%T: %d hints", c.sess, len(s.Hints(nil)))
		}
	}
}
