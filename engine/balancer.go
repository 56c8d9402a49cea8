package engine

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"
)

// BalancerConfig configures the load balancer, the engine's partition
// manager: every Interval it looks at each range partition's and server's
// load, splits partitions that stayed hot for the decision delay and moves
// load off servers that stayed hot.
type BalancerConfig struct {
	Enabled  bool
	Interval time.Duration // how often the balancer looks
	// DecideMin and DecideMax bound the decision delay, drawn per hot
	// episode: how long a partition or server must stay hot before the
	// balancer acts.
	DecideMin, DecideMax time.Duration
	HotUtilization       float64 // a lane or server busier than this is hot
	HotThrottleRate      float64 // a partition throttling more than this share is hot
	IsolateShare         float64 // a key with this share of a partition's load gets a partition of its own
	MaxSplits, MaxMoves  int     // per tick
}

// DefaultBalancerConfig returns the service's balancer as the case study
// describes it: a look every 15 s and 5-10 minutes to decide.
func DefaultBalancerConfig() BalancerConfig {
	return BalancerConfig{
		Enabled: true, Interval: 15 * time.Second,
		DecideMin: 5 * time.Minute, DecideMax: 10 * time.Minute,
		HotUtilization: 0.8, HotThrottleRate: 0.001, IsolateShare: 0.9,
		MaxSplits: 2, MaxMoves: 4,
	}
}

// AcceleratedBalancerConfig returns a balancer that decides in 15-30 s, for
// warm-ups and for watching it work in a short run.
func AcceleratedBalancerConfig() BalancerConfig {
	c := DefaultBalancerConfig()
	c.DecideMin, c.DecideMax = 15*time.Second, 30*time.Second
	return c
}

// EventKind is what the balancer did.
type EventKind string

// The balancer's events.
const (
	EventSplit EventKind = "split"
	EventMove  EventKind = "move"
)

// Event is one action of the balancer. Range is the partition acted on
// ([Lo, Hi), "" as Hi is the end of the key space); for a split, At is the
// key it was split at; for a move, From and To are servers. The partition is
// unavailable until Until.
type Event struct {
	Time  time.Time `json:"time"`
	Kind  EventKind `json:"kind"`
	Table string    `json:"table"`
	Lo    string    `json:"lo"`
	Hi    string    `json:"hi"`
	At    []string  `json:"at,omitempty"`
	From  int       `json:"from_server"`
	To    int       `json:"to_server"`
	Until time.Time `json:"unavailable_until"`
}

// PartitionLoad is one range partition's load over a balancer window.
type PartitionLoad struct {
	Table       string  `json:"table"`
	Lo          string  `json:"lo"`
	Hi          string  `json:"hi"`
	Server      int     `json:"server"`
	Utilization float64 `json:"utilization"`
	Requests    int64   `json:"requests"`
	Throttled   int64   `json:"throttled"`
	TimedOut    int64   `json:"timed_out"`
	Units       float64 `json:"units"`
}

// Snapshot is the stamp's load over one balancer window.
type Snapshot struct {
	Time time.Time `json:"time"`
	// Partitions are the range partitions that served requests in the
	// window: an idle one has no load to show, and listing every partition
	// of every table at every tick kept megabytes per tick for a stamp of
	// many idle tables.
	Partitions []PartitionLoad `json:"partitions"`
	Servers    []float64       `json:"servers"` // core utilisation per server
}

const maxSnapshots = 4096

type balancer struct {
	e   *Engine
	cfg BalancerConfig
	rng *rand.Rand

	mu        sync.Mutex
	events    []Event
	snapshots []Snapshot
}

func newBalancer(e *Engine, cfg BalancerConfig) *balancer {
	if cfg.Interval <= 0 {
		cfg.Interval = 15 * time.Second
	}
	if cfg.DecideMax < cfg.DecideMin {
		cfg.DecideMax = cfg.DecideMin
	}
	return &balancer{e: e, cfg: cfg, rng: rand.New(rand.NewPCG(e.cfg.Seed, 0xba1a))}
}

