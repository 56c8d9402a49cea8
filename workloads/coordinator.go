package workloads

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	mrand "math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads/keyspace"
	"github.com/tablebench/tablebench/workloads/vm"
)

// Coordinator runs one spec against one target: it owns the run's threads
// (workers) from start to finish, and turns what they record into the run's
// record.
type Coordinator struct {
	spec   Spec
	target Target
	live   []*results.Live
	cost   vm.Cost
	// timeout is the spec's request timeout in wall time, 0 for none: in
	// virtual time the engine's own 30 s limit bounds requests instead.
	timeout time.Duration
	phase   func(Phase) // see OnPhase
	// arrivals is an open load's schedule, which the threads share.
	arrivals *arrivals
	// clientBound says why the run saturates its modelled client on
	// purpose, if it does (see ClientBound).
	clientBound string
	id          Identity // see Identify
}

// Identity names a run in its record: its ID, and the figure, series and x
// it stands for in a suite.
type Identity struct {
	ID     string
	Figure string // "fig08"
	Series string
	X      float64
}

// NewCoordinator returns a coordinator, or the spec's validation error.
func NewCoordinator(spec Spec, t Target) (*Coordinator, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	r := &Coordinator{spec: spec, target: t, cost: spec.VMSize.ClientCost()}
	if spec.Shards > 1 && r.virtual() {
		return nil, errors.New("a sharded run needs a target in wall time: shards on other machines cannot share a virtual clock")
	}
	if spec.RequestTimeout > 0 && !r.virtual() {
		r.timeout = time.Duration(float64(spec.RequestTimeout) / r.scale())
	}
	for range spec.VMs {
		r.live = append(r.live, &results.Live{})
	}
	return r, nil
}

// Phase is a stage a run enters: creating its table, loading what it
// reads, waiting for the other shards, starting its threads.
type Phase struct {
	Text string // what the run is doing, for a person
	Load bool   // the threads have started: the warm-up, then the measured window
}

// OnPhase has fn called as the run enters each of its stages, so that a
// display can say why nothing is measured yet. Call it before Run.
func (r *Coordinator) OnPhase(fn func(Phase)) { r.phase = fn }

// announce reports a stage of the run to the OnPhase callback, if any.
func (r *Coordinator) announce(load bool, format string, args ...any) {
	if r.phase != nil {
		r.phase(Phase{Text: fmt.Sprintf(format, args...), Load: load})
	}
}

// ClientBound declares that the run measures its modelled client on
// purpose, for the reason why (a figure about the 2010 client's limits): a
// saturated client is then recorded as a note, information, rather than a
// warning that the numbers describe the client instead of the service.
// Call it before Run.
func (r *Coordinator) ClientBound(why string) { r.clientBound = why }

// Identify names the run: its record carries id, rather than its table's
// name, and its place in a figure. Call it before Run.
func (r *Coordinator) Identify(id Identity) { r.id = id }

// Live returns each VM's live counters, for a progress display.
func (r *Coordinator) Live() []*results.Live { return r.live }

// Spec returns the coordinator's spec.
func (r *Coordinator) Spec() Spec { return r.spec }

// worker is one thread of one VM.
type worker struct {
	// What every request reads comes first, together with the loop's
	// state (see loop): a simulator steps thousands of threads in turn,
	// and each request then reads fewer scattered cache lines. The
	// thread's own random source and keys are held in the worker rather
	// than allocated apart for the same reason.
	r       *Coordinator
	machine *vm.VM     // nil when the target is a real client
	fixed   *fixedKeys // the fixed scheme's key space, shared by every thread
	mix     *mixer     // the spec's, shared by every thread
	rec     *results.Recorder
	// hints are where the thread's next step will most likely go, kept at
	// the end of its last (see WarmDeep), the rest none.
	hints [maxHints]clock.Hint
	pay   payloads
	src   mrand.PCG
	rand  mrand.Rand // the thread's own random source, over src
	loop  loop       // where the thread's loop waits, and what it holds between waits
	op    Op
	// The rest a request reads only in some workloads. ownKeys, of which a
	// request reads the first part, begins on a cache line.
	rowPick keyspace.Chooser // which existing row
	keyPick keyspace.Chooser // the fixed scheme's: which key
	vmID    int
	id      int
	batch   []tables.BatchOp
	_       [8]byte // ownKeys begins on a line
	ownKeys keys
	rks     []string // the batch's RowKeys
	txn     string   // the transaction id of the insert in flight
	rare    loopRare
	_       [16]byte // whole cache lines, in buildWorkers' array
}

