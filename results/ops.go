package results

import (
	"maps"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tablebench/tablebench/tables"
)

// OpStats is one operation's part of a run that mixes operations: its
// counts by outcome, its rates over the measured window, and its latency
// from its own histograms ("op/outcome").
type OpStats struct {
	Counts
	// Missed counts the requests answered 404 ResourceNotFound: reads,
	// updates and deletes of rows the run wrote or loaded, which another
	// thread deleted or had not yet written.
	Missed           int64       `json:"missed,omitempty"`
	EntitiesPerSec   float64     `json:"entities_per_sec"`
	RequestsPerSec   float64     `json:"requests_per_sec"`
	LatencyMs        Percentiles `json:"latency_ms"`
	SuccessLatencyMs Percentiles `json:"success_latency_ms"`
}

// OutcomeMissed is the outcome of a read, update or delete of a row that
// does not exist.
const OutcomeMissed = tables.CodeResourceNotFound

// OutcomeConflict is the outcome of an update whose If-Match no longer
// matched: another writer changed the row between its read and its write.
const OutcomeConflict = tables.CodeUpdateConditionNotSatisfied

// summarizeOps fills the run's Ops from each operation's counts and
// histograms; rates are set apart, as the run's are (opRates).
func summarizeOps(run *Run, ops map[string]Counts, hists map[string]*hdr.Histogram) {
	if ops == nil {
		run.Ops = nil
		return
	}
	run.Ops = make(map[string]OpStats, len(ops))
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		var all, ok histSum
		for name, h := range hists {
			o, outcome, _ := strings.Cut(name, "/")
			if o != op || outcome == perEntityOutcome {
				continue
			}
			all.add(h)
			if outcome == OutcomeOK {
				ok.add(h)
			}
		}
		c := ops[op]
		run.Ops[op] = OpStats{Counts: c, Missed: c.Errors[OutcomeMissed], LatencyMs: PercentilesOf(all.hist()), SuccessLatencyMs: PercentilesOf(ok.hist())}
	}
}

// opRates sets each operation's rates over the run's measured window,
// scaled as the run's own: a merged run measures its rates over the
// seconds every shard measured, and each operation takes its share.
func (r *Run) opRates() {
	for op, s := range r.Ops {
		s.EntitiesPerSec, s.RequestsPerSec = 0, 0
		if r.Totals.Entities > 0 {
			s.EntitiesPerSec = r.EntitiesPerSec * float64(s.Entities) / float64(r.Totals.Entities)
		}
		if r.Totals.Requests > 0 {
			s.RequestsPerSec = r.RequestsPerSec * float64(s.Requests) / float64(r.Totals.Requests)
		}
		r.Ops[op] = s
	}
}

// OpNames returns the run's operations, in order of their requests, most
// first.
func (r *Run) OpNames() []string {
	names := slices.Sorted(maps.Keys(r.Ops))
	slices.SortStableFunc(names, func(a, b string) int {
		return int(min(max(r.Ops[b].Requests-r.Ops[a].Requests, -1), 1))
	})
	return names
}

// OpenLoad is what became of an open load's schedule over the measured
// window: how many requests fell due, how many were dropped (never sent),
// and the rates intended and achieved.
type OpenLoad struct {
	Overload       string  `json:"overload"` // drop or queue
	Due            int64   `json:"due"`
	Dropped        int64   `json:"dropped"`
	IntendedPerSec float64 `json:"intended_per_sec"`
	AchievedPerSec float64 `json:"achieved_per_sec"` // the requests due that were sent, per second
}

// SetRates sets the rates of the requests due and sent over sec seconds.
func (o *OpenLoad) SetRates(sec float64) {
	o.IntendedPerSec, o.AchievedPerSec = 0, 0
	if sec > 0 {
		o.IntendedPerSec = float64(o.Due) / sec
		o.AchievedPerSec = float64(o.Due-o.Dropped) / sec
	}
}