// run ticks every interval from when it starts, with a context from
// clock.GoBackground: on a virtual clock it never drives time, and starts in
// its turn rather than whenever its goroutine first gets a CPU.
func (b *balancer) run(ctx context.Context) {
	next := b.e.clock.Now()
	for {
		next = next.Add(b.cfg.Interval)
		if b.e.clock.SleepUntil(ctx, next) != nil {
			return
		}
		b.tick(next)
	}
}

// Events returns what the balancer has done, oldest first.
func (e *Engine) Events() []Event {
	if e.lb == nil {
		return nil
	}
	e.lb.mu.Lock()
	defer e.lb.mu.Unlock()
	return slices.Clone(e.lb.events)
}

// Snapshots returns the stamp's load at each balancer tick, oldest first
// (at most the last 4,096).
func (e *Engine) Snapshots() []Snapshot {
	if e.lb == nil {
		return nil
	}
	e.lb.mu.Lock()
	defer e.lb.mu.Unlock()
	return slices.Clone(e.lb.snapshots)
}

// Partitions returns the current range partitions of a table.
func (e *Engine) Partitions(tableName string) ([]PartitionLoad, error) {
	t, err := e.table(tableName)
	if err != nil {
		return nil, err
	}
	m := t.parts.Load()
	out := make([]PartitionLoad, len(m.parts))
	for i := range m.parts {
		rp := m.parts[i].Load()
		if rp == nil { // not made yet: no load
			out[i] = PartitionLoad{Table: t.name, Lo: m.los[i], Hi: m.hi(i), Server: e.slotServer(t, m.los[i]).id}
			continue
		}
		rp.mu.RLock()
		out[i] = PartitionLoad{Table: t.name, Lo: rp.lo, Hi: rp.hi, Server: rp.srv.id, Utilization: rp.util}
		rp.mu.RUnlock()
	}
	return out, nil
}

func (b *balancer) draw() time.Duration {
	d := b.cfg.DecideMin
	if span := b.cfg.DecideMax - b.cfg.DecideMin; span > 0 {
		d += time.Duration(b.rng.Int64N(int64(span) + 1))
	}
	return d
}

// hotFor updates a hot state and reports whether it has been hot for its
// decision delay.
func (b *balancer) hotFor(h *hotState, hot bool, now time.Time) bool {
	if !hot {
		*h = hotState{}
		return false
	}
	if h.since.IsZero() {
		h.since, h.decide = now, b.draw()
	}
	return now.Sub(h.since) >= h.decide
}

type candidate struct {
	rp     *rangePartition
	sample []keyLoad
	util   float64
}

