package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// The cosmos profile's model: Azure Cosmos DB for Table. Sources, as titled
// in the Azure Cosmos DB documentation (docs/cosmos.md lists them):
//   - "Partitioning and scaling in Azure DocumentDB" (seed document 002):
//     throughput per collection is split evenly over its partitions, and a
//     partition key is hashed to one of them.
//   - "Azure Cosmos DB service quotas": at most 10,000 RU/s per partition,
//     20 GB per logical partition; a container of manual throughput has at
//     least 400 RU/s, and at most 1,000,000.
//   - "Best practices for scaling provisioned throughput (RU/s)": a
//     physical partition serves at most 10,000 RU/s and stores 50 GB; the
//     fewest physical partitions for a throughput is RU/s over 10,000; a
//     split takes typically 4-6 hours.
//   - "Frequently asked questions about autoscale provisioned throughput":
//     autoscale scales T between 0.1·Tmax and Tmax, instantly, on the most
//     active partition; its maximum can be as low as 1,000 RU/s.
//   - "Request units in Azure Cosmos DB" and "Optimize reads and writes
//     cost": 1 KB point read 1 RU, write 5 RU; 100 KB: 10 and 50 RU.
//   - "Review rate-limiting errors" (Microsoft Learn training): in any
//     second in which operations consume more than the provisioned RU/s,
//     429 with x-ms-retry-after-ms.
//
// Each table is a container. Its physical partitions split the 64-bit hash
// space of PartitionKeys; each has a budget of its share of the
// throughput for every second of model time. A request is admitted while
// its partition's budget for the current second is not spent, and charged
// after it is served; a charge beyond the budget is owed to the next
// seconds, so a partition serves its share on average and no more.

// Limits of provisioned throughput, in RU/s.
const (
	MinRU    = 400       // the least manual throughput of a container
	MinRUMax = 1000      // the least autoscale maximum
	MaxRU    = 1_000_000 // the most throughput of a container
)

func (p *Profile) validateRU() error {
	switch {
	case p.RUMax > 0 && (p.RUMax < MinRUMax || p.RUMax > MaxRU || math.IsNaN(p.RUMax)):
		return fmt.Errorf("autoscale maximum %g RU/s is out of range: use %d to %d", p.RUMax, MinRUMax, MaxRU)
	case p.RUMax == 0 && (p.RU < MinRU || p.RU > MaxRU || math.IsNaN(p.RU)):
		return fmt.Errorf("provisioned throughput %g RU/s is out of range: use %d to %d", p.RU, MinRU, MaxRU)
	case p.PartitionRU <= 0 || p.PartitionBytes <= 0 || p.LogicalPartitionBytes <= 0:
		return fmt.Errorf("a physical partition's RU/s and bytes and a logical partition's bytes must be positive")
	case p.SplitMin < 0 || p.SplitMax < p.SplitMin:
		return fmt.Errorf("split time %v to %v is not a range", p.SplitMin, p.SplitMax)
	case p.ReadRU <= 0 || p.WriteRU <= 0 || p.QueryRU <= 0 || p.RU100KB < 1:
		return fmt.Errorf("request charges must be positive, and a 100 KB entity's at least a 1 KB one's")
	}
	return nil
}

// maxRU is the throughput a table's partitions split between: the
// provisioned RU/s, or the autoscale maximum, which is there at once.
func (p *Profile) maxRU() float64 {
	if p.RUMax > 0 {
		return p.RUMax
	}
	return p.RU
}

// container is a table's request-unit state under the cosmos profile.
// Guarded by its mutex, which is taken with a range partition's held.
type container struct {
	mu    sync.Mutex
	parts []*physical // by hash range, ascending
	// logical is the bytes written to each PartitionKey.
	logical map[string]int64
	rng     *rand.Rand
	// sec is the second of model time whose charges secMax holds: the most
	// one partition was charged in it, from which autoscale scales.
	sec    int64
	secMax float64
	scaled float64 // autoscale: the RU/s the table scaled to in the last whole second
	splits int
}

// physical is one physical partition: the hash range up to hi (inclusive)
// and its budget.
type physical struct {
	hi      uint64
	sec     int64   // the second used was last brought to
	used    float64 // RU charged and not yet covered by a second's budget
	charged float64 // RU charged in second sec
	bytes   int64   // bytes written
	splitAt time.Time
}

func (c *container) init(p *Profile, e *Engine, t *table) {
	if c.parts != nil {
		return
	}
	n := max(1, int(math.Ceil(p.maxRU()/p.PartitionRU)))
	step := math.MaxUint64 / uint64(n)
	for i := range n {
		hi := uint64(math.MaxUint64)
		if i < n-1 {
			hi = uint64(i+1)*step - 1
		}
		c.parts = append(c.parts, &physical{hi: hi})
	}
	c.logical = map[string]int64{}
	c.rng = rand.New(rand.NewPCG(e.cfg.Seed, t.firstID))
	c.sec = math.MinInt64
	if p.RUMax > 0 {
		c.scaled = p.RUMax / 10
	}
}

