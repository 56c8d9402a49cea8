package workloads_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
)

// rateLimiting answers every other request 429 RequestRateTooLarge asking
// for a 1,234 ms wait, the others OK; each answer charges 5 RU and comes
// after 10 ms.
type rateLimiting struct{ workloads.Target }

func (f rateLimiting) NewSession(seed uint64) workloads.Session {
	return &rateLimitSession{clock: f.Clock()}
}

type rateLimitSession struct {
	clock clock.Clock
	n     int
}

func (s *rateLimitSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	done := s.clock.Now().Add(10 * time.Millisecond)
	if err := s.clock.SleepUntil(ctx, done); err != nil {
		return done, err
	}
	s.n++
	op.Charge = 5
	if s.n%2 == 1 {
		op.Charge = 0
		err := tables.NewError(429, tables.CodeRequestRateTooLarge, tables.MsgRequestRateLarge)
		err.RetryAfter = 1234 * time.Millisecond
		return done, err
	}
	return done, nil
}

// TestRateLimitingIsRecorded: 429s count as throttled, their retry-afters
// and the request units charged are in the record, and the SDK policy
// waits what each 429 asks: one request (429, 1,234 ms, OK) takes 1,254 ms.
func TestRateLimitingIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Duration, spec.Warmup = 20*time.Second, 0
		r, err := workloads.DefaultRetry(workloads.RetrySDK)
		if err != nil {
			t.Fatal(err)
		}
		spec.Retry = r
		res := run(t, spec, rateLimiting{engineTarget(t)})
		ops := 20 / 1.254
		near(t, "requests", float64(res.Totals.Requests), 2*ops, 0.1)
		if res.Totals.Throttled != res.Errors[results.OutcomeRateLimited] || res.Totals.Throttled == 0 {
			t.Fatalf("429s not counted as throttled: throttled %d, errors %v", res.Totals.Throttled, res.Errors)
		}
		near(t, "throttled %", res.ThrottledPct, 50, 0.1)
		near(t, "RU/s", res.RequestUnitsPerSec, 5*ops/20, 0.1)
		if p := res.RetryAfterMs; p == nil || p.P50 < 1220 || p.Max > 1250 || p.Count != res.Totals.Throttled {
			t.Fatalf("retry-after summary %+v, want %d answers of 1,234 ms", p, res.Totals.Throttled)
		}
		if err := res.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
