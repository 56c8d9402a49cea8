package workloads_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// freezing answers every request in 5 ms until freezeAt, then never again:
// a served engine that froze mid-run. killed, instead, fails every request
// at once after freezeAt, as a server that died does.
type freezing struct {
	workloads.Target
	freezeAt time.Time
	killed   bool
}

func (f freezing) NewSession(seed uint64) workloads.Session { return freezeSession{f} }

type freezeSession struct{ f freezing }

func (s freezeSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	clock := s.f.Clock()
	now := clock.Now()
	if !now.Before(s.f.freezeAt) {
		if s.f.killed {
			return now, errors.New("dial tcp 127.0.0.1:10002: connect: connection refused")
		}
		<-ctx.Done() // no answer, ever: only the client's timeout ends it
		return clock.Now(), ctx.Err()
	}
	done := now.Add(5 * time.Millisecond)
	return done, clock.SleepUntil(ctx, done)
}

// frozen returns a target that freezes (or dies) 8 s after it is made; a
// run on it starts at once.
func frozen(t *testing.T, killed bool) freezing {
	tg := engineTarget(t, func(c *engine.Config) { c.Profile = engine.None() })
	return freezing{Target: tg, freezeAt: tg.Clock().Now().Add(8 * time.Second), killed: killed}
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// TestStalledEndpointIsAccounted: an endpoint that freezes 8 s into a 20 s
// open-loop run at 400 requests/s. Every one of the ~8,000 intended
// requests is in the record; those after the freeze are client timeouts or
// dropped for want of a free thread, the tail shows it, and the run warns,
// blaming the endpoint, not the client.
func TestStalledEndpointIsAccounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 10, 20*time.Second, 0
		spec.Load, spec.Rate = workloads.LoadOpen, 400
		spec.RequestTimeout = 2 * time.Second
		res := run(t, spec, frozen(t, false))
		if got := res.Totals.Requests + res.Totals.Dropped; got < 7900 || got > 8100 || res.OpenLoad.Due != got {
			t.Fatalf("%d requests recorded or dropped, want all ~8,000 intended", got)
		}
		lost := res.Errors["ClientTimeout"] + res.Totals.Dropped
		if lost < 4700 || res.Errors["ClientTimeout"] == 0 {
			t.Fatalf("errors %v: the ~4,800 requests after the freeze are not accounted for", res.Errors)
		}
		if res.LatencyMs.P999 < 1000 { // the timeouts, in the tail of what was sent; the dropped requests are no latency
			t.Fatalf("p99.9 %v ms: the stall is hidden from the tail", res.LatencyMs.P999)
		}
		// The requests sent after the freeze are few (each thread's, until
		// it timed out); the dropped ones are no requests, and the run
		// warns of them as the endpoint's doing.
		if !hasWarning(res.Warnings, "answered nothing") || !hasWarning(res.Warnings, "so the endpoint held them: its answers came late or not at all") {
			t.Fatalf("warnings %q", res.Warnings)
		}
	})
}

// TestStalledEndpointClosedLoop: in a closed loop each thread's request in
// flight at the freeze times out and is recorded, and the run warns.
func TestStalledEndpointClosedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 4, 20*time.Second, 0
		spec.RequestTimeout = 30 * time.Second
		res := run(t, spec, frozen(t, false))
		if res.Errors["ClientTimeout"] != int64(spec.Threads) {
			t.Fatalf("errors %v: each thread's request in flight at the freeze must be recorded", res.Errors)
		}
		if res.LatencyMs.Max < 29000 {
			t.Fatalf("max latency %v ms: the requests that hung are not in the histogram", res.LatencyMs.Max)
		}
		if !hasWarning(res.Warnings, "answered nothing for 11 s from second 9") {
			t.Fatalf("warnings %q", res.Warnings)
		}
	})
}

// TestDeadEndpointWarns: a server killed mid-run fails requests at once;
// the run says so instead of averaging over the dead time.
func TestDeadEndpointWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = 4, 20*time.Second, 0
		res := run(t, spec, frozen(t, true))
		if res.Errors["transport"] == 0 || !hasWarning(res.Warnings, "answered nothing for 11 s from second 9") {
			t.Fatalf("errors %v, warnings %q", res.Errors, res.Warnings)
		}
	})
}

