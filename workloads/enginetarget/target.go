// Package enginetarget drives the in-tree engine in process as a workloads
// Target: requests are method calls, latency is model time, and the harness
// applies its client VM model because no real client CPU is spent.
package enginetarget

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// Target is the engine as a run's target.
type Target struct {
	e     *engine.Engine
	scale float64
	// file and sha256 are the profile file the engine's profile was read
	// from, when it is not the built-in one of its name.
	file, sha256 string
	// made is the rest of the array that a simulation's new sessions come
	// from (see sessions) while its threads run unshared, under mu.
	mu       sync.Mutex
	unshared bool
	made     clock.Arrays[session]
}

// sessions is how many sessions a simulation's target makes at once, in
// an array the allocator begins on a cache line, as each of them then
// begins: a simulator's thread reads its session at every request, and a
// session is whole lines. Threads in wall time get a session each.
const sessions = 128

var (
	_ workloads.Target        = (*Target)(nil)
	_ workloads.ClientModeler = (*Target)(nil)
	_ workloads.Loader        = (*Target)(nil)
	_ workloads.EventSource   = (*Target)(nil)
	_ workloads.Describer     = (*Target)(nil)
	_ workloads.RangeReporter = (*Target)(nil)
)

// New returns a target over a new engine configured by cfg.
func New(cfg engine.Config) (*Target, error) {
	e, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	scale := cfg.TimeScale
	if _, virtual := cfg.Clock.(*clock.Virtual); virtual {
		scale = 0 // recorded as virtual time
	}
	return &Target{e: e, scale: scale}, nil
}

// Engine returns the target's engine.
func (t *Target) Engine() *engine.Engine { return t.e }

// Unshared declares whether the run's requests come one at a time, in the
// turns of the engine's virtual clock (engine.Engine.Unshared): the
// coordinator says so while its threads are the clock's tasks.
func (t *Target) Unshared(on bool) {
	t.e.Unshared(on)
	t.mu.Lock()
	defer t.mu.Unlock()
	// The run's sessions go with its threads: the array they came from
	// must not keep them, and their state of the run's table, after.
	t.unshared = on
	t.made.Drop()
}

// Close stops the engine's load balancer.
func (t *Target) Close() error { return t.e.Close() }

// Clock returns the engine's model-time clock.
func (t *Target) Clock() clock.Clock { return t.e.Clock() }

// CreateTable creates a table.
func (t *Target) CreateTable(ctx context.Context, name string) error {
	return t.e.CreateTable(ctx, name)
}

// DeleteTable deletes a table.
func (t *Target) DeleteTable(ctx context.Context, name string) error {
	return t.e.DeleteTable(ctx, name)
}

// ModelsClient reports that the harness must model the client's CPU.
func (t *Target) ModelsClient() bool { return t.e.Config().Profile.Model }

// Describe describes the target for the run record.
func (t *Target) Describe() results.Environment {
	return results.Environment{Target: "engine", Profile: t.e.Config().Profile.Name, ProfileFile: t.file, ProfileSHA256: t.sha256, TimeScale: t.scale}
}

// FromFile has the record say that the engine's profile was read from the
// file path, whose parameters hash to sha256, so that no reader takes it
// for the built-in profile of its name.
func (t *Target) FromFile(path, sha256 string) { t.file, t.sha256 = path, sha256 }

// Load stores entities directly, outside the model: a run's preload is not
// measured and should not spend modelled time or budgets.
func (t *Target) Load(ctx context.Context, table string, entities []tables.Entity) error {
	return t.e.Load(ctx, table, entities)
}

// Events returns the load balancer's actions since start.
func (t *Target) Events(since time.Time) []results.Event {
	var out []results.Event
	for _, ev := range t.e.Events() {
		if ev.Time.Before(since) {
			continue
		}
		detail := fmt.Sprintf("table %s range [%q, %q)", ev.Table, ev.Lo, ev.Hi)
		switch ev.Kind {
		case engine.EventSplit:
			detail += fmt.Sprintf(" split at %q", ev.At)
		case engine.EventMove:
			detail += fmt.Sprintf(" moved from server %d to %d", ev.From, ev.To)
		}
		detail += fmt.Sprintf(", unavailable for %v", ev.Until.Sub(ev.Time).Round(time.Millisecond))
		out = append(out, results.Event{Second: ev.Time.Sub(since).Seconds(), Kind: string(ev.Kind), Detail: detail, Lo: ev.Lo, Hi: ev.Hi, At: ev.At})
	}
	return out
}

// RangePartitions returns the table's range partitions and their servers
// now; none if the table is gone.
func (t *Target) RangePartitions(table string) []results.RangePartition {
	ps, err := t.e.Partitions(table)
	if err != nil {
		return nil
	}
	out := make([]results.RangePartition, len(ps))
	for i, p := range ps {
		out[i] = results.RangePartition{Lo: p.Lo, Server: p.Server}
	}
	return out
}

// errClientTimeout is a response the client stopped waiting for; the
// harness counts it as a client timeout.
var errClientTimeout = fmt.Errorf("the client stopped waiting: %w", context.DeadlineExceeded)

