package workloads

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads/keyspace"
	"github.com/tablebench/tablebench/workloads/vm"
)

// Retry is a retry policy.
type Retry struct {
	Policy     RetryPolicy   `json:"policy"`
	Pause      time.Duration `json:"pause"`       // none: how long a thread waits after an error
	MaxRetries int           `json:"max_retries"` // fixed, exponential, sdk
	Delay      time.Duration `json:"delay"`       // fixed: the delay; exponential and sdk: the base delay
	MinBackoff time.Duration `json:"min_backoff"` // exponential
	MaxBackoff time.Duration `json:"max_backoff"` // exponential and sdk
}

// DefaultRetry returns the policy named by p with its defaults (see
// RetryPolicies): for none the published 3 s pause; for exponential the
// partitioning guide's 30 s base, 3 s minimum and 90 s maximum; for sdk the
// Azure SDK's 3 retries from 800 ms up to 60 s. An empty name is none.
func DefaultRetry(p RetryPolicy) (Retry, error) {
	if p == "" {
		p = RetryNone
	}
	for _, r := range retryTable {
		if r.Name == p {
			d := r.defaults
			d.Policy = p
			return d, nil
		}
	}
	return Retry{}, RetryPolicies().Check(p)
}

// Spec is what a run does. Start from DefaultSpec.
type Spec struct {
	Op         OpKind          `json:"op"`
	BatchSize  int             `json:"batch_size"`
	Partition  PartitionScheme `json:"partition"`
	VMs        int             `json:"vms"`
	Threads    int             `json:"threads"` // per VM
	VMSize     vm.Size         `json:"vm_size"`
	EntitySize int             `json:"entity_size"` // bytes by the service's size formula
	Duration   time.Duration   `json:"duration"`    // measured, after the warm-up
	Warmup     time.Duration   `json:"warmup"`
	Seed       uint64          `json:"seed"`
	Retry      Retry           `json:"retry"`
	Load       LoadMode        `json:"load"`
	Rate       float64         `json:"rate,omitempty"` // open loop: requests per second, all threads together
	Preload    int             `json:"preload"`        // get and query: entities each thread loads first
	JobID      string          `json:"job_id"`
	// Table is a table the run shares with others: created if absent, never
	// deleted. Empty: a fresh table named after the job, deleted at the end
	// unless KeepTable.
	Table     string `json:"table,omitempty"`
	KeepTable bool   `json:"keep_table,omitempty"`
	// TxnID gives every insert a transaction-id property, so an insert
	// retried after a client timeout that conflicts can be told from a real
	// conflict: the harness reads the entity, and its own earlier write
	// counts as the success it was.
	TxnID bool `json:"txn_id,omitempty"`
	// Shard and Shards make the run one of Shards processes that together
	// run the spec: this one runs VMs Shard+1, Shard+1+Shards, and so on.
	// Shards meet in the target table before they start (see Rendezvous).
	// They are left out of the stored spec, which is the whole run's.
	Shard  int `json:"-"`
	Shards int `json:"-"`
	// StartAt, for a sharded run, is when every shard starts its warm-up;
	// zero: the shards agree on a start through the table.
	StartAt time.Time `json:"-"`
	// Rendezvous bounds how long a shard waits for the others (default 5
	// minutes).
	Rendezvous time.Duration `json:"-"`
	// RequestTimeout is how long the client waits for one response, in the
	// target's time, before it records a client timeout; it bounds table
	// setup and cleanup too. 0 waits as long as the service takes (the
	// service itself ends a request after 30 s).
	RequestTimeout time.Duration `json:"request_timeout,omitempty"`

	// The fields below describe a workload of the user's own (see
	// Workload); a spec that leaves them out runs Op alone, the case
	// study's way, and its record is written as before they existed.

	// Workload names the workload the spec came from, if any.
	Workload string `json:"workload,omitempty"`
	// Mix is the operations a thread draws from, by weight; empty means
	// Op alone. A mix of one operation is that operation alone.
	Mix []MixOp `json:"mix,omitempty"`
	// Keys is the key space of the fixed partition scheme.
	Keys KeySpace `json:"keys,omitzero"`
	// Rows is how an operation picks among the rows that exist in its
	// partition; zero walks them in order, as the case study's gets do.
	Rows Pick `json:"rows,omitzero"`
	// EntityMax, when above EntitySize, makes each written entity's size
	// uniform in [EntitySize, EntityMax].
	EntityMax int `json:"entity_max,omitempty"`
	// EntityProps and EntityTypes shape the written entities' properties:
	// EntityProps of them (P01, P02, ...), of the EDM types EntityTypes
	// names in turn; zero and empty: one Payload string, as the case study
	// wrote.
	EntityProps int      `json:"entity_properties,omitempty"`
	EntityTypes []string `json:"entity_types,omitempty"`
	// Stages ramp an open load's rate (see Stage); Rate is where it starts.
	Stages []Stage `json:"stages,omitempty"`
	// Overload is what open load does with a request due while every
	// thread is busy; empty is OverloadDrop.
	Overload OverloadMode `json:"overload,omitempty"`
}

