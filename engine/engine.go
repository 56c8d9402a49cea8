package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
)

// Config configures an Engine. Start from DefaultConfig.
type Config struct {
	// Profile is the performance model. None() serves requests as fast as
	// the engine can, with no latency and no throttling.
	Profile Profile
	// TimeScale compresses every modelled duration and rate: at 10, a 60 s
	// experiment takes 6 s of wall time. Ignored when Clock is set.
	TimeScale float64
	// Clock, when set, is the engine's source of time.
	Clock clock.Clock
	// Seed seeds every random draw the engine makes.
	Seed uint64
	// PreSplit is the number of range partitions a new table starts with,
	// split evenly over the hex-GUID key space and spread over the servers.
	// 0 or 1 starts a table cold, in one range partition, as the service does.
	// A partition is made when a request first needs it (without a model,
	// its first write), so one never used costs its table only a slot.
	PreSplit int
	// MaxKeyLength is the longest PartitionKey or RowKey, in UTF-16 code
	// units. The service documents 1 KiB, that is 512 code units.
	MaxKeyLength int
	// TableDeleteGrace is how long a deleted table's name cannot be created
	// again (409 TableBeingDeleted). Zero allows it at once.
	TableDeleteGrace time.Duration
	// Balancer configures the load balancer; it runs only under a profile
	// with a model.
	Balancer BalancerConfig
	// PartitionRate and AccountRate override the profile's budgets, in
	// entity units per second; 0 keeps the profile's. SetRates changes
	// them later.
	PartitionRate, AccountRate float64
}

// ServiceTableDeleteGrace is how long the service refuses to create a table
// again after deleting one of that name: garbage collection of the deleted
// table takes at least 40 seconds.
const ServiceTableDeleteGrace = 40 * time.Second

// DefaultConfig returns the configuration of the case study's engine: the
// wa2010 profile in wall time, tables starting cold, the balancer on.
func DefaultConfig() Config {
	return Config{
		Profile:          WA2010(),
		TimeScale:        1,
		Seed:             1,
		MaxKeyLength:     tables.DefaultMaxKeyLen,
		TableDeleteGrace: ServiceTableDeleteGrace,
		Balancer:         DefaultBalancerConfig(),
	}
}

// Engine is one storage account: a set of tables served by a stamp of
// partition servers. It is safe for concurrent use.
type Engine struct {
	cfg   Config
	clock clock.Clock

	tables   atomic.Pointer[map[string]*table] // by lower-case name, copy on write
	tablesMu sync.Mutex                        // serializes table creation and deletion
	// named is the table a request last named, as it named it, while
	// tables holds the map it was found in: see table.
	named   atomic.Pointer[namedTable]
	deleted map[string]time.Time // lower-case name -> when its grace ends
	// deletedLast is the latest grace end in deleted, and deletedKept how
	// many names the last sweep kept: see forgetDeleted.
	deletedLast time.Time
	deletedKept int

	servers  []*server
	presplit presplit // a new table's range partitions
	nextSrv  atomic.Uint64
	rpSeq    atomic.Uint64
	stampMu  sync.Mutex // guards acct and every server's schedule: see Engine.do
	// unshared says that requests come one at a time: see Unshared.
	unshared atomic.Bool
	acct     bucket
	rates    atomic.Pointer[Rates]
	lb       *balancer
	// stage and laneDist are the profile's CV and LaneCV, taken once.
	stage, laneDist lognorm
	// ru is the profile's requestUnits, which every request asks twice.
	ru       bool
	closeLB  context.CancelFunc
	lbDone   chan struct{}
	closeErr sync.Once
}