func (b *balancer) tick(now time.Time) {
	e := b.e
	winSecs := b.cfg.Interval.Seconds()
	snap := Snapshot{Time: now}
	e.stampMu.Lock()
	for _, s := range e.servers {
		s.util = min(1, s.busy.Seconds()/(winSecs*float64(len(s.cores))))
		s.busy = 0
		snap.Servers = append(snap.Servers, s.util)
	}
	e.stampMu.Unlock()
	var split []candidate
	perServer := map[*server][]candidate{}
	tables := *e.tables.Load()
	names := make([]string, 0, len(tables))
	for k := range tables {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		t := tables[name]
		m := t.parts.Load()
		for i := range m.parts {
			rp := m.parts[i].Load()
			if rp == nil { // never used: no load to look at
				continue
			}
			rp.mu.Lock()
			w := rp.win
			rp.win = window{sample: w.sample[:0:0]}
			rp.util = min(1, w.busy.Seconds()/winSecs)
			bad := float64(w.throttled + w.timeouts)
			hot := rp.util > b.cfg.HotUtilization || (w.requests > 0 && bad/float64(w.requests) > b.cfg.HotThrottleRate)
			ready := b.hotFor(&rp.hot, hot && !rp.single, now)
			for k, bk := range rp.buckets { // forget keys whose budget is full again
				if bk.refill(now.UnixNano()); bk.tokens >= bk.burst {
					delete(rp.buckets, k)
					rp.bucketGen++
					if g := rp.data.rows(k); g != nil {
						g.budget = nil
					}
				}
			}
			c := candidate{rp: rp, sample: w.sample, util: rp.util}
			srv := rp.srv
			rp.mu.Unlock()
			if w.requests > 0 || w.busy > 0 {
				snap.Partitions = append(snap.Partitions, PartitionLoad{
					Table: t.name, Lo: rp.lo, Hi: rp.hi, Server: srv.id, Utilization: c.util,
					Requests: w.requests, Throttled: w.throttled, TimedOut: w.timeouts, Units: w.units,
				})
			}
			perServer[srv] = append(perServer[srv], c)
			if ready {
				split = append(split, c)
			}
		}
	}
	slices.SortStableFunc(split, func(a, b candidate) int { return cmp.Compare(b.util, a.util) })
	for i := 0; i < len(split) && i < b.cfg.MaxSplits; i++ {
		b.split(split[i], now)
	}
	moves := 0
	for _, s := range e.servers {
		cands := perServer[s]
		if !b.hotFor(&s.hot, s.util > b.cfg.HotUtilization, now) || len(cands) < 2 || moves >= b.cfg.MaxMoves {
			continue
		}
		slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.util, a.util) })
		if cands[0].util >= b.cfg.HotUtilization { // one partition explains it: splitting is the cure
			continue
		}
		if to := e.leastLoadedServer(s); to != nil && to.util < s.util {
			b.move(cands[0].rp, to, now, now)
			s.hot = hotState{}
			moves++
		}
	}
	b.mu.Lock()
	b.snapshots = append(b.snapshots, snap)
	if len(b.snapshots) > maxSnapshots {
		b.snapshots = slices.Delete(b.snapshots, 0, len(b.snapshots)-maxSnapshots)
	}
	b.mu.Unlock()
}

// leastLoadedServer returns the server with the lowest utilisation other
// than not.
func (e *Engine) leastLoadedServer(not *server) *server {
	var best *server
	for _, s := range e.servers {
		if s == not {
			continue
		}
		if best == nil || s.util < best.util {
			best = s
		}
	}
	if best == nil {
		return e.servers[0]
	}
	return best
}

// split splits a hot partition at its load-weighted median key, or isolates
// a key that carries most of its load, then moves the hotter child to the
// least loaded server. A partition that holds a single key is never split.
func (b *balancer) split(c candidate, now time.Time) {
	rp := c.rp
	median, top, share := weightedMedian(c.sample)
	if len(c.sample) == 0 {
		return
	}
	at := b.splitPoints(rp, median, top, share)
	if len(at) == 0 {
		rp.mu.Lock()
		rp.single = true
		rp.mu.Unlock()
		return
	}
	t := rp.table
	t.mu.Lock()
	defer t.mu.Unlock()
	rp.mu.Lock()
	if rp.retired {
		rp.mu.Unlock()
		return
	}
	p := &b.e.cfg.Profile
	pause := p.SplitPauseMin + time.Duration(b.rng.Int64N(int64(p.SplitPauseMax-p.SplitPauseMin)+1))
	children := b.children(rp, at, now.Add(pause))
	// The hotter child is the one that holds the sample's top key.
	hot := children[0]
	for _, c := range children {
		if c.contains(top) {
			hot = c
		}
		if share >= b.cfg.IsolateShare && c.lo == top && c.hi == top+"\x00" {
			c.single = true
		}
	}
	rp.retired = true
	rp.data = partitionRows{gen: rp.data.gen + 1} // the children own the records now
	m := t.parts.Load()
	t.parts.Store(m.replace(m.find(rp.lo), children))
	rp.mu.Unlock()
	b.record(Event{Time: now, Kind: EventSplit, Table: t.name, Lo: rp.lo, Hi: rp.hi, At: at, From: rp.srv.id, To: rp.srv.id, Until: now.Add(pause)})
	b.moveCooler(children, hot, now.Add(pause), now)
}