// unsharedTarget is a target that takes no locks while told that its
// requests come one at a time, in a virtual clock's turns (the engine).
type unsharedTarget interface {
	Unshared(on bool)
}

// Run runs the spec: it creates the run's table, loads what gets and
// queries read, starts every thread together, excludes the warm-up, stops at
// the deadline or when ctx is done, and returns what it measured. An
// interrupted run still returns its measurements, marked Interrupted.
func (r *Coordinator) Run(ctx context.Context) (*results.Run, error) {
	s := &r.spec
	sharded := s.Shards > 1
	table, err := r.makeTable(ctx)
	if err != nil {
		return nil, err
	}
	var meet *rendezvous
	if sharded {
		meet = r.newRendezvous(table)
	}
	creator := !sharded || s.Shard == 0 // one shard makes the table, and deletes it
	if creator && s.Table == "" && !s.KeepTable {
		defer r.dropTable(ctx, table)
	}
	workers, machines := r.buildWorkers(table)
	if s.Reads() {
		r.announce(false, "loading %d entities for the threads to read (not measured)", r.loading(len(workers)))
		if err := r.preload(ctx, table, workers); err != nil {
			return nil, fmt.Errorf("loading the entities to read: %w", timeoutHint(err, r.spec.RequestTimeout))
		}
	}

	var shard *results.Shard
	if meet != nil {
		r.announce(false, "waiting for the other %d shards", s.Shards-1)
		var err error
		if shard, err = meet.meet(ctx); err != nil {
			return nil, fmt.Errorf("shard %d of %d: %w", s.Shard, s.Shards, err)
		}
	}
	r.announce(true, "%d threads started: %v of warm-up, then %v measured", len(workers), s.Warmup, s.Duration)
	collector, win := r.measure(ctx, workers, machines)
	run, err := collector.Close(win.end)
	if err != nil {
		return nil, err
	}
	run.Shard = shard
	r.describe(ctx, run, table, win, machines)
	if meet != nil && ctx.Err() == nil {
		if err := meet.finish(ctx); err != nil {
			run.Warnings = append(run.Warnings, fmt.Sprintf("shard %d: %v", s.Shard, err))
		}
	}
	return run, nil
}

// makeTable names the run's table and, in the shard that makes it (the
// only one, unless sharded), creates it. A name left by an earlier run is
// passed over for the next one; a shared table may exist already.
func (r *Coordinator) makeTable(ctx context.Context) (string, error) {
	s := &r.spec
	sharded := s.Shards > 1
	// In virtual time the engine is the run's own: its table's name comes
	// from the seed, so that the run's ID and records repeat exactly.
	var names *mrand.Rand
	if r.virtual() {
		names = mrand.New(mrand.NewPCG(s.Seed, 0x7ab1e))
	}
	table := s.Table
	switch {
	case table == "" && sharded:
		table = shardTable(s.JobID)
	case table == "":
		table = tableName(s.JobID, names)
	}
	if sharded && s.Shard != 0 {
		return table, nil // shard 0 makes it
	}
	r.announce(false, "creating table %s", table)
	create := func() error {
		sctx, cancel := r.requestContext(ctx)
		defer cancel()
		return r.target.CreateTable(sctx, table)
	}
	err := create()
	var te *tables.Error
	for try := 0; errors.As(err, &te) && te.Code == tables.CodeTableAlreadyExists && s.Table == "" && !sharded && try < 3; try++ {
		table = tableName(s.JobID, names) // an earlier run's, kept: the next name
		err = create()
	}
	if errors.As(err, &te) && te.Code == tables.CodeTableAlreadyExists {
		switch {
		case s.Table != "":
			err = nil // a shared table: another process made it
		case sharded:
			err = fmt.Errorf("it exists already: an earlier run with job ID %s left it; delete it or give a new --job-id", s.JobID)
		}
	}
	if err != nil {
		return "", fmt.Errorf("creating table %s: %w", table, timeoutHint(err, r.spec.RequestTimeout))
	}
	return table, nil
}