// pkHash is a PartitionKey's place in the hash space: FNV-1a, so that the
// same keys land on the same partitions in every run. It is written out,
// as hash/fnv's is, so that unsorted can hash an entity's two keys
// without joining them in a new string at each comparison.
func pkHash(pk string) uint64 { return fnvAdd(fnvOffset, pk) }

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd returns FNV-1a hash h with the bytes of s added.
func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func (c *container) locate(pk string) *physical {
	h := pkHash(pk)
	i, _ := slices.BinarySearchFunc(c.parts, h, func(pp *physical, h uint64) int {
		if pp.hi < h {
			return -1
		}
		return 0
	})
	return c.parts[min(i, len(c.parts)-1)]
}

// share is one physical partition's budget, in RU per second.
func (c *container) share(p *Profile) float64 { return p.maxRU() / float64(len(c.parts)) }

// roll brings the partition's budget to the second of at: each second
// passed covers a share of what it owes.
func (pp *physical) roll(at time.Time, share float64) {
	sec := at.Unix()
	if sec > pp.sec {
		if pp.sec != 0 {
			pp.used = math.Max(0, pp.used-share*float64(sec-pp.sec))
		}
		pp.sec, pp.charged = sec, 0
	}
}

// retryAfter is how long, from at, until the partition's budget is no
// longer spent: the start of the first second whose share covers what it
// owes.
func (pp *physical) retryAfter(at time.Time, share float64) time.Duration {
	k := math.Floor(pp.used / share)
	free := time.Unix(pp.sec, 0).Add(time.Duration(k) * time.Second)
	return max(free.Sub(at), time.Millisecond).Round(time.Millisecond)
}

// advance completes the splits due by at, and rolls autoscale's second.
func (c *container) advance(e *Engine, t *table, p *Profile, at time.Time) {
	if sec := at.Unix(); sec > c.sec {
		if c.sec != math.MinInt64 && p.RUMax > 0 {
			c.scaled = math.Min(p.RUMax, math.Max(p.RUMax/10, c.secMax*float64(len(c.parts))))
			if sec > c.sec+1 { // a second with no load scales down to the floor
				c.scaled = p.RUMax / 10
			}
		}
		c.sec, c.secMax = sec, 0
	}
	for i := 0; i < len(c.parts); i++ {
		pp := c.parts[i]
		if pp.splitAt.IsZero() || pp.splitAt.After(at) {
			continue
		}
		lo := uint64(0)
		if i > 0 {
			lo = c.parts[i-1].hi + 1
		}
		mid := lo + (pp.hi-lo)/2
		left := &physical{hi: mid, sec: pp.sec, used: pp.used / 2, charged: pp.charged / 2, bytes: pp.bytes / 2}
		pp.used, pp.charged, pp.bytes, pp.splitAt = pp.used/2, pp.charged/2, pp.bytes-left.bytes, time.Time{}
		c.parts = slices.Insert(c.parts, i, left)
		c.splits++
		if e.lb != nil {
			e.lb.record(Event{Time: at, Kind: EventSplit, Table: t.name, Lo: fmt.Sprintf("hash:%016x", lo), Hi: fmt.Sprintf("hash:%016x", pp.hi)})
		}
		i++
	}
}

// ruAdmit is the cosmos profile's admission of a request to rp's
// PartitionKey pk at model time at, called with rp locked: 429
// RequestRateTooLarge while pk's physical partition has spent its budget
// for the second, 403 for a write that would grow pk past its limit. It
// admits everything under other profiles.
func (e *Engine) ruAdmit(rp *rangePartition, k opKind, pk string, at time.Time, units float64) *tables.Error {
	p := &e.cfg.Profile
	if !p.requestUnits() {
		return nil
	}
	c := &rp.table.ru
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(p, e, rp.table)
	c.advance(e, rp.table, p, at)
	pp := c.locate(pk)
	share := c.share(p)
	pp.roll(at, share)
	if k == opWrite && c.logical[pk]+int64(units*1024) > p.LogicalPartitionBytes {
		return tables.NewError(http.StatusForbidden, tables.CodePartitionKeyQuotaExceeded, fmt.Sprintf("Partition key reached maximum size of %d GB.", p.LogicalPartitionBytes>>30))
	}
	if pp.used >= share {
		err := tables.NewError(http.StatusTooManyRequests, tables.CodeRequestRateTooLarge, tables.MsgRequestRateLarge)
		err.RetryAfter = pp.retryAfter(at, share)
		return err
	}
	return nil
}

// ruCharge charges a request to pk's physical partition and returns its
// charge, in RU: nothing for a request refused for its rate; otherwise
// what its kind and size cost, served or not. units is the entity units
// (KiB) of a write, or the entities a query read; n the entities written.
// A write that succeeded adds its bytes to the partition's and the key's,
// and may start a split.
func (e *Engine) ruCharge(rp *rangePartition, k opKind, pk string, at time.Time, units float64, n int, err *tables.Error) float64 {
	p := &e.cfg.Profile
	if err != nil && (err.Code == tables.CodeRequestRateTooLarge || err.Code == tables.CodePartitionKeyQuotaExceeded) {
		return 0
	}
	ru := p.requestCharge(k, units, n)
	c := &rp.table.ru
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(p, e, rp.table)
	pp := c.locate(pk)
	pp.roll(at, c.share(p))
	c.chargeTo(pp, ru)
	if k == opWrite && err == nil {
		b := int64(units * 1024)
		pp.bytes += b
		c.logical[pk] += b
		if pp.bytes > p.PartitionBytes && pp.splitAt.IsZero() {
			pp.splitAt = at.Add(p.SplitMin + time.Duration(c.rng.Int64N(int64(p.SplitMax-p.SplitMin)+1)))
		}
	}
	return ru
}

