package workloads

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tablebench/tablebench/tables"
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
}

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

// EntitiesPerRequest returns how many entities one request carries.
func (s *Spec) EntitiesPerRequest() int {
	if s.Op.Batched() {
		return s.BatchSize
	}
	return 1
}

// Validate checks a spec; its error names the field and how to fix it.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := Ops().Check(s.Op); err != nil {
		errs = append(errs, err)
	}
	if s.BatchSize < 1 || s.BatchSize > 100 { // checked whatever the op, so a mistyped flag is never silently ignored
		bad("batch size %d is out of range: use 1 to 100 entities", s.BatchSize)
	}
	if s.Rate < 0 {
		bad("rate %g is negative: use requests per second above 0, or 0 for closed load", s.Rate)
	}
	if err := PartitionSchemes().Check(s.Partition); err != nil {
		errs = append(errs, err)
	}
	if s.VMs < 1 || s.VMs > 1000 {
		bad("%d VMs is out of range: use 1 to 1000", s.VMs)
	}
	if s.Threads < 1 || s.Threads > 1000 {
		bad("%d threads per VM is out of range: use 1 to 1000", s.Threads)
	}
	if s.VMs*s.Threads > 20000 {
		bad("%d threads in all is too many: keep VMs x threads at most 20000", s.VMs*s.Threads)
	}
	if s.VMSize.Cores < 1 || s.VMSize.SerialFraction < 0 || s.VMSize.SerialFraction > 1 {
		bad("VM size %q is not valid: use small, xl, modern or cores:N[,serial:F]", s.VMSize.Name)
	}
	if s.EntitySize < minEntitySize || s.EntitySize > 1<<20 {
		bad("entity size %d is out of range: use %d to 1048576 bytes", s.EntitySize, minEntitySize)
	} else if s.Op == OpBatch && s.BatchSize*s.EntitySize > tables.MaxBatchBytes {
		bad("a batch of %d entities of %d bytes is %.1f MiB, and a batch may carry at most 4 MiB: use --batch-size %d or smaller entities",
			s.BatchSize, s.EntitySize, float64(s.BatchSize*s.EntitySize)/(1<<20), tables.MaxBatchBytes/s.EntitySize)
	}
	if s.Duration <= 0 {
		bad("duration %v must be positive, as in 60s", s.Duration)
	}
	if s.Warmup < 0 {
		bad("warm-up %v must not be negative", s.Warmup)
	}
	if s.RequestTimeout < 0 {
		bad("request timeout %v must not be negative: use 0 for none, or a duration such as 40s", s.RequestTimeout)
	}
	switch s.Load {
	case LoadClosed:
		if s.Rate > 0 {
			bad("rate %g with closed load: a closed loop sends when the last answer returns, at no rate; use open load for a rate, or leave the rate out", s.Rate)
		}
	case LoadOpen:
		if s.Rate <= 0 {
			bad("open load needs a rate: give --rate in requests per second, above 0")
		}
	default:
		errs = append(errs, LoadModes().Check(s.Load))
	}
	if err := RetryPolicies().Check(s.Retry.Policy); err != nil {
		errs = append(errs, err)
	}
	if s.Retry.MaxRetries < 0 || s.Retry.Pause < 0 || s.Retry.Delay < 0 {
		bad("retry settings must not be negative")
	}
	if s.Op.ReadsPreloaded() && s.Preload < 1 {
		bad("preload %d: gets and queries read entities the thread loaded first; use at least 1", s.Preload)
	}
	if s.JobID == "" || strings.ContainsAny(s.JobID, "/\\#?_ ") || len(s.JobID) > 32 {
		bad("job ID %q is not valid: use 1 to 32 letters and digits", s.JobID)
	}
	if s.Shards < 0 || s.Shards > 1 && (s.Shard < 0 || s.Shard >= s.Shards) {
		bad("shard %d of %d is out of range: shards count from 0 to %d", s.Shard, s.Shards, max(s.Shards-1, 0))
	}
	if s.VMs >= 1 && s.Shards > s.VMs {
		bad("%d shards for %d VMs: a shard runs whole VMs, so use at most %d shards", s.Shards, s.VMs, s.VMs)
	}
	if s.Shards > 1 && s.JobID == DefaultSpec().JobID {
		bad("a sharded run needs a job ID of its own, the same in every shard: give --job-id")
	}
	if s.Table != "" && !tables.ValidTableName(s.Table) {
		bad("table %q is not a valid table name: use 3 to 63 letters and digits, starting with a letter", s.Table)
	}
	return errors.Join(errs...)
}

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