// New returns an engine configured by cfg. Close it to stop its load
// balancer.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Profile.validate(); err != nil {
		return nil, err
	}
	if cfg.MaxKeyLength <= 0 {
		cfg.MaxKeyLength = tables.DefaultMaxKeyLen
	}
	if cfg.PreSplit < 0 || cfg.PreSplit > 4096 {
		return nil, fmt.Errorf("engine: pre-split of %d range partitions is out of range: use 0 (cold) to 4096", cfg.PreSplit)
	}
	if cfg.TimeScale < 0 {
		return nil, fmt.Errorf("engine: time scale %g is negative: use a factor above 0 (1 is wall time)", cfg.TimeScale)
	}
	e := &Engine{cfg: cfg, clock: cfg.Clock, deleted: map[string]time.Time{}}
	pr := &cfg.Profile // the means of the draws of a request of one entity of up to 1 KiB
	e.stage = newLognorm(pr.CV, pr.FEWrite+scaleDur(pr.FEWriteUnit, 1), pr.FERead, pr.PostWrite+pr.PostUnit, pr.PostRead)
	e.laneDist = newLognorm(pr.LaneCV, pr.WriteA+scaleDur(pr.WriteB, 1), pr.Get)
	e.ru = pr.requestUnits()
	if e.clock == nil {
		e.clock = clock.NewScaled(cfg.TimeScale)
	}
	empty := map[string]*table{}
	e.tables.Store(&empty)
	p := cfg.Profile
	n := max(p.Servers, 1)
	for i := range n {
		e.servers = append(e.servers, newServer(i, max(p.ServerCores, 1)))
	}
	e.presplit = newPresplit(max(cfg.PreSplit, 1))
	e.acct = *newBucket(p.AccountRate, p.AccountBurst)
	r := Rates{Partition: p.PartitionKeyRate, Account: p.AccountRate}
	if cfg.PartitionRate != 0 {
		r.Partition = cfg.PartitionRate
	}
	if cfg.AccountRate != 0 {
		r.Account = cfg.AccountRate
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.rates.Store(&r)
	if p.Model && cfg.Balancer.Enabled {
		ctx, cancel := context.WithCancel(context.Background())
		e.closeLB = cancel
		e.lbDone = make(chan struct{})
		e.lb = newBalancer(e, cfg.Balancer)
		clock.GoBackground(e.clock, ctx, func(ctx context.Context) { // it never drives time
			defer close(e.lbDone)
			e.lb.run(ctx)
		})
	}
	return e, nil
}

// Unshared declares whether the engine's requests come one at a time, each
// in its turn of a virtual clock, from its participants alone: a
// simulator's threads stepped as the clock's tasks, its deadline, and the
// engine's load balancer. While they do, a modelled request of a caller
// with a Call takes none of the engine's locks: nothing contends for them,
// and the atomic instruction of an uncontended lock is a barrier that
// waits for every store before it, which with thousands of threads is a
// store that missed the cache. A caller that says so while another
// goroutine may call the engine outside the clock's turns races.
func (e *Engine) Unshared(on bool) { e.unshared.Store(on) }

// Close stops the engine's load balancer. The data stays readable.
func (e *Engine) Close() error {
	e.closeErr.Do(func() {
		if e.closeLB != nil {
			e.closeLB()
			<-e.lbDone
		}
	})
	return nil
}

// Clock returns the engine's clock; callers that measure latency in model
// time use it.
func (e *Engine) Clock() clock.Clock { return e.clock }

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// ValidateTableName checks a table name against the service's rules.
func ValidateTableName(name string) error {
	if !tables.ValidTableName(name) {
		return tables.BadRequest(tables.CodeInvalidResourceName, fmt.Sprintf("The table name %q is invalid: use 3 to 63 letters and digits, starting with a letter; \"tables\" is reserved.", name))
	}
	return nil
}