// splitPoints is where to split rp, from its sample's median, top key and
// the top key's share: a key hot enough is isolated in a partition of its
// own; otherwise rp splits at the median, or just above it when the median
// is rp's lowest key. None means rp holds one key only.
func (b *balancer) splitPoints(rp *rangePartition, median, top string, share float64) []string {
	var at []string
	if share >= b.cfg.IsolateShare {
		if top != rp.lo {
			at = append(at, top)
		}
		if succ := top + "\x00"; rp.hi == "" || compareKeys(succ, rp.hi) < 0 {
			at = append(at, succ)
		}
	} else if median != rp.lo {
		at = append(at, median)
	} else { // the median is the lowest key: split just above it
		at = append(at, median+"\x00")
	}
	return at
}

// children makes the partitions rp splits into at the keys at, on rp's
// server, unavailable until until, and hands them rp's rows and throttling
// buckets. The caller holds rp's table's and rp's locks.
func (b *balancer) children(rp *rangePartition, at []string, until time.Time) []*rangePartition {
	bounds := append(append([]string{rp.lo}, at...), rp.hi)
	children := make([]*rangePartition, 0, len(at)+1)
	for i := 0; i+1 < len(bounds); i++ {
		child := b.e.newRangePartition(rp.table, bounds[i], bounds[i+1], rp.srv, b.e.rpSeq.Add(1))
		child.sched = rp.sched.clone()
		child.queue = rp.queue.clone()
		child.unavailableUntil = maxTime(rp.unavailableUntil, until)
		child.lastTS = rp.lastTS
		children = append(children, child)
	}
	rp.data.each(func(g *pkRows) {
		for _, c := range children {
			if c.contains(g.pk) {
				c.data.adopt(g)
				break
			}
		}
	})
	for k, bk := range rp.buckets {
		for _, c := range children {
			if c.contains(k) {
				c.setBucket(k, bk)
				break
			}
		}
	}
	return children
}

// moveCooler moves the first of the children that is not hot to the least
// loaded other server, so the hot one keeps its server's cache and the load
// is spread; a lone child cannot be moved usefully.
func (b *balancer) moveCooler(children []*rangePartition, hot *rangePartition, until, now time.Time) {
	for _, c := range children {
		if c != hot {
			if to := b.e.leastLoadedServer(c.srv); to != nil {
				b.move(c, to, until, now)
			}
			return
		}
	}
}

// move reassigns a partition to another server; it is unavailable while it
// moves.
func (b *balancer) move(rp *rangePartition, to *server, from time.Time, now time.Time) {
	p := &b.e.cfg.Profile
	d := p.MoveMin + time.Duration(b.rng.Int64N(int64(p.MoveMax-p.MoveMin)+1))
	rp.mu.Lock()
	if rp.retired {
		rp.mu.Unlock()
		return
	}
	old := rp.srv
	rp.srv = to
	rp.unavailableUntil = maxTime(rp.unavailableUntil, from.Add(d))
	until := rp.unavailableUntil
	rp.mu.Unlock()
	to.util += rp.util / float64(len(to.cores)) // so one tick does not pile every move on one server
	b.record(Event{Time: now, Kind: EventMove, Table: rp.table.name, Lo: rp.lo, Hi: rp.hi, From: old.id, To: to.id, Until: until})
}

func (b *balancer) record(ev Event) {
	b.mu.Lock()
	b.events = append(b.events, ev)
	b.mu.Unlock()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// weightedMedian returns the load-weighted median key of a sample and the key
// with the largest share of the load, with that share.
func weightedMedian(sample []keyLoad) (median, top string, topShare float64) {
	if len(sample) == 0 {
		return "", "", 0
	}
	s := append([]keyLoad(nil), sample...)
	sort.Slice(s, func(i, j int) bool { return compareKeys(s[i].pk, s[j].pk) < 0 })
	var total float64
	for _, kl := range s {
		total += kl.units
	}
	var acc, run, best float64
	found := false
	for i, kl := range s {
		acc += kl.units
		if !found && acc >= total/2 {
			median, found = kl.pk, true
		}
		run += kl.units
		if i+1 == len(s) || s[i+1].pk != kl.pk {
			if run > best {
				best, top = run, kl.pk
			}
			run = 0
		}
	}
	return median, top, best / total
}