// MixOp is an operation of a mix and its weight: its share of requests is
// its weight over the sum of them all.
type MixOp struct {
	Op     OpKind  `json:"op"`
	Weight float64 `json:"weight"`
}

// Pick is how an operation picks among N keys or rows: a distribution
// and its parameters.
type Pick struct {
	Distribution DistributionName `json:"distribution,omitempty"`
	Theta        float64          `json:"theta,omitempty"`    // zipfian and latest: the skew
	HotData      float64          `json:"hot_data,omitempty"` // hotspot: the share of keys that are hot
	HotOps       float64          `json:"hot_ops,omitempty"`  // hotspot: the share of operations they take
}

// KeySpace is the fixed scheme's PartitionKeys: Count of them, picked by
// Pick, spelt by Names, each spread over Buckets partitions.
type KeySpace struct {
	Count    int         `json:"count"`
	Pick     Pick        `json:"pick"`
	Names    NameStyle   `json:"names"`
	Buckets  int         `json:"buckets"`
	BucketAt BucketPlace `json:"bucket_at"`
}

// Stage is a part of an open load: over For, the rate goes linearly from
// the one before (Spec.Rate, for the first stage) to Rate, as k6's
// ramping-arrival-rate executor does; stages start with the warm-up, and
// after the last the rate holds.
type Stage struct {
	For  time.Duration `json:"for"`
	Rate float64       `json:"rate"`
}

// MarshalJSON writes For as a string such as "2m0s".
func (st Stage) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		For  string  `json:"for"`
		Rate float64 `json:"rate"`
	}{st.For.String(), st.Rate})
}