// NewSession returns a worker's session; its random draws come from its own
// seeded source so runs repeat for a seed.
func (t *Target) NewSession(seed uint64) workloads.Session {
	s := t.newSession()
	s.e = t.e
	s.src.Seed(seed, 0x5e55)
	s.rand = *rand.New(&s.src)
	s.call = &s.own
	s.call.Rand = &s.rand
	s.cl = t.e.Client(s.call)
	return s
}

// newSession returns a zero session: from an array while the target's
// requests come unshared, in a simulation's turns.
func (t *Target) newSession() *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.unshared {
		return new(session)
	}
	return t.made.Next(sessions)
}

type session struct {
	e    *engine.Engine
	call *engine.Call
	cl   engine.Client
	// The call and its random source live in the session, one allocation:
	// a simulator steps thousands of sessions in turn.
	own  engine.Call
	src  rand.PCG
	rand rand.Rand
}

// Warm prefetches the session, with its call, which the session's next
// request reads (clock.Warmer).
func (s *session) Warm() {
	clock.Prefetch(unsafe.Pointer(s), unsafe.Sizeof(*s))
}

// Hints appends where in the engine the session's next request most
// often goes: where its last went (engine.Call.Hints).
func (s *session) Hints(hs []clock.Hint) []clock.Hint { return s.call.Hints(hs) }

// Do sends op to the engine and returns its modelled completion time,
// once the clock reaches it.
func (s *session) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	done, err := s.send(ctx, op, op.ClientTimeout > 0)
	if s.call.Detach { // the engine did not wait: the client does
		if serr := s.e.Clock().SleepUntil(ctx, done); serr != nil {
			return done, serr
		}
	}
	return done, err
}

// Send sends op to the engine and returns its modelled completion time
// at once, without waiting for it (workloads.Sender): a thread on the
// virtual clock waits as the clock's task.
func (s *session) Send(ctx context.Context, op *workloads.Op) (time.Time, error) {
	return s.send(ctx, op, true)
}

// send sends op, and waits in the engine for its answer unless detach:
// then the client, which gives up at its timeout, is to wait.
func (s *session) send(ctx context.Context, op *workloads.Op, detach bool) (time.Time, error) {
	s.call.Arrival = op.Ready
	s.call.Timing = engine.Timing{}
	s.call.Detach = detach
	var err error
	switch op.Kind {
	case workloads.OpInsert:
		err = s.cl.InsertOnly(ctx, op.Table, &op.Entity)
	case workloads.OpUpsert:
		mode := tables.Replace
		if op.Merge {
			mode = tables.Merge
		}
		err = s.cl.UpsertOnly(ctx, op.Table, &op.Entity, mode)
	case workloads.OpUpdate:
		err = s.cl.UpdateOnly(ctx, op.Table, &op.Entity, tables.Merge, op.IfMatch)
	case workloads.OpDelete:
		err = s.cl.Delete(ctx, op.Table, op.PartitionKey, op.RowKey, op.IfMatch)
	case workloads.OpGet:
		var e tables.Entity
		e, err = s.cl.Get(ctx, op.Table, op.PartitionKey, op.RowKey, nil)
		if err == nil {
			op.ETag = e.ETag()
			if op.Read != nil {
				*op.Read = e
			}
		}
	case workloads.OpBatch:
		err = s.cl.BatchOnly(ctx, op.Table, op.Batch) // the harness reads none of the entities stored
	case workloads.OpQuery, workloads.OpRange, workloads.OpScan:
		var p tables.Page
		p, err = s.cl.QueryEntities(ctx, op.Table, op.Query)
		op.Returned, op.Next = len(p.Entities), p.Continuation
	default:
		return time.Time{}, fmt.Errorf("operation %q is not known", op.Kind)
	}
	tm := &s.call.Timing
	op.Charge = tm.Charge
	done := tm.Done
	modelled := !done.IsZero()
	if !modelled { // no model, or refused before it: now
		done = s.e.Clock().Now()
	}
	if detach && op.ClientTimeout > 0 { // the client waits at most its timeout
		sent := tm.Arrival
		var took time.Duration
		if modelled {
			// The model's Done is its Arrival and its stages: their sum
			// is clock.Sub(done, sent), without taking the times apart.
			took = tm.FrontEnd + tm.Wait + tm.Lane + tm.Post
		} else {
			if sent.IsZero() {
				sent = s.e.Clock().Now()
			}
			took = clock.Sub(done, sent)
		}
		if took > op.ClientTimeout { // done.After(sent.Add(op.ClientTimeout)), for less
			done, err = sent.Add(op.ClientTimeout), errClientTimeout
		}
	}
	return done, err
}

// ClientSize returns the client VM the harness models against profile p
// unless a run names one: the profile's own, today's when it names none
// (or one that does not parse: profile files are checked when read). A
// service's latency is only seen through a client of its own time: the
// 2010 client costs 5 ms of CPU a request, as much as today's service
// takes to answer.
func ClientSize(p engine.Profile) vm.Size {
	if p.Client == "" {
		return vm.Modern
	}
	sz, err := vm.ParseSize(p.Client)
	if err != nil {
		return vm.Modern
	}
	return sz
}
