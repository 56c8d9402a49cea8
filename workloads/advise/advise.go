package advise

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// Config is how advise runs its candidates.
type Config struct {
	// Warmup and Duration are each run's, in model time; a workload that
	// gives its own keeps them.
	Warmup, Duration time.Duration
	// Parallel is how many runs go at once: a virtual run keeps a core busy.
	Parallel int
	Seed     uint64
	// Alpha is the significance level below which a difference between
	// two candidates' per-second samples is beyond noise.
	Alpha float64
	// Multiples are the loads, as multiples of the target, at which tied
	// candidates are run again to find where they begin to differ.
	Multiples []float64
	// Patience is how long a simulated client thread may wait for its
	// answer before the open load's arrivals find every thread busy: the
	// client has target × Patience threads.
	Patience time.Duration
	// Profile returns the service model of a profile's name.
	Profile func(name string) (engine.Profile, error)
	// NewTarget returns a fresh target of the named profile in virtual
	// time, and what releases it.
	NewTarget func(profile string, seed uint64) (workloads.Target, func(), error)
	// Started, if set, is told of each run as it starts.
	Started func(id string, c *workloads.Coordinator)
}

// DefaultConfig returns advise's defaults: 5 s of warm-up and 30 s
// measured (long enough for a lane's backlog to build and throttle, and
// for the accelerated balancer, which decides in 15-30 s, to act), two
// runs at once, ties run again at 2 and 3 times the target.
func DefaultConfig() Config {
	return Config{Warmup: 5 * time.Second, Duration: 30 * time.Second, Parallel: 2, Seed: 1, Alpha: results.DefaultAlpha,
		Multiples: []float64{2, 3}, Patience: 500 * time.Millisecond}
}

// Limits of the simulated client.
const (
	minThreads  = 8
	maxThreads  = 20_000 // the spec's
	maxPerVM    = 1000
	clientShare = 0.4 // of a modelled VM's capacity, so that it never saturates
	// defaultRows is the rows each thread loads for reads when the
	// workload does not say, under schemes whose rows are a thread's: a
	// run at a high rate has thousands of threads.
	defaultRows = 20
)

// escalationMin is what a run at a higher load measures, at most: enough
// seconds for the noise test to tell candidates apart.
const escalationMin = 10 * time.Second

// Plan is one run advise makes: a candidate under a profile at a rate.
type Plan struct {
	ID        string
	Candidate string
	Profile   string
	Rate      float64
	Spec      workloads.Spec
}

// spec returns the spec that runs candidate c under profile p at rate:
// open load at the rate with enough threads and VMs that the client
// never limits.
func (cfg *Config) spec(c Candidate, p engine.Profile, rate float64) (workloads.Spec, error) {
	base := workloads.DefaultSpec()
	base.Seed = cfg.Seed
	base.Warmup, base.Duration = cfg.Warmup, cfg.Duration
	s, err := c.Workload.Spec(base)
	if err != nil {
		return s, fmt.Errorf("candidate %s: %w", c.Name, err)
	}
	s.Load, s.Rate, s.Stages = workloads.LoadOpen, rate, nil
	if c.Workload.Rows == nil || c.Workload.Rows.Count == 0 {
		if s.Partition != workloads.PartitionFixed {
			s.Preload = defaultRows
		}
	}
	size := enginetarget.ClientSize(p)
	s.VMSize = size
	threads := min(max(int(math.Ceil(rate*cfg.Patience.Seconds())), minThreads), maxThreads)
	// A VM's capacity: its cores in parallel, its serial section alone.
	cost := size.ClientCost().Write(s.EntitiesPerRequest(s.Op)).Seconds()
	capacity := float64(size.Cores) / cost
	if size.SerialFraction > 0 {
		capacity = min(capacity, 1/(size.SerialFraction*cost))
	}
	vms := max(int(math.Ceil(rate/(clientShare*capacity))), (threads+maxPerVM-1)/maxPerVM, 1)
	s.VMs = min(vms, 1000)
	s.Threads = max(threads/s.VMs, 1)
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("candidate %s: %w", c.Name, c.Workload.Located(err))
	}
	return s, nil
}