// CreateTable creates a table. Names are case-insensitive and case-preserving.
func (e *Engine) CreateTable(ctx context.Context, name string) error {
	if err := ValidateTableName(name); err != nil {
		return err
	}
	key := strings.ToLower(name)
	e.tablesMu.Lock()
	defer e.tablesMu.Unlock()
	old := *e.tables.Load()
	if _, ok := old[key]; ok {
		return tables.NewError(http.StatusConflict, tables.CodeTableAlreadyExists, "The table specified already exists.")
	}
	if len(e.deleted) > 0 {
		e.forgetDeleted(e.clock.Now())
	}
	if until, ok := e.deleted[key]; ok {
		if e.clock.Now().Before(until) {
			return tables.NewError(http.StatusConflict, tables.CodeTableBeingDeleted, "The specified table is being deleted. Try operation later.")
		}
		delete(e.deleted, key)
	}
	t := e.newTable(name)
	next := make(map[string]*table, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[key] = t
	e.tables.Store(&next)
	e.named.Store(nil) // it would keep the old map, and a deleted table's data
	return nil
}

// DeleteTable deletes a table and all its entities.
func (e *Engine) DeleteTable(ctx context.Context, name string) error {
	key := strings.ToLower(name)
	e.tablesMu.Lock()
	defer e.tablesMu.Unlock()
	old := *e.tables.Load()
	if _, ok := old[key]; !ok {
		return errTableNotFound
	}
	next := make(map[string]*table, len(old))
	for k, v := range old {
		if k != key {
			next[k] = v
		}
	}
	e.tables.Store(&next)
	e.named.Store(nil) // it would keep the old map, and a deleted table's data
	if e.cfg.TableDeleteGrace > 0 {
		now := e.clock.Now()
		e.forgetDeleted(now)
		e.deleted[key] = now.Add(e.cfg.TableDeleteGrace)
		e.deletedLast = maxTime(e.deletedLast, e.deleted[key])
	}
	return nil
}

// forgetDeleted drops the names whose grace period is over, called with
// tablesMu held: a process that makes and drops many tables would
// otherwise keep every name it ever deleted. It starts afresh once every
// grace is over, and otherwise sweeps when the names have doubled since
// the last sweep, so each deletion costs a constant share of the sweeps.
// A map keeps the room of its largest size, so a sweep builds a new one.
func (e *Engine) forgetDeleted(now time.Time) {
	switch {
	case len(e.deleted) == 0:
	case !now.Before(e.deletedLast):
		e.deleted, e.deletedKept = map[string]time.Time{}, 0
	case len(e.deleted) >= 2*e.deletedKept+16:
		kept := make(map[string]time.Time)
		for k, until := range e.deleted {
			if now.Before(until) {
				kept[k] = until
			}
		}
		e.deleted, e.deletedKept = kept, len(kept)
	}
}

// ListTables returns up to top table names (all when top is 0) in ordinal
// order, starting at the name next, and the name to continue from ("" when
// there are no more).
func (e *Engine) ListTables(ctx context.Context, top int, next string) ([]string, string, error) {
	if top < 0 || top > tables.MaxPageSize {
		return nil, "", tables.BadRequest(tables.CodeInvalidQueryParameterValue, "The value of $top must be between 1 and 1000.")
	}
	if top == 0 {
		top = tables.MaxPageSize
	}
	var names []string
	for _, t := range *e.tables.Load() {
		if next == "" || compareKeys(t.name, next) >= 0 {
			names = append(names, t.name)
		}
	}
	slices.SortFunc(names, compareKeys)
	if len(names) > top {
		return names[:top], names[top], nil
	}
	return names, "", nil
}

// TableNames returns every table's name in ordinal order.
func (e *Engine) TableNames() []string {
	var names []string
	for _, t := range *e.tables.Load() {
		names = append(names, t.name)
	}
	slices.Sort(names)
	return names
}

// HasTable reports whether a table exists.
func (e *Engine) HasTable(name string) bool {
	_, err := e.table(name)
	return err == nil
}

// TableName returns a table's name as it was created: names are
// case-insensitive and case-preserving.
func (e *Engine) TableName(name string) (string, bool) {
	t, err := e.table(name)
	if err != nil {
		return "", false
	}
	return t.name, true
}

// namedTable is a table found by a name, in the map of tables m.
type namedTable struct {
	name string
	m    *map[string]*table
	t    *table
}

func (e *Engine) table(name string) (*table, *tables.Error) {
	m := e.tables.Load()
	// Requests most often name the table the one before named: a run
	// writes one. The name need not be lowered nor hashed again while
	// no table has been made or deleted since.
	n := e.named.Load()
	if n != nil && n.m == m && sameKey(n.name, name) {
		return n.t, nil
	}
	t, ok := (*m)[strings.ToLower(name)]
	if !ok {
		return nil, errTableNotFound
	}
	if n == nil || n.m != m { // not when two names alternate: each would cost an allocation
		n = &namedTable{name: name, m: m, t: t}
		e.named.Store(n)
		if e.tables.Load() != m { // a table made or deleted meanwhile: keep nothing of the old map
			e.named.CompareAndSwap(n, nil)
		}
	}
	return t, nil
}

// table is one table: an ordered set of range partitions over its
// PartitionKeys.
//
// A table's range partitions are made on first use: a new table holds only
// its partition map, whose slots are empty until a request reaches their
// range. A pre-split table has one partition per server core (64 under the
// case study's profiles), most of which many tables never use; made at
// once, they cost an empty table about 50 KB. Each slot's identity is fixed when the table is made, so a
// partition made late is the one made at once would have been: its id
// (which seeds its random draws) is firstID plus its place among the
// pre-split bounds, and its server the one after firstSrv by that place.
type table struct {
	e        *Engine
	name     string
	parts    atomic.Pointer[partitionMap] // copy on write
	mu       sync.Mutex                   // serializes splits and the making of partitions
	firstID  uint64                       // id of the first pre-split range partition
	firstSrv uint64                       // server of the first pre-split range partition
	ru       container                    // the cosmos profile's request units
}

// partitionMap is a table's range partitions sorted by low key, with each
// low key and its fingerprint beside it: locating a key compares
// fingerprints in one array instead of reading each partition's key
// elsewhere in memory, which every operation does. A slot is empty until
// its partition is made; the low keys of a new table's map are shared by
// every table of the engine.
type partitionMap struct {
	parts []atomic.Pointer[rangePartition] // nil until first used
	lo    []uint64                         // fingerprintAt(los[i], 0)
	los   []string                         // low keys; los[i+1] is slot i's high key
}

// hi returns slot i's high key, "" for the end of the key space.
func (m *partitionMap) hi(i int) string {
	if i+1 < len(m.los) {
		return m.los[i+1]
	}
	return ""
}

// replace returns a map with slot i's partition replaced by children,
// which cover its range. Called with the table's mu held, so no slot is
// filled meanwhile.
func (m *partitionMap) replace(i int, children []*rangePartition) *partitionMap {
	n := len(m.parts) - 1 + len(children)
	next := &partitionMap{parts: make([]atomic.Pointer[rangePartition], n), lo: make([]uint64, 0, n), los: make([]string, 0, n)}
	for j := range i {
		next.parts[j].Store(m.parts[j].Load())
	}
	next.lo, next.los = append(next.lo, m.lo[:i]...), append(next.los, m.los[:i]...)
	for j, c := range children {
		next.parts[i+j].Store(c)
		next.lo, next.los = append(next.lo, fingerprintAt(c.lo, 0)), append(next.los, c.lo)
	}
	for j := i + 1; j < len(m.parts); j++ {
		next.parts[j-1+len(children)].Store(m.parts[j].Load())
	}
	next.lo, next.los = append(next.lo, m.lo[i+1:]...), append(next.los, m.los[i+1:]...)
	return next
}

// presplit is the low keys, and their fingerprints, of a new table's range
// partitions, shared by every table's first map.
type presplit struct {
	los []string
	lo  []uint64
}

func newPresplit(k int) presplit {
	p := presplit{los: presplitBounds(k)}
	for _, lo := range p.los {
		p.lo = append(p.lo, fingerprintAt(lo, 0))
	}
	return p
}

func (e *Engine) newTable(name string) *table {
	k := len(e.presplit.los)
	t := &table{e: e, name: name, firstID: e.rpSeq.Add(uint64(k)) - uint64(k) + 1}
	t.firstSrv = e.nextSrv.Add(uint64(k)) - uint64(k)
	if k == 1 {
		t.firstSrv = uint64(e.leastLoadedServer(nil).id)
	}
	t.parts.Store(&partitionMap{parts: make([]atomic.Pointer[rangePartition], k), lo: e.presplit.lo, los: e.presplit.los})
	return t
}

// presplitBounds returns the low keys of k range partitions spread evenly
// over the hex-GUID key space; the first is "" (the lowest key).
func presplitBounds(k int) []string {
	bounds := []string{""}
	digits, space := 1, 16
	for space < k {
		digits++
		space *= 16
	}
	for i := 1; i < k; i++ {
		bounds = append(bounds, fmt.Sprintf("%0*x", digits, i*space/k))
	}
	return bounds
}

// find returns the slot of the range partition holding pk.
func (m *partitionMap) find(pk string) int {
	fp := fingerprintAt(pk, 0)
	lo, hi := 1, len(m.lo) // the first partition's low key is "", at or below every key
	for lo < hi {          // the first partition whose low key is above pk
		i := int(uint(lo+hi) >> 1)
		var above bool
		if f := m.lo[i]; f != fp && f != noPrint && fp != noPrint {
			above = f > fp
		} else {
			above = compareKeys(m.los[i], pk) > 0
		}
		if above {
			hi = i
		} else {
			lo = i + 1
		}
	}
	return lo - 1
}

func (t *table) locate(pk string) *rangePartition {
	m := t.parts.Load()
	if rp := m.parts[m.find(pk)].Load(); rp != nil {
		return rp
	}
	return t.makePartition(pk)
}

// makePartition makes the range partition holding pk, the first time a request
// reaches it.
func (t *table) makePartition(pk string) *rangePartition {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.parts.Load() // a split may have replaced the map the caller read
	i := m.find(pk)
	if rp := m.parts[i].Load(); rp != nil {
		return rp
	}
	lo := m.los[i]
	rp := t.e.newRangePartition(t, lo, m.hi(i), t.e.slotServer(t, lo), t.firstID+uint64(t.e.presplitIndex(lo)))
	m.parts[i].Store(rp)
	return rp
}

// presplitIndex returns the place among the pre-split bounds of lo, the
// low key of a partition not yet made: splits replace only partitions made
// already, so it is one of them.
func (e *Engine) presplitIndex(lo string) int {
	i, _ := slices.BinarySearchFunc(e.presplit.los, lo, compareKeys)
	return i
}

// slotServer returns the server of t's range partition from lo, not yet
// made.
func (e *Engine) slotServer(t *table, lo string) *server {
	return e.servers[(t.firstSrv+uint64(e.presplitIndex(lo)))%uint64(len(e.servers))]
}

// lock returns the live range partition holding pk, locked for writing (or
// for reading when read is true). A partition retired by a split while the
// caller waited for its lock is skipped.
func (t *table) lock(pk string, read bool) *rangePartition {
	for {
		rp := t.locate(pk)
		if read {
			rp.mu.RLock()
		} else {
			rp.mu.Lock()
		}
		if !rp.retired {
			return rp
		}
		if read {
			rp.mu.RUnlock()
		} else {
			rp.mu.Unlock()
		}
	}
}

// lockFor is lock(pk, false) for a request of caller c, which keeps the
// slot where it last found a partition: a caller's requests most often go
// to the key of its last one, and the slot stays right while the map does.
// Unshared (Engine.Unshared), it finds the partition without locking it;
// c must not be nil then.
func (t *table) lockFor(c *Call, pk string, unshared bool) *rangePartition {
	if c == nil {
		return t.lock(pk, false)
	}
	for {
		m := t.parts.Load()
		if c.slots != m || !sameKey(c.slotPK, pk) {
			c.slots, c.slotPK, c.slot = m, pk, m.find(pk)
		}
		rp := m.parts[c.slot].Load()
		if rp == nil {
			rp = t.makePartition(pk)
		}
		if unshared {
			if !rp.retired {
				return rp
			}
			continue
		}
		rp.mu.Lock()
		if !rp.retired {
			return rp
		}
		rp.mu.Unlock()
	}
}

// rlockMade returns the live range partition holding pk locked for
// reading, or nil if it has not been made.
func (t *table) rlockMade(pk string) *rangePartition {
	for {
		m := t.parts.Load()
		rp := m.parts[m.find(pk)].Load()
		if rp == nil {
			return nil
		}
		rp.mu.RLock()
		if !rp.retired {
			return rp
		}
		rp.mu.RUnlock()
	}
}

// vacant returns a stand-in for the range partition holding pk, not made:
// it holds nothing, and has no model state.
func (t *table) vacant(pk string) *rangePartition {
	m := t.parts.Load()
	i := m.find(pk)
	return &rangePartition{table: t, lo: m.los[i], hi: m.hi(i)}
}

// rangePartition is a range [lo, hi) of a table's PartitionKeys ("" as hi is
// the end of the key space), its data and the model state of its serial lane.
type rangePartition struct {
	id      uint64
	table   *table
	lo, hi  string
	mu      sync.RWMutex
	data    partitionRows
	retired bool
	lastTS  int64
	lane    // model state, guarded by mu
}

// newRangePartition returns the range partition [lo, hi) of t on srv. Its
// entities' structures are made with its first entity.
func (e *Engine) newRangePartition(t *table, lo, hi string, srv *server, id uint64) *rangePartition {
	rp := &rangePartition{id: id, table: t, lo: lo, hi: hi}
	rp.lane.init(srv, rand.New(rand.NewPCG(e.cfg.Seed, id)))
	return rp
}

func (rp *rangePartition) contains(pk string) bool {
	return compareKeys(pk, rp.lo) >= 0 && (rp.hi == "" || compareKeys(pk, rp.hi) < 0)
}

// stamp returns the next write timestamp of the partition: model time at
// 100 ns precision, strictly increasing so two writes never share an ETag.
// now is in Unix nanoseconds, as the model's times are.
func (rp *rangePartition) stamp(now int64) int64 {
	ts := now / 100 * 100
	if ts <= rp.lastTS {
		ts = rp.lastTS + 100
	}
	rp.lastTS = ts
	return ts
}

// get returns the record with keys (pk, rk) and whether there is one; c is
// the caller, nil for none.
func (rp *rangePartition) get(c *Call, pk, rk string) (record, bool) {
	if g := rp.rows(c, pk); g != nil {
		return g.rows.get(rk)
	}
	return record{}, false
}

// put stores r under PartitionKey pk, replacing any record with its keys;
// c is the caller, nil for none.
func (rp *rangePartition) put(c *Call, pk string, r *record) {
	g := rp.keptRows(c, pk)
	if g == nil {
		g = rp.rowsFor(c, pk)
	}
	g.rows.put(r, false)
}

// insert stores r under PartitionKey pk with timestamp ts unless its keys
// are taken, and reports whether it did; c is the caller, nil for none.
func (rp *rangePartition) insert(c *Call, pk string, r *record, ts int64) bool {
	r.ts = ts
	g := rp.keptRows(c, pk)
	if g == nil {
		g = rp.rowsFor(c, pk)
	}
	_, found := g.rows.put(r, true)
	return !found
}

// remove deletes the record with keys (pk, rk), if there is one.
func (rp *rangePartition) remove(pk, rk string) {
	if g := rp.data.rows(pk); g != nil {
		g.rows.remove(rk)
		rp.data.drop(g)
	}
}