// dropTable deletes the run's table once the run is over, even when ctx
// was cancelled: an interrupted run still cleans up after itself.
func (r *Coordinator) dropTable(ctx context.Context, table string) {
	dctx, cancel := r.requestContext(context.WithoutCancel(ctx))
	defer cancel()
	r.target.DeleteTable(dctx, table)
}

// buildWorkers makes this process's threads, each with its own keys drawn
// from the seed and payloads shared with the threads whose keys are as
// long, and the modelled client VMs they run on when the target models
// its client.
func (r *Coordinator) buildWorkers(table string) ([]*worker, []*vm.VM) {
	s := &r.spec
	clock := r.target.Clock()
	modeled := false
	if m, ok := r.target.(ClientModeler); ok {
		modeled = m.ModelsClient()
	}
	sharedPK := guidFrom(mrand.New(mrand.NewPCG(s.Seed, 0)))
	// Processes sharing a table share the shared PartitionKey (it comes
	// from the seed alone) but not their threads' own keys and payloads,
	// which also depend on the job.
	threadSeed := s.Seed
	if s.Table != "" {
		h := fnv.New64a()
		h.Write([]byte(s.JobID))
		threadSeed ^= h.Sum64()
	}
	// The threads, and their VMs, in arrays: a simulator reads one
	// thread's state at each step, and a state that begins on a cache
	// line (see worker) reads no line of its neighbour's.
	var ours []int // this process's VMs
	for v := 1; v <= s.VMs; v++ {
		if s.Shards <= 1 || (v-1)%s.Shards == s.Shard {
			ours = append(ours, v)
		}
	}
	all := make([]worker, len(ours)*s.Threads)
	workers := make([]*worker, 0, len(all))
	var machines []*vm.VM
	if modeled {
		machines = vm.Fleet(s.VMSize, len(ours))
	}
	var fixed *fixedKeys
	if s.Partition == PartitionFixed {
		fixed = newFixedKeys(s)
	}
	pays := newPayloadSets(threadSeed)
	mix := newMixer(s)
	for i, v := range ours {
		var machine *vm.VM
		if modeled {
			machine = machines[i]
		}
		for th := 1; th <= s.Threads; th++ {
			w := &all[len(workers)]
			*w = worker{r: r, vmID: v, id: th, machine: machine, fixed: fixed, mix: &mix, rowPick: chooser(s.Rows)}
			w.src.Seed(threadSeed, uint64(v)<<32|uint64(th))
			w.rand = *mrand.New(&w.src)
			src, rng := &w.src, &w.rand
			w.ownKeys = *newKeys(s, sharedPK, v, th, rng)
			pkLen, rkLen := len(w.ownKeys.partitionKey(clock.Now().UnixNano())), len(w.ownKeys.prefix)+10
			if fixed != nil {
				w.keyPick = chooser(s.Keys.Pick)
				pkLen, rkLen = fixed.names.KeyLen(), len(fixed.rowPrefix)+10
			}
			if s.typed() {
				w.pay = typedPayloads(rng, s, pkLen, rkLen)
			} else {
				w.pay = pays.payloads(src, rng, s.EntitySize, s.EntityMax, pkLen, rkLen)
			}
			w.op.Table = table
			workers = append(workers, w)
		}
	}
	return workers, machines
}

// window is when a run measured, in the target's clock: it started its
// threads at start, measured from from to to (after the warm-up), and
// ended at end (no later than to).
type window struct{ start, from, to, end time.Time }

