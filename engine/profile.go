package engine

import (
	"fmt"
	"time"
)

// Profile holds the parameters of the performance model. Durations are model
// time. The lane of a range partition serves one request at a time at a cost
// of WriteA + WriteB·units for a write, Get for a point read and
// Get + Scan·scanned for a query; the front-end and commit stages around it run
// in parallel.
type Profile struct {
	Name  string
	Model bool // false: no latency, no throttling

	AccountRate      float64       // entity units per second for the account
	AccountBurst     time.Duration // how much of its rate the account's budget can save up
	PartitionKeyRate float64       // entity units per second for one PartitionKey
	Burst            time.Duration // how much of its rate a key's budget can save up

	WriteA, WriteB time.Duration // lane cost of a write: a + b·units
	Get            time.Duration // lane cost of a point read
	Scan           time.Duration // lane cost per entity a query scans
	ScanLimit      time.Duration // a query page stops after this much scanning

	ThrottleAt  int     // θ: requests queued at a lane at which every request is throttled
	ThrottleExp float64 // k: throttle probability is (queued/θ)^k

	FEWrite, FEWriteUnit time.Duration // front-end stage of a write: fe0 + fe1·units
	FERead               time.Duration
	PostWrite, PostUnit  time.Duration // commit stage of a write: post0 + post1·entities
	PostRead             time.Duration
	CV, LaneCV           float64 // coefficient of variation of the stage and lane draws

	HiccupP              float64 // probability that a request's commit stage stalls
	HiccupMin, HiccupMax time.Duration

	Servers, ServerCores int
	ServerTimeout        time.Duration // the longest a request may take; 500 OperationTimedOut past it
	HoldMax              time.Duration // how long a request waits for an unavailable partition
	SplitPauseMin        time.Duration
	SplitPauseMax        time.Duration
	MoveMin, MoveMax     time.Duration // how long a moved partition is unavailable

	// Request units: the cosmos profile's model (engine/cosmos.go, and
	// docs/cosmos.md for the sources). A table is a container whose
	// throughput is provisioned in request units per second, split evenly
	// over its physical partitions; each operation is charged in RU. Both
	// RU and RUMax zero: the entity-unit budgets above apply instead.

	// RU is the table's provisioned (manual) throughput, in RU/s.
	RU float64
	// RUMax is the autoscale maximum throughput Tmax, in RU/s: the table
	// scales between 10% and 100% of it, at once, as its load needs. It
	// replaces RU when positive.
	RUMax float64
	// PartitionRU is the most one physical partition serves, in RU/s
	// (10,000); the table has at least RU/PartitionRU physical partitions.
	PartitionRU float64
	// PartitionBytes is the most a physical partition stores, in bytes
	// (50 GB), before it splits in two.
	PartitionBytes int64
	// LogicalPartitionBytes is the most one PartitionKey stores, in bytes
	// (20 GB): a write past it gets 403.
	LogicalPartitionBytes int64
	// SplitMin and SplitMax bound how long a physical partition's split
	// takes (4 to 6 hours); it serves its share meanwhile.
	SplitMin, SplitMax time.Duration
	// ReadRU is the charge of a point read of a 1 KB entity, in RU (1).
	ReadRU float64
	// WriteRU is the charge of a write of a 1 KB entity, in RU (5).
	WriteRU float64
	// RU100KB is how many times a 1 KB entity's charge a 100 KB entity
	// costs (10); the charge grows linearly in size between them.
	RU100KB float64
	// QueryRU is a query's charge per entity it reads, in RU; a page costs
	// at least one.
	QueryRU float64
	// MaxRowKeyBytes is the longest RowKey, in UTF-8 bytes (the Table API's
	// 255); 0 leaves only the Table service's key limit.
	MaxRowKeyBytes int
	// MaxBatchBytes is the largest batch, in bytes of its entities (the
	// Table API's 2 MB); 0 is the Table service's 4 MiB.
	MaxBatchBytes int
	// UnsortedQueries returns a query page's entities in no key order, as
	// the Table API does; pages still cover the range once.
	UnsortedQueries bool

	// Client is the client VM (a workloads/vm size) that runs and
	// experiments model against this service unless told another: the
	// 2010 case study's clients were as slow as its service, today's are
	// not. Empty is today's client, so a profile of a service of today
	// need not name it.
	Client string
}

