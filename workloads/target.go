package workloads

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
)

// Target is a table endpoint a run drives: the in-tree engine or a Table
// service.
type Target interface {
	// Clock is the time the run is measured in: model time for the
	// engine, wall time for a service.
	Clock() clock.Clock
	CreateTable(ctx context.Context, name string) error
	DeleteTable(ctx context.Context, name string) error
	// NewSession returns one worker thread's connection to the target.
	NewSession(seed uint64) Session
}

// Session is one worker thread's connection to a target. It is used by one
// goroutine at a time.
type Session interface {
	// Do sends op and returns when its response arrived, in the target's
	// clock. A failed request returns a *tables.Error carrying the
	// service's status and code, or another error for transport failures.
	Do(ctx context.Context, op *Op) (done time.Time, err error)
}

// ClientModeler is implemented by targets that run in the harness's own
// process and cost no client CPU of their own (the in-tree engine): the
// harness then charges each request to the VM model of workloads/vm.
type ClientModeler interface {
	ModelsClient() bool
}

// Loader is implemented by targets that can store a run's preloaded
// entities directly, without modelled time; the load is not measured.
type Loader interface {
	Load(ctx context.Context, table string, entities []tables.Entity) error
}

// EventSource is implemented by targets that report what they did during a
// run, such as partition splits and moves.
type EventSource interface {
	Events(since time.Time) []results.Event
}

// RangeReporter is implemented by targets that say how they divided a
// table's PartitionKey space into range partitions, and which server holds
// each: the engine does, where a Table service keeps it to itself. The
// coordinator asks at the end of a run, for the record.
type RangeReporter interface {
	RangePartitions(table string) []results.RangePartition
}

// Describer is implemented by targets that describe themselves for the run
// record (target kind, endpoint without secrets, profile).
type Describer interface {
	Describe() results.Environment
}

// Op is one request. A worker reuses one Op for all its requests.
type Op struct {
	// What every request of a simulated thread reads comes first, within
	// a few cache lines: a simulator steps thousands of threads in turn
	// (see worker.Warm).
	Kind   OpKind
	Table  string
	Entity tables.Entity // insert, upsert and update
	// Ready is when the client's own work on the request is done and it
	// leaves the client; zero means now. Set by the harness's client model.
	Ready time.Time
	// Charge is the request units the service charged, set by Do: Cosmos
	// DB's x-ms-request-charge; 0 when the service does not say.
	Charge float64
	// ClientTimeout, when set, is how long the client waits for the
	// response, in the target's time: past it Do returns a client timeout
	// at that moment, while the service may still do the work. Targets on
	// a virtual clock honour it; on wall time a context deadline does.
	ClientTimeout time.Duration
	PartitionKey  string // get and delete
	RowKey        string // get and delete
	// Merge makes an upsert insert-or-merge; without it, insert-or-replace.
	Merge bool
	Batch []tables.BatchOp // batch
	Query tables.Query     // query, range and scan
	// IfMatch is the version an update or a delete requires: an ETag a
	// get returned, or "*" for any.
	IfMatch string
	// ETag is set by a get that succeeded: the entity's version.
	ETag string
	// Returned is the number of entities a query page returned, and Next
	// its continuation; set by Do.
	Returned int
	Next     *tables.Continuation
	// Read, when set, receives the entity a get read.
	Read *tables.Entity
}

// Outcome classifies a request's error as the recorder counts it: OK,
// throttled (503 ServerBusy, or Cosmos DB's 429 RequestRateTooLarge),
// timed out (500 OperationTimedOut), the
// service's error code, or results.OutcomeTransport for a failure with no
// response.
func Outcome(err error) string {
	if err == nil {
		return results.OutcomeOK
	}
	if e, ok := tables.AsError(err); ok {
		switch e.Code {
		case tables.CodeServerBusy:
			return results.OutcomeThrottled
		case tables.CodeOperationTimedOut:
			return results.OutcomeTimedOut
		case "":
			return httpStatusOutcome(e.Status)
		}
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return results.OutcomeClientTimeout
	}
	return results.OutcomeTransport
}

// retryAfter is how long a throttling answer asked the client to wait;
// zero when it did not say.
func retryAfter(err error) time.Duration {
	if e, ok := tables.AsError(err); ok {
		return e.RetryAfter
	}
	return 0
}

func httpStatusOutcome(status int) string {
	switch status {
	case 503:
		return results.OutcomeThrottled
	case 429:
		return results.OutcomeRateLimited
	case 0:
		return results.OutcomeTransport
	}
	return "HTTP" + strconv.Itoa(status)
}

// retriable reports whether a retry policy retries an outcome: throttling,
// timeouts, and the transient statuses the Azure SDK retries.
func retriable(err error) bool {
	if e, ok := tables.AsError(err); ok {
		switch e.Status {
		case 408, 429, 500, 502, 503, 504:
			return true
		}
		return false
	}
	return !errors.Is(err, context.Canceled)
}