// measure starts every thread together, stops them at the deadline or when
// ctx is done, and returns what they recorded and when. A thread's errors
// are results, recorded: none ends the run.
func (r *Coordinator) measure(ctx context.Context, workers []*worker, machines []*vm.VM) (*results.Collector, window) {
	s := &r.spec
	clock := r.target.Clock()
	start := clock.Now()
	from, to := start.Add(s.Warmup), start.Add(s.Warmup+s.Duration)
	for _, m := range machines {
		m.Window(from, to) // client CPU is judged over what was measured
	}
	collector := results.NewCollector(start, from, to)
	if s.IsWorkload() {
		collector.PerOperation()
	}
	tc, asTasks := clock.(tasks)
	asTasks = asTasks && r.sends()
	if asTasks { // the recorders record in the clock's turns alone
		collector.Sequential()
	}
	for _, w := range workers {
		w.rec = collector.Recorder(r.live[w.vmID-1])
	}
	if s.Load == LoadOpen {
		r.arrivals = newArrivals(s, float64(len(workers))/float64(s.VMs*s.Threads), start)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	goTask, release := func(fn func()) { go fn() }, func() {}
	endRun := stop
	if pc, ok := clock.(participants); ok {
		// A virtual clock: time passes when all of these wait. They start in
		// this order, and the deadline stops the threads at its moment in
		// model time, so that a run repeats exactly for its seed.
		pc.Hold(1) // no time passes until the last one is started
		goTask, release = pc.Go, pc.Release
		endRun = func() { pc.Cancel(stop) }
	}
	deadlineDone := make(chan struct{})
	goTask(func() { // the deadline, in the target's clock
		defer close(deadlineDone)
		if clock.SleepUntil(runCtx, to) == nil {
			endRun()
		}
	})
	// Workers stop sending at the deadline (runCtx), but a request in flight
	// then is waited for, up to the request timeout, and recorded: only an
	// interrupt (ctx) abandons requests.
	var wg sync.WaitGroup
	// An interrupt ends the run when the first thread stops for it, in
	// model time: on a virtual clock, time runs on to the deadline once the
	// threads have stopped, and a run that ended there would average what
	// it measured over time it never ran.
	stopped := make([]time.Time, len(workers))
	if asTasks { // every thread runs on the clock's one loop goroutine
		for _, m := range machines {
			m.Unshared()
		}
		if u, ok := r.target.(unsharedTarget); ok {
			// The run's requests now come in the clock's turns alone,
			// until every participant has ended.
			u.Unshared(true)
			defer u.Unshared(false)
		}
		if r.arrivals != nil {
			r.arrivals.unshared = true
		}
	}
	for i, w := range workers {
		wg.Add(1)
		w.loop = loop{ctx: ctx, stop: runCtx, clock: clock}
		w.rare.start, w.rare.to = start, to
		w.rare.ended = func() {
			if ctx.Err() != nil {
				stopped[i] = clock.Now()
			}
			wg.Done()
		}
		if asTasks {
			tc.GoTask(w)
			continue
		}
		goTask(func() { w.drive() })
	}
	release()
	wg.Wait()
	stop()
	<-deadlineDone
	// A run that was not interrupted measured to its deadline, even if
	// every thread ended sooner (an open load's last arrival): the clock
	// may not have reached it yet when the last thread says it is done.
	end := to
	if ctx.Err() != nil {
		if now := clock.Now(); now.Before(to) {
			end = now
		}
		for _, at := range stopped {
			if !at.IsZero() && at.Before(end) {
				end = at
			}
		}
	}
	if r.arrivals != nil && ctx.Err() == nil && len(workers) > 0 {
		// Requests due in the window that no thread took: every thread was
		// busy, or they still queued, when the run ended.
		r.arrivals.rest(to, workers[0].rec.Drop)
	}
	return collector, window{start: start, from: from, to: to, end: end}
}

// describe completes the record of a measured run: who it is, what it ran,
// where, the client's CPU, the target's events, and what the checks found.
func (r *Coordinator) describe(ctx context.Context, run *results.Run, table string, win window, machines []*vm.VM) {
	s := &r.spec
	run.ID, run.Figure, run.Series, run.X = r.id.ID, r.id.Figure, r.id.Series, r.id.X
	if run.ID == "" {
		run.ID = table
	}
	run.Interrupted = ctx.Err() != nil
	run.Spec, run.Setup = archive(s), setup(s)
	run.Env = r.environment()
	if span := win.end.Sub(win.from); span > 0 {
		for _, m := range machines {
			run.ClientCPUPct = append(run.ClientCPUPct, m.Utilization(span))
		}
	}
	if es, ok := r.target.(EventSource); ok {
		run.Events = es.Events(win.start)
	}
	if rr, ok := r.target.(RangeReporter); ok {
		run.RangePartitions = rr.RangePartitions(table)
	}
	if a := r.arrivals; a != nil {
		overload := s.Overload
		if overload == "" {
			overload = OverloadDrop
		}
		ol := &results.OpenLoad{Overload: string(overload), Due: a.due(win.from, win.end), Dropped: run.Totals.Dropped}
		ol.SetRates(run.MeasuredSec)
		run.OpenLoad = ol
	}
	run.Warnings, run.Notes, run.Refused = r.check(run)
}

// archive is the spec as the record keeps it: as it was given, for people
// and for a resumed suite to compare; readers read the record's Setup.
func archive(s *Spec) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// setup is what readers of the run's record need of its spec.
func setup(s *Spec) results.RunSpec {
	rs := results.RunSpec{
		Op: string(s.Op), BatchSize: s.BatchSize, Partition: string(s.Partition), VMs: s.VMs, Threads: s.Threads,
		VMSize: s.VMSize.Name, EntitySize: s.EntitySize, Warmup: s.Warmup, Duration: s.Duration,
		Load: string(s.Load), Rate: s.Rate,
	}
	if !s.IsWorkload() {
		return rs
	}
	rs.Workload, rs.EntityMax, rs.Overload = s.Workload, s.EntityMax, string(s.Overload)
	rs.EntityProps, rs.EntityTypes = s.EntityProps, s.EntityTypes
	rs.Mix = map[string]float64{}
	for _, m := range s.Ops() {
		rs.Mix[string(m.Op)] = m.Weight
	}
	pick := func(p Pick) results.Pick {
		return results.Pick{Distribution: string(p.Distribution), Theta: p.Theta, HotData: p.HotData, HotOps: p.HotOps}
	}
	if s.Partition == PartitionFixed {
		k := s.Keys
		rs.Keys = results.KeySpace{Count: k.Count, Pick: pick(k.Pick), Names: string(k.Names), Buckets: k.Buckets, BucketAt: string(k.BucketAt)}
	}
	if s.Rows != (Pick{}) {
		rs.Rows = pick(s.Rows)
	}
	if s.Reads() {
		rs.RowsEach = s.Preload
	}
	for _, st := range s.Stages {
		rs.Stages = append(rs.Stages, results.Stage{For: st.For, Rate: st.Rate})
	}
	return rs
}

func (r *Coordinator) environment() results.Environment {
	env := results.Environment{Tablebench: Version, GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU()}
	if d, ok := r.target.(Describer); ok {
		t := d.Describe()
		env.Target, env.Endpoint, env.Profile, env.TimeScale = t.Target, t.Endpoint, t.Profile, t.TimeScale
		env.ProfileFile, env.ProfileSHA256 = t.ProfileFile, t.ProfileSHA256
	}
	return env
}

// virtual reports whether the target's clock is virtual: time passes only
// when everyone waits, so nothing is ever late.
func (r *Coordinator) virtual() bool {
	_, ok := r.target.Clock().(participants)
	return ok
}

// scale returns how many target seconds pass per wall second.
func (r *Coordinator) scale() float64 {
	if sc, ok := r.target.Clock().(interface{ Scale() float64 }); ok && sc.Scale() > 0 {
		return sc.Scale()
	}
	return 1
}

// requestContext bounds one request, or one setup call, by the request
// timeout in wall time.
func (r *Coordinator) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, r.timeout)
}