func (c *container) chargeTo(pp *physical, ru float64) {
	pp.used += ru
	pp.charged += ru
	c.secMax = math.Max(c.secMax, pp.charged)
}

// requestCharge is the RU charge of an operation: a point read or a write
// of an entity of units KiB scales from its 1 KB charge to ten times that
// at 100 KB; a batch of n writes is the sum of its writes' (each taken at
// the batch's mean size); a query costs QueryRU per entity it read.
func (p *Profile) requestCharge(k opKind, units float64, n int) float64 {
	size := func(kib float64) float64 { return 1 + (p.RU100KB-1)*(math.Max(kib, 1)-1)/99 }
	switch k {
	case opRead:
		return p.ReadRU * size(units)
	case opQuery:
		return p.QueryRU * math.Max(1, units)
	}
	n = max(n, 1)
	return float64(n) * p.WriteRU * size(units/float64(n))
}

// readCharge charges a point read that returned an entity of kib KiB what
// it costs beyond the 1 KB read charged already, and returns the extra.
func (e *Engine) readCharge(t *table, pk string, at time.Time, kib float64) float64 {
	p := &e.cfg.Profile
	extra := p.requestCharge(opRead, kib, 1) - p.requestCharge(opRead, 1, 1)
	if !p.requestUnits() || extra <= 0 {
		return 0
	}
	c := &t.ru
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(p, e, t)
	pp := c.locate(pk)
	pp.roll(at, c.share(p))
	c.chargeTo(pp, extra)
	return extra
}

// Throughput is a table's provisioned throughput as the cosmos profile
// models it.
type Throughput struct {
	// Partitions is the number of physical partitions, and PerPartition
	// each one's share, in RU/s.
	Partitions   int
	PerPartition float64
	// Scaled is, under autoscale, the RU/s the table scaled to in the last
	// whole second: between 10% and 100% of the maximum, following the most
	// active partition.
	Scaled float64
	// Splits is the number of splits done; Splitting of those under way.
	Splits, Splitting int
}

// Throughput returns a table's throughput state under the cosmos profile.
func (e *Engine) Throughput(tableName string) (Throughput, error) {
	p := &e.cfg.Profile
	if !p.requestUnits() {
		return Throughput{}, fmt.Errorf("engine: profile %s provisions no request units", p.Name)
	}
	t, terr := e.table(tableName)
	if terr != nil {
		return Throughput{}, terr
	}
	c := &t.ru
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(p, e, t)
	c.advance(e, t, p, e.clock.Now())
	out := Throughput{Partitions: len(c.parts), PerPartition: c.share(p), Scaled: c.scaled, Splits: c.splits}
	for _, pp := range c.parts {
		if !pp.splitAt.IsZero() {
			out.Splitting++
		}
	}
	return out, nil
}

// unsorted puts a query page's entities in Cosmos DB's order, not the key
// order of Table storage: by a hash of their keys, as a stand-in for an
// order no client may rely on.
func unsorted(ents []tables.Entity) {
	h := func(e *tables.Entity) uint64 { return fnvAdd(fnvAdd(pkHash(e.PartitionKey), "\x00"), e.RowKey) }
	slices.SortFunc(ents, func(a, b tables.Entity) int {
		ha, hb := h(&a), h(&b)
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return 0
	})
}

// tableAPIRowKey refuses a RowKey longer than the profile's MaxRowKeyBytes
// (the Table API's 255 bytes).
func (e *Engine) tableAPIRowKey(rk string) *tables.Error {
	if m := e.cfg.Profile.MaxRowKeyBytes; m > 0 && len(rk) > m {
		return tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The RowKey is %d bytes long; this service takes at most %d.", len(rk), m))
	}
	return nil
}

// chargeRead charges a point read of an entity of kib KiB beyond its first
// KiB, adding it to the caller's timing.
func (cl Client) chargeRead(t *table, pk string, kib float64) {
	at := cl.e.clock.Now()
	if cl.c != nil && !cl.c.Timing.Arrival.IsZero() {
		at = cl.c.Timing.Arrival
	}
	extra := cl.e.readCharge(t, pk, at, kib)
	if cl.c != nil {
		cl.c.Timing.Charge += extra
	}
}

// recordSize is a stored entity's size, as the Table service counts it.
func recordSize(pk string, r *record) int {
	size := 4 + 2*(tables.UTF16Len(pk)+tables.UTF16Len(r.rk))
	for _, p := range r.props {
		vsize, _ := validateValue(p)
		size += 8 + 2*tables.UTF16Len(p.Name) + vsize
	}
	return size
}