// WA2010 returns the profile calibrated to the 2010 case study: a single
// PartitionKey serves ~1,000 single inserts/s (its lane) and ~2,500 batched
// entities/s (its budget), an unloaded get takes ~30 ms and an insert ~35 ms
// at the server.
//
// The key budget's rate and burst and the front end's cost per batched
// entity were fitted in virtual time against Figures 4, 7, 10 and 15
// together, with the client model of workloads/vm, over several seeds. Under
// a rate cap and the 3 s pause, the throttled shares at 30 and 50 threads of
// Figure 15 move together: a lower rate raises both. A larger burst lowers
// the 20-thread share, which the case study puts at almost none. 2,450/s with
// a 500 ms burst gives ~1.6%, ~10% and ~25% at 20, 30 and 50 threads (11% and
// 22% were published); a cheaper front end shortens batches until an XL
// VM's client saturates by 15 threads (against Figure 10).
func WA2010() Profile {
	return Profile{
		Name: "wa2010", Model: true,
		AccountRate: 20000, AccountBurst: time.Second, PartitionKeyRate: 2450, Burst: 500 * time.Millisecond,
		WriteA: 650 * time.Microsecond, WriteB: 350 * time.Microsecond,
		Get: 500 * time.Microsecond, Scan: 50 * time.Microsecond, ScanLimit: 5 * time.Second,
		ThrottleAt: 1330, ThrottleExp: 3.2,
		FEWrite: 20 * time.Millisecond, FEWriteUnit: 5500 * time.Microsecond, FERead: 20 * time.Millisecond,
		PostWrite: 10 * time.Millisecond, PostUnit: 700 * time.Microsecond, PostRead: 8 * time.Millisecond,
		CV: 0.25, LaneCV: 0.5,
		HiccupP: 0.001, HiccupMin: 100 * time.Millisecond, HiccupMax: time.Second,
		Servers: 16, ServerCores: 4,
		ServerTimeout: 30 * time.Second, HoldMax: 3 * time.Second,
		SplitPauseMin: 200 * time.Millisecond, SplitPauseMax: time.Second,
		MoveMin: 10 * time.Second, MoveMax: 20 * time.Second,
		Client: "xl",
	}
}

// SteadySplit is the number of range partitions a table is pre-split into
// to stand for the steady state the case study measured after its warm-up:
// one per core of every server. A lane serves one request at a time, so
// fewer range partitions than cores would leave cores idle while lanes
// queue, which the load balancer would have split away.
func (p Profile) SteadySplit() int { return max(p.Servers*p.ServerCores, 1) }

// Modern returns a profile of today's service: 2,000 entities/s per
// PartitionKey, 20,000 per account, single-digit-millisecond latency.
func Modern() Profile {
	return Profile{
		Name: "modern", Model: true,
		AccountRate: 20000, AccountBurst: time.Second, PartitionKeyRate: 2000, Burst: time.Second,
		WriteA: 250 * time.Microsecond, WriteB: 250 * time.Microsecond,
		Get: 250 * time.Microsecond, Scan: 20 * time.Microsecond, ScanLimit: 5 * time.Second,
		ThrottleAt: 2660, ThrottleExp: 3.2,
		FEWrite: time.Millisecond, FEWriteUnit: 20 * time.Microsecond, FERead: time.Millisecond,
		PostWrite: 5 * time.Millisecond, PostUnit: 20 * time.Microsecond, PostRead: 2 * time.Millisecond,
		CV: 0.5, LaneCV: 0.5,
		HiccupP: 0.0005, HiccupMin: 20 * time.Millisecond, HiccupMax: 200 * time.Millisecond,
		Servers: 16, ServerCores: 8,
		ServerTimeout: 30 * time.Second, HoldMax: 3 * time.Second,
		SplitPauseMin: 200 * time.Millisecond, SplitPauseMax: time.Second,
		MoveMin: time.Second, MoveMax: 5 * time.Second,
		Client: "modern",
	}
}