// timeoutHint turns a setup call's client timeout into advice.
func timeoutHint(err error, d time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the endpoint did not answer within the request timeout of %v (is it up? raise --request-timeout if it is slow): %w", d, err)
	}
	return err
}

// tasks is a clock that runs participants without goroutines of their
// own (clock.Virtual).
type tasks interface{ GoTask(clock.Task) }

// sends reports whether the target's sessions answer without waiting
// (Sender), so that its threads can be a virtual clock's tasks.
func (r *Coordinator) sends() bool {
	_, ok := r.target.NewSession(0).(Sender)
	return ok
}

// participants is a clock on which time passes only when every declared
// participant waits on it (clock.Virtual): it starts them in a set order
// and ends their sleeps at a set moment.
type participants interface {
	Hold(n int)
	Release()
	Go(fn func())
	Cancel(cancel context.CancelFunc)
}

// Version is tablebench's version, stored with every run.
const Version = "0.1.0"

// tableName returns a fresh table name for a job: letters and digits only,
// drawn from names, or at random when it is nil.
func tableName(job string, names *mrand.Rand) string {
	var b [4]byte
	if names != nil {
		binary.BigEndian.PutUint32(b[:], names.Uint32())
	} else {
		rand.Read(b[:])
	}
	return "tb" + alnum(job) + hex.EncodeToString(b[:])
}