// Row is one candidate's result under one profile: its rank and what it
// was ranked on.
type Row struct {
	Name    string `json:"name"`
	Profile string `json:"profile"`
	Rank    int    `json:"rank"`
	// Tie marks a candidate whose rank another shares: no difference
	// between them stands out from the noise of their per-second samples.
	Tie bool `json:"tie,omitempty"`
	// Carries reports whether the design carried the target: at least
	// CarryShare of the requests the load offered succeeded.
	Carries bool `json:"carries"`
	// TargetRate is the requests/s offered; SuccessPerSec those that
	// succeeded.
	TargetRate     float64 `json:"target_rate"`
	SuccessPerSec  float64 `json:"success_per_sec"`
	EntitiesPerSec float64 `json:"entities_per_sec"`
	ThrottledPct   float64 `json:"throttled_pct"`
	// NotSentPct is the share of the offered requests that found every
	// client thread waiting (Patience) and were never sent.
	NotSentPct float64 `json:"not_sent_pct"`
	// LatencyMs is each operation's latency of successful requests.
	LatencyMs map[string]results.Percentiles `json:"latency_ms"`
	Hottest   Hot                            `json:"hottest_partition"`
	// Billable is the billable transactions, RequestUnits the request
	// units charged (under a profile that charges them), over the
	// measured window.
	Billable     int64   `json:"billable_transactions"`
	RequestUnits float64 `json:"request_units,omitempty"`
	GivesUp      string  `json:"gives_up"`
	Why          string  `json:"why"`
	// ClientLimited says why the simulated client, not the design, may
	// have limited the run; empty when it did not.
	ClientLimited string `json:"client_limited,omitempty"`
	// Run is the ID of the run's record.
	Run string `json:"run"`
	// Thresholds are the bars the command checked on the candidate.
	Thresholds []results.ThresholdResult `json:"thresholds,omitempty"`

	run *results.Run
}