// pausing stops answering at freezeAt and answers everything it holds at
// resumeAt, as a server stopped and continued does. remote makes it say it
// is a Table endpoint, not the in-tree engine.
type pausing struct {
	freezing
	resumeAt time.Time
	remote   bool
}

func (p pausing) Describe() results.Environment {
	env := p.Target.(workloads.Describer).Describe() // the engine's
	if p.remote {
		env.Target = "table"
	}
	return env
}

func (p pausing) NewSession(seed uint64) workloads.Session { return pauseSession{p} }

type pauseSession struct{ p pausing }

func (s pauseSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	clock := s.p.Clock()
	done := clock.Now().Add(5 * time.Millisecond)
	if now := clock.Now(); !now.Before(s.p.freezeAt) && now.Before(s.p.resumeAt) {
		done = s.p.resumeAt.Add(5 * time.Millisecond)
	}
	return done, clock.SleepUntil(ctx, done)
}

// TestPausedEndpointWarns: an endpoint that answers nothing for 5 s, then
// everything late, loses no request, yet the run says it stalled; the
// in-tree engine's own silences (its model's) are not flagged.
func TestPausedEndpointWarns(t *testing.T) {
	for _, remote := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			spec := workloads.DefaultSpec()
			spec.Threads, spec.Duration, spec.Warmup = 4, 20*time.Second, 0
			f := frozen(t, false)
			res := run(t, spec, pausing{freezing: f, resumeAt: f.freezeAt.Add(5 * time.Second), remote: remote})
			if len(res.Errors) > 0 {
				t.Fatalf("errors %v: a pause loses nothing", res.Errors)
			}
			if warned := hasWarning(res.Warnings, "answered nothing for 4 s from second 9"); warned != remote {
				t.Fatalf("remote %v: warnings %q", remote, res.Warnings)
			}
		})
	}
}

// TestHealthyRunHasNoWarnings: a run of the engine in virtual time warns of
// nothing.
func TestHealthyRunHasNoWarnings(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Threads, spec.Duration, spec.Warmup = 10, 30*time.Second, 5*time.Second
	res := run(t, spec, engineTarget(t, func(c *engine.Config) { c.Clock = clock.NewVirtual(time.Unix(0, 0)) }))
	if len(res.Warnings) > 0 || res.Refused || res.HarnessLagMs != nil {
		t.Fatalf("warnings %q, refused %v, lag %+v", res.Warnings, res.Refused, res.HarnessLagMs)
	}
}

// TestSetupTimesOut: an endpoint that never answers the table's creation
// fails the run with a clear error, after the request timeout.
func TestSetupTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := workloads.DefaultSpec()
		spec.RequestTimeout = 5 * time.Second
		r, err := workloads.NewCoordinator(spec, hanging{engineTarget(t)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Run(ctx)
		if err == nil || !strings.Contains(err.Error(), "did not answer within the request timeout") {
			t.Fatalf("err %v", err)
		}
	})
}

type hanging struct{ workloads.Target }

func (hanging) CreateTable(ctx context.Context, name string) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestLagRefusesWallTimeRuns: on the real scheduler, a wall-time run at a
// time scale the machine's timers cannot keep (1000: a 50 µs late wake-up is
// 50 ms of model time) measures its lag and is refused; the same run in
// virtual time has no lag.
func TestLagRefusesWallTimeRuns(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Threads, spec.Duration, spec.Warmup = 4, 20*time.Second, 0
	res := run(t, spec, engineTarget(t, func(c *engine.Config) { c.TimeScale = 1000 }))
	if res.HarnessLagMs == nil || res.HarnessLagMs.P99 <= 0 {
		t.Fatalf("no harness lag measured in wall time: %+v", res.HarnessLagMs)
	}
	if !res.Refused || !hasWarning(res.Warnings, "use a lower --time-scale") {
		t.Fatalf("lag p99 %.1f ms at scale 1000, median latency %.1f ms: refused %v, warnings %q",
			res.HarnessLagMs.P99, res.SuccessLatencyMs.P50, res.Refused, res.Warnings)
	}
	virtual := run(t, spec, engineTarget(t, func(c *engine.Config) { c.Clock = clock.NewVirtual(time.Unix(0, 0)) }))
	if virtual.HarnessLagMs != nil || virtual.Refused {
		t.Fatalf("virtual time lagged: %+v", virtual.HarnessLagMs)
	}
}