// alnum keeps a job ID's letters and digits, all a table name may hold.
func alnum(job string) string {
	return strings.Map(func(r rune) rune {
		if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, job)
}

// loading returns how many entities the run loads before it starts.
func (r *Coordinator) loading(threads int) int {
	if r.spec.Partition == PartitionFixed {
		return r.spec.Keys.Count * r.spec.Preload
	}
	return threads * r.spec.Preload
}

// preload stores the entities that the run's reads pick among before it
// starts: each thread's own, or, for a fixed key space, Preload rows of
// every key; it is not measured.
func (r *Coordinator) preload(ctx context.Context, table string, workers []*worker) error {
	clock := r.target.Clock()
	if f := workers[0].fixed; f != nil {
		return r.preloadFixed(ctx, table, f, workers[0])
	}
	for _, w := range workers {
		for range r.spec.Preload {
			w.ownKeys.loaded = append(w.ownKeys.loaded, tables.Entity{
				PartitionKey: w.ownKeys.partitionKey(clock.Now().UnixNano()), RowKey: w.ownKeys.rowKey(),
				Properties: w.pay.nextProps(),
			})
		}
		if err := r.store(ctx, table, w.ownKeys.loaded, func() uint64 { return w.rand.Uint64() }); err != nil {
			return err
		}
		if !w.ownKeys.timeOrdered() {
			w.ownKeys.loaded = nil // their keys are known from their numbers
		}
	}
	return nil
}

// preloadFixed stores Preload rows in every key of a fixed key space, a
// thousand keys at a time, and counts them as existing.
func (r *Coordinator) preloadFixed(ctx context.Context, table string, f *fixedKeys, w *worker) error {
	var ents []tables.Entity
	for lo := int64(0); lo < f.count; lo += 1000 {
		ents = ents[:0]
		for item := lo; item < min(lo+1000, f.count); item++ {
			first := f.claim(item, r.spec.Preload)
			for i := range int64(r.spec.Preload) {
				rk := f.rowKey(first + i)
				ents = append(ents, tables.Entity{PartitionKey: f.place(item, rk), RowKey: rk, Properties: w.pay.nextProps()})
			}
		}
		slices.SortStableFunc(ents, func(a, b tables.Entity) int { return strings.Compare(a.PartitionKey, b.PartitionKey) })
		if err := r.store(ctx, table, ents, func() uint64 { return w.rand.Uint64() }); err != nil {
			return err
		}
	}
	return nil
}

// store stores entities before the run, directly where the target can,
// else in batches of the entities of one partition that lie together.
func (r *Coordinator) store(ctx context.Context, table string, ents []tables.Entity, seed func() uint64) error {
	if loader, ok := r.target.(Loader); ok {
		return loader.Load(ctx, table, ents)
	}
	sess := r.target.NewSession(seed())
	for len(ents) > 0 {
		n := 1
		for n < len(ents) && n < 100 && ents[n].PartitionKey == ents[0].PartitionKey {
			n++
		}
		op := Op{Kind: OpBatch, Table: table}
		for _, e := range ents[:n] {
			op.Batch = append(op.Batch, tables.BatchOp{Kind: tables.BatchUpsertReplace, Entity: e})
		}
		rctx, cancel := r.requestContext(ctx)
		_, err := sess.Do(rctx, &op)
		cancel()
		if err != nil {
			return err
		}
		ents = ents[n:]
	}
	return nil
}

// answered reports whether err is an answer the operation anticipates
// rather than trouble: a read, update or delete of a row another thread
// deleted (a miss), or an update's conflict. The published method pauses
// after errors; after these a thread goes on, as an application would.
func answered(kind OpKind, err error) bool {
	switch Outcome(err) {
	case tables.CodeResourceNotFound:
		return kind.ReadsPreloaded() || kind == OpGet
	case tables.CodeUpdateConditionNotSatisfied:
		return kind == OpUpdate
	}
	return false
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// clientWork is the client CPU the request in the worker's Op costs the
// modelled VM.
func (w *worker) clientWork() time.Duration {
	c := &w.r.cost
	switch w.op.Kind {
	case OpGet, OpDelete:
		return c.Get
	case OpQuery, OpRange, OpScan:
		return c.Get + time.Duration(w.op.Query.Top)*c.PerEntity
	case OpBatch:
		return c.Write(len(w.op.Batch))
	default:
		return c.Write(1)
	}
}

// record records an attempt of the worker's Op: the entities it carried,
// or a page the entities it returned, at the PartitionKey where the heat
// map and the hottest keys count it; a scan, which crosses partitions,
// counts at the one it starts from.
func (w *worker) record(due, done time.Time, err error, lag time.Duration, retry bool) {
	op := &w.op
	n, pk := 1, op.PartitionKey
	switch op.Kind {
	case OpInsert, OpUpsert, OpUpdate:
		pk = op.Entity.PartitionKey
	case OpBatch:
		n, pk = len(op.Batch), ""
		if n > 0 {
			pk = op.Batch[0].Entity.PartitionKey
		}
	case OpQuery, OpRange, OpScan:
		n = op.Returned
	}
	outcome, ra := results.OutcomeOK, time.Duration(0)
	if err != nil {
		outcome, ra = Outcome(err), retryAfter(err)
	}
	dueOff, doneOff := w.rec.Offsets(due, done)
	w.rec.RecordAt(string(op.Kind), pk, n, dueOff, doneOff, outcome, lag, retry)
	w.rec.Charge(due, op.Charge, ra)
}

// backoff returns the delay before retry number try (1-based).
func (w *worker) backoff(try int) time.Duration {
	r := &w.r.spec.Retry
	exp := math.Pow(2, float64(try)) - 1
	switch r.Policy {
	case RetryExponential: // y = min(zmin + z·rand(0.8, 1.2)·(2^n − 1), zmax)
		z := float64(r.Delay) * (0.8 + 0.4*w.rand.Float64()) * exp
		return min(r.MinBackoff+time.Duration(z), r.MaxBackoff)
	case RetryStorage2010: // 3, 27, 81 s (delay · 3, 9, 27 after the first), ±20%, at most the maximum
		steps := []float64{1, 9, 27}
		d := time.Duration(steps[min(try, len(steps))-1] * float64(r.Delay) * (0.8 + 0.4*w.rand.Float64()))
		return min(d, r.MaxBackoff)
	case RetrySDK: // (2^n − 1) · delay · U[0.8, 1.3), at most the maximum
		d := time.Duration(exp * float64(r.Delay) * (0.8 + 0.5*w.rand.Float64()))
		if r.MaxBackoff > 0 {
			d = min(d, r.MaxBackoff)
		}
		return d
	}
	return r.Delay
}

func (w *worker) props() []tables.Property { return w.pay.nextProps() }