// Cosmos returns a profile of Azure Cosmos DB for Table, provisioned
// manually with 100,000 RU/s. Every figure is the documentation's; each
// is cited beside it and in docs/cosmos.md.
//
// 100,000 RU/s is the Table service's targets in Cosmos DB's currency: the
// case study's loads write 1 KB entities, 5 RU each, so the account's
// 20,000 entities/s is 100,000 RU/s, whose 10 physical partitions serve
// 10,000 RU/s each: 2,000 writes/s, the Table service's per-partition
// target.
func Cosmos() Profile {
	return Profile{
		Name: "cosmos", Model: true,
		// "Azure Cosmos DB service quotas": at most 10,000 RU/s per
		// (physical) partition, at most 20 GB per logical partition.
		// "Best practices for scaling provisioned throughput (RU/s)": a
		// physical partition holds at most 50 GB; a scale-up that needs
		// splits takes typically 4-6 hours.
		RU: 100000, PartitionRU: 10000,
		PartitionBytes: 50 << 30, LogicalPartitionBytes: 20 << 30,
		SplitMin: 4 * time.Hour, SplitMax: 6 * time.Hour,
		// "Optimize reads and writes cost in Azure Cosmos DB": a point read
		// of a 1 KB item costs 1 RU and a write 5 RU; of a 100 KB item, 10
		// RU and 50 RU.
		ReadRU: 1, WriteRU: 5, RU100KB: 10, QueryRU: 1,
		// "Frequently asked questions about Azure Cosmos DB for Table",
		// where the API differs from Table storage: row keys up to 255
		// bytes, batches up to 2 MB, query results not sorted by
		// PartitionKey and RowKey.
		MaxRowKeyBytes: 255, MaxBatchBytes: 2 << 20, UnsortedQueries: true,
		// The same FAQ: a 10 ms read and 15 ms write SLA at the 99th
		// percentile. The stages below give about 3 ms reads and 4 ms
		// writes unloaded, with p99s under 10 and 15 ms
		// (TestCosmosLatencyMeetsTheSLA).
		FEWrite: time.Millisecond, FEWriteUnit: 20 * time.Microsecond, FERead: time.Millisecond,
		PostWrite: 2500 * time.Microsecond, PostUnit: 20 * time.Microsecond, PostRead: 1500 * time.Microsecond,
		CV: 0.5, LaneCV: 0.5,
		HiccupP: 0.0005, HiccupMin: 20 * time.Millisecond, HiccupMax: 200 * time.Millisecond,
		// Lanes fast enough that the RU budget, not a lane, limits a key:
		// 10,000 1 KB reads/s of one PartitionKey fit in one.
		WriteA: 100 * time.Microsecond, WriteB: 20 * time.Microsecond,
		Get: 50 * time.Microsecond, Scan: 10 * time.Microsecond, ScanLimit: 5 * time.Second,
		// Cosmos DB refuses with 429 when a partition's RUs are spent, not
		// on a queue: the backlog throttle never fires.
		ThrottleAt: 1 << 30, ThrottleExp: 1,
		Servers: 16, ServerCores: 8,
		ServerTimeout: 30 * time.Second, HoldMax: 3 * time.Second,
		// Range partitions are the engine's own lanes here, not the
		// service's: their splits and moves make nothing unavailable.
	}
}

// RequestUnits reports whether the profile provisions throughput in
// request units (the cosmos profile's model).
func (p Profile) RequestUnits() bool { return p.requestUnits() }

// requestUnits is RequestUnits on the profile in place: every request
// asks, and a value receiver copied the whole profile each time.
func (p *Profile) requestUnits() bool { return p.RU > 0 || p.RUMax > 0 }

// None returns the raw engine's profile: no latency, no throttling, no load
// balancing.
func None() Profile { return Profile{Name: "none", Servers: 16, ServerCores: 4} }

// ProfileNames lists the profiles ProfileByName knows.
func ProfileNames() []string { return []string{"wa2010", "modern", "cosmos", "none"} }

// ProfileByName returns the named profile.
func ProfileByName(name string) (Profile, error) {
	switch name {
	case "wa2010":
		return WA2010(), nil
	case "modern":
		return Modern(), nil
	case "cosmos":
		return Cosmos(), nil
	case "none":
		return None(), nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q: use wa2010, modern, cosmos or none", name)
}

func (p *Profile) validate() error {
	if p.Servers < 0 || p.ServerCores < 0 {
		return fmt.Errorf("engine: profile %q: servers and cores must not be negative", p.Name)
	}
	if !p.Model {
		return nil
	}
	if p.RequestUnits() {
		if err := p.validateRU(); err != nil {
			return fmt.Errorf("engine: profile %q: %w", p.Name, err)
		}
	} else if p.AccountRate <= 0 || p.PartitionKeyRate <= 0 {
		return fmt.Errorf("engine: profile %q: rates must be positive", p.Name)
	}
	if p.ThrottleAt <= 0 || p.ServerTimeout <= 0 {
		return fmt.Errorf("engine: profile %q: throttle threshold and server timeout must be positive", p.Name)
	}
	return nil
}