// Hot is the partition where a candidate's load was heaviest against its
// limit: a PartitionKey (its entities/s against the per-key target), a
// range partition (one server's lane, requests/s) or, under cosmos, a
// PartitionKey's RU/s against its physical partition's share.
type Hot struct {
	Kind  string  `json:"kind"`
	Key   string  `json:"key"`
	Share float64 `json:"share_pct"` // of the run's requests
	Load  float64 `json:"load"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	// ThrottledPct is the share of its requests that were throttled.
	ThrottledPct float64 `json:"throttled_pct"`
	// Moving says where keys in time order put the load: at the "end"
	// of the key space (appended) or its "start" (prepended); empty when
	// it stayed.
	Moving string `json:"moving,omitempty"`
}

// Use is the hot partition's load as a share of its limit.
func (h Hot) Use() float64 {
	if h.Limit <= 0 {
		return 0
	}
	return h.Load / h.Limit
}

// Verdict is a profile's outcome: its winner, or a tie.
type Verdict struct {
	Profile string `json:"profile"`
	// Winner is the one candidate ranked first; empty on a tie.
	Winner string `json:"winner"`
	// Tied are the candidates that share the first rank, when more
	// than one does.
	Tied []string `json:"tied,omitempty"`
	// DifferAt is the load, in requests/s, at which the tied candidates
	// begin to differ, and Leader the one that leads there; zero when
	// they do not differ up to the highest load tried (Tried).
	DifferAt float64 `json:"differ_at,omitempty"`
	Leader   string  `json:"leader_at_load,omitempty"`
	Tried    float64 `json:"tried_up_to,omitempty"`
	// Summary is the verdict in a sentence.
	Summary string `json:"summary"`
	// Hashed says that the profile's service places PartitionKeys by
	// their hash over physical partitions (cosmos), not in key order.
	Hashed bool `json:"hashed,omitempty"`
}

// Report is advise's result.
type Report struct {
	TargetRate  float64   `json:"target_rate"`
	WarmupSec   float64   `json:"warmup_sec"`
	MeasuredSec float64   `json:"measured_sec"`
	Profiles    []string  `json:"profiles"`
	Candidates  []Row     `json:"candidates"`
	Winner      []Verdict `json:"winner"`
	// Escalations are the runs at higher loads that looked for where tied
	// candidates differ.
	Escalations []Row `json:"escalations,omitempty"`

	runs []*results.Run
}

// Runs returns the records of every run the report was made from, in
// the order made.
func (r *Report) Runs() []*results.Run { return r.runs }

// CarryShare is the share of the offered requests that must succeed for a
// design to carry its target.
const CarryShare = 0.99

// Usable refuses a profile that advise cannot rank designs on: one that
// models no service (none, or a file with model: false) has no limits to
// tell them apart. A command checks every profile with it before anything
// runs or is written; Advise checks again, for its other callers.
func Usable(name string, p engine.Profile) error {
	if !p.Model {
		return fmt.Errorf("profile %s models no service: it has no limits to compare designs against; use wa2010, modern or cosmos", name)
	}
	return nil
}

// Advise runs every candidate of f under each of its profiles at its
// target rate and ranks them per profile; where the first are tied, it
// runs them at higher loads to find where they begin to differ.
func Advise(ctx context.Context, cfg Config, f *File) (*Report, error) {
	rep := &Report{TargetRate: f.TargetRate, Profiles: f.Profiles}
	profiles := map[string]engine.Profile{}
	for _, name := range f.Profiles {
		p, err := cfg.Profile(name)
		if err != nil {
			return nil, err
		}
		if err := Usable(name, p); err != nil {
			return nil, err
		}
		profiles[name] = p
	}
	var plans []Plan
	for _, name := range f.Profiles {
		for _, c := range f.Candidates {
			pl, err := cfg.plan(c, name, profiles[name], f.TargetRate)
			if err != nil {
				return nil, err
			}
			plans = append(plans, pl)
		}
	}
	if len(plans) > 0 {
		rep.WarmupSec, rep.MeasuredSec = plans[0].Spec.Warmup.Seconds(), plans[0].Spec.Duration.Seconds()
	}
	runs, err := cfg.run(ctx, plans)
	if err != nil {
		return nil, err
	}
	for _, name := range f.Profiles {
		var rows []Row
		for i, pl := range plans {
			if pl.Profile == name {
				rows = append(rows, measure(pl, profiles[name], runs[i]))
			}
		}
		rank(rows, cfg.Alpha)
		v := Verdict{Profile: name, Hashed: profiles[name].RequestUnits()}
		for _, r := range rows {
			if r.Rank == 1 {
				v.Tied = append(v.Tied, r.Name)
			}
		}
		if len(v.Tied) == 1 {
			v.Winner, v.Tied = v.Tied[0], nil
			v.Summary = fmt.Sprintf("%s is the best design at %s requests/s: %s", v.Winner, Num(f.TargetRate), lowerFirst(rows[0].Why))
		} else {
			esc, err := cfg.escalate(ctx, f, name, profiles[name], rows, &v)
			if err != nil {
				return nil, err
			}
			rep.Escalations = append(rep.Escalations, esc...)
		}
		rep.Candidates = append(rep.Candidates, rows...)
		rep.Winner = append(rep.Winner, v)
	}
	rep.runs = runs
	for _, r := range rep.Escalations {
		rep.runs = append(rep.runs, r.run)
	}
	return rep, nil
}

// plan returns the run of candidate c under the named profile at rate.
func (cfg *Config) plan(c Candidate, profile string, p engine.Profile, rate float64) (Plan, error) {
	s, err := cfg.spec(c, p, rate)
	if err != nil {
		return Plan{}, err
	}
	id := fmt.Sprintf("%s-%s-%s", slug(profile), slug(c.Name), Num(rate))
	s.JobID = "adv"
	return Plan{ID: strings.ReplaceAll(id, ",", ""), Candidate: c.Name, Profile: profile, Rate: rate, Spec: s}, nil
}

// slug is a name as it can stand in a run's ID and file name.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, s)
}

// run runs plans, Parallel at a time, and returns their records in order.
func (cfg *Config) run(ctx context.Context, plans []Plan) ([]*results.Run, error) {
	out := make([]*results.Run, len(plans))
	index := map[string]int{}
	var planned []workloads.PlannedRun
	for i, pl := range plans {
		index[pl.ID] = i
		planned = append(planned, workloads.PlannedRun{ID: pl.ID, Series: pl.Candidate, X: pl.Rate, Spec: pl.Spec, Engine: workloads.EngineSetup{Profile: pl.Profile}})
	}
	var mu sync.Mutex
	suite := &workloads.Suite{Runs: planned, Parallel: cfg.Parallel,
		NewTarget: func(pr workloads.PlannedRun) (workloads.Target, func(), error) {
			return cfg.NewTarget(pr.Engine.Profile, pr.Spec.Seed)
		},
		Started: func(pr workloads.PlannedRun, c *workloads.Coordinator) {
			if cfg.Started != nil {
				cfg.Started(pr.ID, c)
			}
		},
		Finished: func(pr workloads.PlannedRun, r *results.Run) error {
			mu.Lock()
			defer mu.Unlock()
			r.Figure, r.Series, r.X = "advise", pr.Series, pr.X
			out[index[pr.ID]] = r
			return nil
		}}
	if err := suite.Run(ctx); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, nil
}

// escalate runs the tied candidates at higher multiples of the target
// until they differ, and says so in v.
func (cfg *Config) escalate(ctx context.Context, f *File, profile string, p engine.Profile, at []Row, v *Verdict) ([]Row, error) {
	tied := v.Tied
	var all []Row
	for _, m := range cfg.Multiples {
		rate := f.TargetRate * m
		if rate > MaxTargetRate || rate > capacity(p, at) {
			break // past what the account serves, no key design differs
		}
		var plans []Plan
		for _, c := range f.Candidates {
			if !slices.Contains(tied, c.Name) {
				continue
			}
			pl, err := cfg.plan(c, profile, p, rate)
			if err != nil {
				break // past what the client can be sized for
			}
			plans = append(plans, pl)
		}
		if len(plans) < len(tied) {
			break
		}
		// Shorter runs: they need only tell the candidates apart.
		for i := range plans {
			plans[i].Spec.Duration = min(plans[i].Spec.Duration, escalationMin)
		}
		runs, err := cfg.run(ctx, plans)
		if err != nil {
			return nil, err
		}
		var rows []Row
		for i, pl := range plans {
			rows = append(rows, measure(pl, p, runs[i]))
		}
		rank(rows, cfg.Alpha)
		all = append(all, rows...)
		v.Tried = rate
		if rows[0].Rank == 1 && (len(rows) < 2 || rows[1].Rank > 1) {
			v.DifferAt, v.Leader = rate, rows[0].Name
			v.Summary = fmt.Sprintf("No design is better at %s requests/s: %s are within noise of each other. They begin to differ at %s requests/s (%gx the target), where %s leads: %s",
				Num(f.TargetRate), strings.Join(tied, ", "), Num(rate), m, rows[0].Name, strings.TrimSuffix(lowerFirst(rows[0].Why), "."))
			if len(rows) > 1 {
				v.Summary += fmt.Sprintf("; %s: %s", rows[1].Name, lowerFirst(rows[1].Why))
			}
			return all, nil
		}
	}
	v.Summary = fmt.Sprintf("No design is better at %s requests/s: %s are within noise of each other", Num(f.TargetRate), strings.Join(tied, ", "))
	if v.Tried > 0 {
		v.Summary += fmt.Sprintf(", and still at %s requests/s (%gx the target), the highest load tried below what the account serves", Num(v.Tried), v.Tried/f.TargetRate)
	} else if len(cfg.Multiples) > 0 {
		v.Summary += fmt.Sprintf("; no higher load was tried: %gx the target is past what the account serves", cfg.Multiples[0])
	}
	v.Summary += "."
	return all, nil
}

// capacity is the most requests/s the account (or, under cosmos, the
// table's throughput) serves of the workload, by what the rows measured:
// beyond it every design is capped alike.
func capacity(p engine.Profile, rows []Row) float64 {
	if p.RequestUnits() {
		perReq := 5.0 // a 1 KB write's, until a run says
		for _, r := range rows {
			if r.run != nil && r.run.Totals.Requests > 0 && r.run.Totals.RequestUnits > 0 {
				perReq = r.run.Totals.RequestUnits / float64(r.run.Totals.Requests)
			}
		}
		return maxRU(p) / perReq
	}
	if p.AccountRate <= 0 {
		return math.Inf(1)
	}
	return p.AccountRate
}

// measure reads a candidate's run.
func measure(pl Plan, p engine.Profile, r *results.Run) Row {
	row := Row{Name: pl.Candidate, Profile: pl.Profile, TargetRate: pl.Rate, Run: r.ID, run: r,
		EntitiesPerSec: r.EntitiesPerSec, ThrottledPct: r.ThrottledPct, Billable: r.Billable, RequestUnits: r.Totals.RequestUnits}
	var failed, notSent int64
	for code, n := range r.Errors {
		switch {
		case results.NoAnswer(code):
			failed += n
			if code == results.OutcomeNotSent {
				notSent += n
			}
		case code == results.OutcomeMissed || code == results.OutcomeConflict: // answered: the workload's own
		default:
			failed += n
		}
	}
	if r.MeasuredSec > 0 {
		row.SuccessPerSec = float64(r.Totals.Requests-failed) / r.MeasuredSec
	}
	if r.Totals.Requests > 0 {
		row.NotSentPct = 100 * float64(notSent) / float64(r.Totals.Requests)
		row.Carries = float64(r.Totals.Requests-failed)/float64(r.Totals.Requests) >= CarryShare && row.SuccessPerSec >= CarryShare*pl.Rate
	}
	row.LatencyMs = map[string]results.Percentiles{}
	if len(r.Ops) > 0 {
		for op, st := range r.Ops {
			row.LatencyMs[op] = st.SuccessLatencyMs
		}
	} else {
		row.LatencyMs[r.Setup.Op] = r.SuccessLatencyMs
	}
	row.ClientLimited = clientLimited(r)
	row.Hottest = hottest(r, p, pl.Spec)
	row.GivesUp = givesUp(pl.Spec)
	row.Why = why(row, p, pl.Spec)
	return row
}

// clientLimited says why the simulated client may have limited a run: a
// saturated modelled VM. Arrivals that found every thread waiting are
// the design's latency, not the client's, and the row says so.
func clientLimited(r *results.Run) string {
	for _, w := range r.Warnings {
		if strings.Contains(w, "client") && strings.Contains(w, "saturated") {
			return w
		}
	}
	return ""
}

// Attach gives a report read back from JSON its runs' records, which
// load returns by run ID, so that its page can be drawn again.
func (r *Report) Attach(load func(id string) (*results.Run, error)) error {
	r.runs = nil
	for _, rows := range [][]Row{r.Candidates, r.Escalations} {
		for i := range rows {
			run, err := load(rows[i].Run)
			if err != nil {
				return fmt.Errorf("candidate %s under %s: %w", rows[i].Name, rows[i].Profile, err)
			}
			rows[i].run = run
			r.runs = append(r.runs, run)
		}
	}
	return nil
}