// UnmarshalJSON reads For written as a string such as "2m".
func (st *Stage) UnmarshalJSON(b []byte) error {
	var v struct {
		For  string  `json:"for"`
		Rate float64 `json:"rate"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d, err := time.ParseDuration(v.For)
	st.For, st.Rate = d, v.Rate
	return err
}

// Ops returns the spec's operations with their weights: its Mix, or Op
// alone.
func (s *Spec) Ops() []MixOp {
	if len(s.Mix) > 0 {
		return s.Mix
	}
	return []MixOp{{Op: s.Op, Weight: 1}}
}

// IsWorkload reports whether the spec is a workload's (see Workload): a
// named one, a mix, or a fixed key space. Its record holds each
// operation's numbers and the workload's fields; a spec of one operation
// is recorded as the case study's runs always were.
func (s *Spec) IsWorkload() bool {
	return s.Workload != "" || len(s.Mix) > 0 || s.Partition == PartitionFixed
}

// has reports whether the spec issues an operation that satisfies f.
func (s *Spec) has(f func(OpKind) bool) bool {
	for _, m := range s.Ops() {
		if m.Weight > 0 && f(m.Op) {
			return true
		}
	}
	return false
}

// Reads reports whether the spec picks among entities that exist, which
// it loads before it starts.
func (s *Spec) Reads() bool { return s.has(OpKind.ReadsPreloaded) }

// DefaultRequestTimeout is the client's patience: past the service's own
// 30 s limit, so every answer the service gives still arrives.
const DefaultRequestTimeout = 40 * time.Second

// DefaultSpec returns the case study's method: single inserts from one XL
// VM of one thread into GUID partitions, 1,024-byte entities, 60 s measured
// after 10 s of warm-up, no retries with a 3 s pause after errors, closed loop.
func DefaultSpec() Spec {
	r, _ := DefaultRetry(RetryNone)
	return Spec{
		Op: OpInsert, BatchSize: 100, Partition: PartitionGUID,
		VMs: 1, Threads: 1, VMSize: vm.XL, EntitySize: 1024,
		Duration: 60 * time.Second, Warmup: 10 * time.Second, Seed: 1,
		Retry: r, Load: LoadClosed, Preload: 200, JobID: "tb", RequestTimeout: DefaultRequestTimeout,
	}
}

// EntitiesPerRequest returns how many entities one request of op carries
// (at most, for a page).
func (s *Spec) EntitiesPerRequest(op OpKind) int {
	if op.Batched() {
		return s.BatchSize
	}
	return 1
}

// FieldError is a spec's error about one of its fields, named as the
// spec's JSON names it ("threads", "keys.pick.theta"), so that a workload
// file can say on which of its lines the mistake is.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldErrors returns the field errors err holds, in order.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// Validate checks a spec; each of its errors is a *FieldError that names
// the field and says how to fix it.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{field, fmt.Errorf(format, args...)})
	}
	vocab := func(field string, err error) {
		if err != nil {
			errs = append(errs, &FieldError{field, err})
		}
	}
	if len(s.Mix) == 0 {
		vocab("op", Ops().Check(s.Op))
	}
	s.validateMix(bad, vocab)
	if s.BatchSize < 1 || s.BatchSize > 100 { // checked whatever the op, so a mistyped flag is never silently ignored
		bad("batch_size", "batch size %d is out of range: use 1 to 100 entities", s.BatchSize)
	}
	checkRate(bad, "rate", "rate", s.Rate)
	vocab("partition", PartitionSchemes().Check(s.Partition))
	s.validateKeys(bad, vocab)
	if s.VMs < 1 || s.VMs > MaxVMs {
		bad("vms", "%d VMs is out of range: use 1 to %d", s.VMs, MaxVMs)
	}
	if s.Threads < 1 || s.Threads > MaxThreadsPerVM {
		bad("threads", "%d threads per VM is out of range: use 1 to %d", s.Threads, MaxThreadsPerVM)
	}
	if s.VMs*s.Threads > MaxThreads {
		bad("threads", "%d threads in all is too many: keep VMs x threads at most %d", s.VMs*s.Threads, MaxThreads)
	}
	if s.VMSize.Cores < 1 || s.VMSize.SerialFraction < 0 || s.VMSize.SerialFraction > 1 {
		bad("vm_size", "VM size %q is not valid: use small, xl, modern or cores:N[,serial:F]", s.VMSize.Name)
	}
	largest := max(s.EntitySize, s.EntityMax)
	switch {
	case s.EntitySize < minEntitySize || s.EntitySize > 1<<20:
		bad("entity_size", "entity size %d is out of range: use %d to 1048576 bytes", s.EntitySize, minEntitySize)
	case s.EntityMax != 0 && (s.EntityMax <= s.EntitySize || s.EntityMax > 1<<20):
		bad("entity_max", "entity size range %d to %d is not valid: give a largest size above the smallest, at most 1048576 bytes", s.EntitySize, s.EntityMax)
	case s.has(func(o OpKind) bool { return o == OpBatch }) && s.BatchSize*largest > tables.MaxBatchBytes:
		bad("batch_size", "a batch of %d entities of %d bytes is %.1f MiB, and a batch may carry at most 4 MiB: use --batch-size %d or smaller entities",
			s.BatchSize, largest, float64(s.BatchSize*largest)/(1<<20), tables.MaxBatchBytes/largest)
	}
	s.validateEntity(bad)
	if s.Duration <= 0 {
		bad("duration", "duration %v must be positive, as in 60s", s.Duration)
	}
	if s.Warmup < 0 {
		bad("warmup", "warm-up %v must not be negative", s.Warmup)
	}
	if s.RequestTimeout < 0 {
		bad("request_timeout", "request timeout %v must not be negative: use 0 for none, or a duration such as 40s", s.RequestTimeout)
	}
	switch s.Load {
	case LoadClosed:
		if s.Rate > 0 {
			bad("rate", "rate %g with closed load: a closed loop sends when the last answer returns, at no rate; use open load for a rate, or leave the rate out", s.Rate)
		}
		if len(s.Stages) > 0 {
			bad("stages", "stages ramp an open load's rate: use open load with them, or leave them out")
		}
	case LoadOpen:
		if s.Rate <= 0 && len(s.Stages) == 0 {
			bad("rate", "open load needs a rate: give --rate in requests per second, above 0")
		}
	default:
		vocab("load", LoadModes().Check(s.Load))
	}
	for i, st := range s.Stages {
		field := fmt.Sprintf("stages.%d", i)
		if st.For <= 0 {
			bad(field+".for", "stage %d has no duration: give it one, as in {for: 2m, rate: 500}", i+1)
		}
		checkRate(bad, field+".rate", fmt.Sprintf("stage %d's rate", i+1), st.Rate)
	}
	if s.Overload != "" {
		vocab("overload", OverloadModes().Check(s.Overload))
	}
	vocab("retry", RetryPolicies().Check(s.Retry.Policy))
	if s.Retry.MaxRetries < 0 || s.Retry.Pause < 0 || s.Retry.Delay < 0 {
		bad("retry", "retry settings must not be negative")
	}
	if s.Reads() && s.Preload < 1 {
		bad("preload", "preload %d: gets and queries read entities the thread loaded first; use at least 1", s.Preload)
	}
	if s.JobID == "" || strings.ContainsAny(s.JobID, "/\\#?_ ") || len(s.JobID) > 32 {
		bad("job_id", "job ID %q is not valid: use 1 to 32 letters and digits", s.JobID)
	}
	if s.Shards < 0 || s.Shards > 1 && (s.Shard < 0 || s.Shard >= s.Shards) {
		bad("shards", "shard %d of %d is out of range: shards count from 0 to %d", s.Shard, s.Shards, max(s.Shards-1, 0))
	}
	if s.VMs >= 1 && s.Shards > s.VMs {
		bad("shards", "%d shards for %d VMs: a shard runs whole VMs, so use at most %d shards", s.Shards, s.VMs, s.VMs)
	}
	if s.Shards > 1 && s.JobID == DefaultSpec().JobID {
		bad("job_id", "a sharded run needs a job ID of its own, the same in every shard: give --job-id")
	}
	if s.Table != "" && !tables.ValidTableName(s.Table) {
		bad("table", "table %q is not a valid table name: use 3 to 63 letters and digits, starting with a letter", s.Table)
	}
	return errors.Join(errs...)
}

// MaxRate is the highest open-load rate a spec takes, in requests per
// second: fifty times an account's scalability target, and low enough that
// an open load's schedule, which counts every request due even when it is
// dropped, stays a matter of seconds over a long run.
const MaxRate = 1e6

// checkRate refuses a rate that is not a number, is negative, or is above
// MaxRate, for the spec's rate and every stage's alike: a NaN or a rate of
// terahertz would leave the open load's schedule counting forever.
func checkRate(bad func(field, format string, args ...any), field, what string, r float64) {
	switch {
	case math.IsNaN(r) || r < 0:
		bad(field, "%s %g is not valid: use requests per second, 0 or more (0 for closed load)", what, r)
	case r > MaxRate:
		bad(field, "%s %g is too high: use at most %g requests per second", what, r, float64(MaxRate))
	}
}

// validateMix checks the mix's operations and weights.
func (s *Spec) validateMix(bad func(field, format string, args ...any), vocab func(string, error)) {
	sum := 0.0
	for _, m := range s.Mix {
		field := "mix." + string(m.Op)
		vocab(field, Ops().Check(m.Op))
		if m.Weight < 0 || math.IsNaN(m.Weight) || math.IsInf(m.Weight, 0) {
			bad(field, "mix: %s has weight %g: weights are 0 or more", m.Op, m.Weight)
			continue
		}
		sum += m.Weight
	}
	if len(s.Mix) > 0 && sum <= 0 {
		bad("mix", "mix: the weights sum to 0: give at least one operation a weight above 0, as in {get: 95, update: 5}")
	}
}

// validateKeys checks the fixed scheme's key space and the row pick.
func (s *Spec) validateKeys(bad func(field, format string, args ...any), vocab func(string, error)) {
	k := &s.Keys
	if s.Partition != PartitionFixed {
		if k.Count != 0 || k.Pick != (Pick{}) || k.Names != "" {
			bad("keys", "partition scheme %s has no key space to pick from: count, distribution and names go with the fixed scheme", s.Partition)
		}
		if k.Buckets > 1 { // the scheme's key, spread over buckets in turn
			if k.Buckets > keyspace.MaxBuckets {
				bad("keys.buckets", "buckets %d is out of range: use 1 to %d partitions per key", k.Buckets, keyspace.MaxBuckets)
			}
			if k.BucketAt != "" {
				vocab("keys.bucket_at", BucketPlaces().Check(k.BucketAt))
			}
		}
	} else if *k == (KeySpace{}) {
		// The fixed scheme named by --partition alone: no flag sets a key
		// space, so each of its fields would be refused on its own.
		bad("keys", "the fixed scheme needs a key space, which only a workload file gives: use --workload FILE with partitions: {scheme: fixed, count: 1000, distribution: uniform} (docs/workloads.md)")
	} else {
		if k.Count < 1 || k.Count > MaxKeys {
			bad("keys.count", "the fixed scheme needs a count of keys from 1 to %d, not %d", MaxKeys, k.Count)
		}
		validatePick("keys.pick", k.Pick, bad, vocab)
		vocab("keys.names", NameStyles().Check(k.Names))
		vocab("keys.bucket_at", BucketPlaces().Check(k.BucketAt))
		if k.Buckets < 1 || k.Buckets > keyspace.MaxBuckets {
			bad("keys.buckets", "buckets %d is out of range: use 1 to %d partitions per key", k.Buckets, keyspace.MaxBuckets)
		} else if k.Buckets > 1 && s.has(func(o OpKind) bool { return o == OpBatch }) {
			bad("keys.buckets", "batch with %d buckets: a batch's entities share one partition, and buckets spread a key's rows over %d; use buckets: 1, or leave batch out of the mix", k.Buckets, k.Buckets)
		}
	}
	if s.Rows != (Pick{}) {
		validatePick("rows", s.Rows, bad, vocab)
	}
}

// validatePick checks a distribution and its parameters.
func validatePick(field string, p Pick, bad func(field, format string, args ...any), vocab func(string, error)) {
	vocab(field+".distribution", Distributions().Check(p.Distribution))
	switch p.Distribution {
	case DistZipfian, DistLatest:
		if !(p.Theta > 0 && p.Theta <= MaxTheta) {
			bad(field+".theta", "theta %g is out of range: zipfian skew is above 0 and at most %g (0.99 is YCSB's)", p.Theta, float64(MaxTheta))
		}
	case DistHotspot:
		if !(p.HotData > 0 && p.HotData < 1) {
			bad(field+".hot_data", "hot_data %g is out of range: the share of keys that are hot is between 0 and 1, as in 0.2", p.HotData)
		}
		if !(p.HotOps > 0 && p.HotOps < 1) {
			bad(field+".hot_ops", "hot_ops %g is out of range: the share of operations the hot keys take is between 0 and 1, as in 0.8", p.HotOps)
		}
	}
	if p.Distribution != DistZipfian && p.Distribution != DistLatest && p.Theta != 0 {
		bad(field+".theta", "theta goes with the zipfian and latest distributions, not %s: leave it out", p.Distribution)
	}
	if p.Distribution != DistHotspot && (p.HotData != 0 || p.HotOps != 0) {
		bad(field+".hot_data", "hot_data and hot_ops go with the hotspot distribution, not %s: leave them out", p.Distribution)
	}
}

// A run's client: at most MaxVMs VMs of at most MaxThreadsPerVM threads,
// and MaxThreads threads in all.
const (
	MaxVMs          = 1000
	MaxThreadsPerVM = 1000
	MaxThreads      = 20000
)

// MaxTheta is the largest zipfian skew a spec takes: past it the top key
// takes nearly every operation, so a larger one is a typo.
const MaxTheta = keyspace.MaxTheta

// MarshalJSON writes durations as strings such as "60s".
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	return json.Marshal(struct {
		plain
		Duration       string `json:"duration"`
		Warmup         string `json:"warmup"`
		RequestTimeout string `json:"request_timeout,omitempty"`
		Retry          any    `json:"retry"`
	}{plain(s), s.Duration.String(), s.Warmup.String(), durStr(s.RequestTimeout), struct {
		Policy     RetryPolicy `json:"policy"`
		Pause      string      `json:"pause,omitempty"`
		MaxRetries int         `json:"max_retries,omitempty"`
		Delay      string      `json:"delay,omitempty"`
		MinBackoff string      `json:"min_backoff,omitempty"`
		MaxBackoff string      `json:"max_backoff,omitempty"`
	}{s.Retry.Policy, durStr(s.Retry.Pause), s.Retry.MaxRetries, durStr(s.Retry.Delay), durStr(s.Retry.MinBackoff), durStr(s.Retry.MaxBackoff)}})
}

func durStr(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
