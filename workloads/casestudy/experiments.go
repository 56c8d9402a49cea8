package casestudy

import (
	"fmt"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
	"github.com/tablebench/tablebench/workloads/vm"
)

// Experiment names, for --only.
const (
	ExpRetry    = "retry"
	ExpAppend   = "append"
	ExpBalance  = "balance"
	ExpConflict = "conflict"
	ExpModern   = "modern"
)

// ExperimentNames lists the experiments in catalog order.
func ExperimentNames() []string {
	return []string{ExpRetry, ExpAppend, ExpBalance, ExpConflict, ExpModern, ExpCosmos}
}

// ExperimentFigures returns the figures of the named experiments (all when
// names is empty), with the figures derived ones read.
func ExperimentFigures(names []string) ([]workloads.Figure, error) {
	all := Experiments()
	if len(names) == 0 {
		return all, nil
	}
	var out []workloads.Figure
	for _, n := range names {
		found := false
		for _, f := range all {
			if experimentOf(f.ID) == n {
				out = append(out, f)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("experiment %q is not in the catalog: use %v", n, ExperimentNames())
		}
	}
	return out, nil
}

// experimentOf names the experiment a figure belongs to.
func experimentOf(id int) string {
	switch {
	case id < 211:
		return ExpRetry
	case id < 221:
		return ExpAppend
	case id < 231:
		return ExpBalance
	case id < 241:
		return ExpConflict
	case id < 251:
		return ExpModern
	}
	return ExpCosmos
}

// The retry strategies of the first experiment, as series.
const (
	stratPause   = "no retry, 3 s pause (the study's method)"
	stratFixed   = "fixed: 3 retries after 1 s"
	stratBackoff = "2010 client: 3, 27, 81 s"
	stratSDK     = "today's SDK: from 0.8 s, doubling"
)

var (
	strategies   = []string{stratPause, stratFixed, stratBackoff, stratSDK}
	strategyName = map[string]workloads.RetryPolicy{stratPause: workloads.RetryNone, stratFixed: workloads.RetryFixed, stratBackoff: workloads.RetryStorage2010, stratSDK: workloads.RetrySDK}
	retryThreads = []float64{20, 30, 50}
	timeouts     = []float64{45, 55, 70, 100}
	keySchemes   = []string{"append-only keys", "prepend-only keys", "GUID keys"}
	profiles     = []string{"wa2010", "modern", "cosmos"} // cosmos at its 100,000 RU/s: the Table service's targets in RU
)

const (
	noTxn   = "no transaction id"
	withTxn = "transaction id"
)

// Experiments returns the experiments the case study's advice calls for and
// its figures never test, drawn as figures with IDs from 201.
func Experiments() []workloads.Figure {
	var figs []workloads.Figure
	add := func(f workloads.Figure) {
		f.Name = fmt.Sprintf("x%s-%d", experimentOf(f.ID), f.ID)
		figs = append(figs, f)
	}
	line := results.ChartLine

	// 1. Retry strategies on Figure 15's load: batches of 100 into one
	// partition from XL VMs of 10 threads.
	var retryRuns []workloads.FigureRun
	for _, st := range strategies {
		for _, n := range retryThreads {
			s := spec(workloads.OpBatch, workloads.PartitionShared, int(n)/10, 10, vm.XL, 100)
			s.Retry, _ = workloads.DefaultRetry(strategyName[st])
			retryRuns = append(retryRuns, workloads.FigureRun{Series: st, X: n, Spec: s, Long: true})
		}
	}
	retryChoices := []string{"Figure 15's load: batches of 100 into one PartitionKey from XL VMs of 10 threads, at 20, 30 and 50 threads",
		"each point measures 5 minutes (quick: 2), so the 2010 client's long waits come round several times",
		"a retry is counted as a request of its own, billed as the study says throttled requests are"}
	add(workloads.Figure{ID: 201, Title: "Retry strategies under a saturated partition: successful entities/s", XLabel: "threads in all", YLabel: "successful entities/s",
		Chart: line, Metric: "entities-per-sec", Runs: retryRuns, Choices: retryChoices})
	add(workloads.Figure{ID: 202, Title: "Retry strategies under a saturated partition: share of requests throttled", XLabel: "threads in all", YLabel: "% of requests throttled",
		Chart: line, Metric: "throttled-pct", From: 201})
	add(workloads.Figure{ID: 203, Title: "Retry strategies under a saturated partition: successful entities per billed transaction", XLabel: "threads in all", YLabel: "entities per billed transaction",
		Chart: line, Metric: "entities-per-billable", From: 201})
	add(workloads.Figure{ID: 204, Title: "Retry strategies under a saturated partition: p99 latency of a successful request", XLabel: "threads in all", YLabel: "p99 latency of successful requests (ms)",
		Chart: line, Metric: "p99", From: 201})

	// 2. Append-only, prepend-only and GUID PartitionKeys on a table that
	// starts in one range partition, long enough for the balancer to act.
	long := workloads.Durations{Quick: 15 * time.Minute, Full: 20 * time.Minute}
	cold := workloads.EngineSetup{Cold: true}
	var keyRuns []workloads.FigureRun
	for i, k := range keySchemes {
		part := []workloads.PartitionScheme{workloads.PartitionAppend, workloads.PartitionPrepend, workloads.PartitionGUID}[i]
		keyRuns = append(keyRuns, workloads.FigureRun{Series: k, X: float64(i + 1), Spec: spec(workloads.OpInsert, part, 4, 15, vm.XL, 0), Measure: long, Engine: cold})
	}
	add(workloads.Figure{ID: 211, Title: "Append-only, prepend-only and GUID PartitionKeys as the load balancer acts", XLabel: "second of the run", YLabel: "successful entities/s",
		Chart: results.ChartTimeline, Metric: "entities-per-sec", Runs: keyRuns,
		Choices: []string{"single inserts from 4 XL VMs of 15 threads, each thread its own key sequence: time-ordered increasing, decreasing, or a GUID",
			"the table starts in one range partition on one server (not pre-split), and the balancer decides as the study says, after 5-10 minutes",
			"each run measures 20 minutes (quick: 15) after the warm-up, so the last minutes come after the balancer's decision; splits and moves are marked on the timeline"}})

	// 3. A hot spot: a cold table's one server gets more than it can serve,
	// and the balancer, after minutes, splits and moves.
	add(workloads.Figure{ID: 221, Title: "Load balancing under a hot spot: throughput, throttling and the balancer's moves", XLabel: "second of the run", YLabel: "successful entities/s",
		Chart: results.ChartTimeline, Metric: "entities-per-sec",
		Runs: []workloads.FigureRun{{Series: "hot server", X: 1, Spec: spec(workloads.OpInsert, workloads.PartitionGUID, 6, 15, vm.XL, 0), Measure: long, Engine: cold}},
		Choices: []string{"single inserts from 6 XL VMs of 15 threads, GUID keys, into a table that starts in one range partition on one server",
			"the balancer decides after 5-10 minutes, as the study says; a move makes its partition unavailable for 10-20 s"}})

	// 4. Retries that confuse: inserts retried after a client timeout near
	// the service's latency tail.
	var conflictRuns []workloads.FigureRun
	for _, series := range []string{noTxn, withTxn} {
		for _, ms := range timeouts {
			s := spec(workloads.OpInsert, workloads.PartitionGUID, 1, 10, vm.XL, 0)
			s.Retry = workloads.Retry{Policy: workloads.RetryFixed, MaxRetries: 3, Delay: 100 * time.Millisecond}
			s.RequestTimeout = time.Duration(ms) * time.Millisecond
			s.TxnID = series == withTxn
			conflictRuns = append(conflictRuns, workloads.FigureRun{Series: series, X: ms, Spec: s})
		}
	}
	add(workloads.Figure{ID: 231, Title: "Retries that confuse: Conflict answers to retried inserts, against the client timeout", XLabel: "client timeout (ms)", YLabel: "Conflicts per 1,000 requests",
		Chart: line, Metric: "conflicts-per-1000", Runs: conflictRuns,
		Choices: []string{"single inserts from 1 XL VM of 10 threads; the client stops waiting after 45, 55, 70 or 100 ms (an unloaded insert takes ~45 ms at the median, ~65 ms at p99) and retries up to 3 times after 100 ms",
			"the service finishes an insert whose client stopped waiting, so the retry finds the entity there",
			"with a transaction id, the harness reads the entity a retried insert conflicts with, and an insert of its own counts as the success it was"}})

	// 5. 2010 against today: Figures 8 (single partition) and 15 under both
	// profiles, each through the client of its time (the profile's).
	var f8, f15 []workloads.FigureRun
	for _, p := range profiles {
		for _, n := range []float64{1, 2, 5, 10, 16} {
			f8 = append(f8, workloads.FigureRun{Series: p, X: n, Spec: withClient(spec(workloads.OpInsert, workloads.PartitionShared, int(n), 15, vm.XL, 0), p),
				Long: n >= 5, Engine: workloads.EngineSetup{Profile: p}})
		}
		for n := 1; n <= 5; n++ {
			f15 = append(f15, workloads.FigureRun{Series: p, X: float64(10 * n), Spec: withClient(spec(workloads.OpBatch, workloads.PartitionShared, n, 10, vm.XL, 100), p),
				Long: true, Engine: workloads.EngineSetup{Profile: p}})
		}
	}
	modernNote := "modern rests on today's published scalability targets (2,000 entities/s per partition, 20,000 per account) and single-digit-millisecond latency; the rest of its model (lanes, throttle, balancer) is the calibrated 2010 one, scaled, and is not itself measured against today's service"
	clientNote := "each profile's runs model the client of its time: under wa2010 the 2010 XL VM (5 ms of CPU a request, 55% of it serialized) with the study's method (no retry, a 3 s pause after an error); under modern a 4-vCPU VM of today running the Go aztables SDK (about 0.1 ms a request, measured; workloads/vm) with the SDK's default retries"
	add(workloads.Figure{ID: 241, Title: "Figure 8 under the 2010 and today's profiles: single inserts into one partition", XLabel: "VMs", YLabel: "entities/s",
		Chart: line, Metric: "entities-per-sec", Runs: f8,
		Choices:     []string{"Figure 8's single-partition series: 15 threads per VM", clientNote, modernNote, cosmosNote},
		ClientBound: "the wa2010 series is measured through the 2010 client model, whose 15 threads saturate an XL VM until the partition, not the client, is the limit"})
	add(workloads.Figure{ID: 242, Title: "Figure 15 under the 2010 and today's profiles: saturating one partition with batches of 100", XLabel: "threads in all", YLabel: "successful entities/s",
		Chart: line, Metric: "entities-per-sec", Runs: f15,
		Choices:     []string{"Figure 15's load: batches of 100 from VMs of 10 threads", clientNote, modernNote, cosmosNote},
		ClientBound: "the wa2010 series is measured through the 2010 client model, as Figure 15 is"})
	for _, f := range cosmosExperiments() {
		add(f)
	}
	return figs
}

// ExperimentClaims returns the claims the experiments check, each written
// from the case study's own text, ids starting with X.
func ExperimentClaims() []Claim {
	figs := Experiments()
	fig := map[int]*workloads.Figure{}
	for i := range figs {
		fig[figs[i].ID] = &figs[i]
	}
	f202, f203, f211, f221, f231, f241, f242 := fig[202], fig[203], fig[211], fig[221], fig[231], fig[241], fig[242]
	others := []string{stratPause, stratFixed, stratSDK}
	last := Span{From: -120, To: 0, FromEnd: true} // the run's last two minutes
	early := Span{From: 60, To: 180}

	return append([]Claim{
		{ID: "X1.1", Figure: 202,
			Text:  "Use an exponential backoff strategy to minimize throttled requests.",
			Value: Ratio(Y(f202, stratBackoff, 50), Lowest(Each(others, func(s string) Quantity { return Y(f202, s, 50) }))),
			Bound: AtMost(1), Published: 1,
			Also: []Condition{Holds("at 30 threads", Ratio(Y(f202, stratBackoff, 30), Lowest(Each(others, func(s string) Quantity { return Y(f202, s, 30) }))), AtMost(1))},
			Why:  "the lowest throttled share of the four strategies, at the study's heaviest load"},
		{ID: "X1.2", Figure: 203,
			Text:  "Throttled requests are billed too: observe exponential backoff to achieve the most economical throughput.",
			Value: Ratio(Y(f203, stratBackoff, 50), Highest(Each(others, func(s string) Quantity { return Y(f203, s, 50) }))),
			Bound: AtLeast(1), Published: 1,
			Why: "the most successful entities per billed transaction of the four strategies"},

		{ID: "X2.1", Figure: 211,
			Text: "With append-only (or prepend-only) keys the write throughput is limited by a single server, and load balancing will not help increase it.",
			Value: Highest(Each(keySchemes[:2], func(s string) Quantity {
				return Ratio(SpanRate(f211, s, keyX(s), last), SpanRate(f211, s, keyX(s), early))
			})),
			Bound: AtMost(1.1), Published: 1.1,
			Why: "no more than 10% gained from the first minutes to the last two, balancer or not"},
		{ID: "X2.2", Figure: 211,
			Text:  "GUID keys scale, since the system can load balance several partitions, provided the append-only pattern is avoided.",
			Value: Ratio(SpanRate(f211, "GUID keys", 3, last), Highest(Each(keySchemes[:2], func(s string) Quantity { return SpanRate(f211, s, keyX(s), last) }))),
			Bound: AtLeast(1.3), Published: 1.3,
			Also: []Condition{Holds("GUID gain", Ratio(SpanRate(f211, "GUID keys", 3, last), SpanRate(f211, "GUID keys", 3, early)), AtLeast(1.2))},
			Why:  "in the last two minutes GUID keys serve at least 30% more than either time-ordered scheme, and 20% more than they did before the balancer acted",
			Note: "a finding about this load: after the balancer spreads the GUID keys, the four modelled XL VMs' CPU (their serialized share) caps them at about 1,450 requests/s, so they gain about 20% over one partition's lane, not 30%; the balance experiment, with six VMs, gains 75%"},

		{ID: "X3.1", Figure: 221,
			Text:  "The server may take 5-10 minutes to decide to load balance, in order to not overreact to very small spikes in traffic.",
			Value: FirstEvent(f221, "hot server", 1), Bound: Between(300, 600), Published: 600, Printed: true,
			Why:  "the first split or move, counted from the start of the load, within 5 to 10 minutes",
			Note: "a finding about the model: its balancer waits 5-10 minutes from when it first sees the server hot, which takes one 15 s observation window, so counted from the start of the load the decision can come just past 10 minutes"},
		{ID: "X3.2", Figure: 221,
			Text:  "During load balancing, which can take 10-20 seconds for a partition to be reassigned, a client may experience Server Busy or Timeout errors.",
			Value: SpanThrottled(f221, "hot server", 1, Span{From: 0, To: 20, AfterEvent: true}), Bound: AtLeast(1),
			Why: "at least one request throttled or timed out in the 20 s after the first split or move"},
		{ID: "X3.3", Figure: 221,
			Text:  "Once the partitions are load balanced the system provides higher throughput, since they are served by different servers.",
			Value: Ratio(SpanRate(f221, "hot server", 1, last), SpanRate(f221, "hot server", 1, Span{From: -120, To: 0, AfterEvent: true})),
			Bound: AtLeast(1.2), Published: 1.2,
			Why: "the last two minutes serve at least 20% more than the two before the balancer acted"},

		{ID: "X4.1", Figure: 231,
			Text:  "If an insert succeeds at the service but the client times out and retries it, the retry returns Conflict although the insert succeeded.",
			Value: Ratio(ErrorCount(f231, noTxn, 55, tables.CodeEntityAlreadyExists), ErrorCount(f231, noTxn, 55, results.OutcomeClientTimeout)), Bound: AtLeast(0.5), Published: 0.5,
			Why: "with the client timeout near the median insert latency, at least one Conflict for every two client timeouts"},
		{ID: "X4.2", Figure: 231,
			Text:  "A transaction-id property tells a retried success from a real conflict: on Conflict, retrieve the entity and compare.",
			Value: Highest(EachX(timeouts, func(x float64) Quantity { return ErrorCount(f231, withTxn, x, tables.CodeEntityAlreadyExists) })), Bound: AtMost(0),
			Also: []Condition{Holds("client timeouts at 55 ms", ErrorCount(f231, withTxn, 55, results.OutcomeClientTimeout), AtLeast(1))},
			Why:  "no Conflict left at any client timeout, where client timeouts did happen"},

		{ID: "X5.1", Figure: 242,
			Text:  "Today's target for a single partition is 2,000 entities per second.",
			Value: Y(f242, "modern", 50), Bound: Near(2000, 0.15), Published: 2000, Printed: true,
			Why: "the modern profile's saturated partition at Figure 15's heaviest load, within 15%"},
		{ID: "X5.2", Figure: 241,
			Text:  "Today's service answers in single-digit milliseconds.",
			Value: RunStat(f241, "modern", 1, MedianLatency), Bound: Under(10), Published: 10, Printed: true,
			Why: "the median insert latency of one VM of 15 threads into one partition under the modern profile, through today's client, whose 0.1 ms of CPU a request leaves the service to decide it"},
	}, cosmosClaims(fig)...)
}

func keyX(series string) float64 {
	for i, k := range keySchemes {
		if k == series {
			return float64(i + 1)
		}
	}
	return 0
}

// withClient has a run model the client of its profile's time: the
// profile's VM and, for today's client, the retries the Azure SDK makes by
// default. The 2010 client keeps the study's method (no retry, a 3 s pause
// after an error), with which its figures were measured. Today's client
// pausing 3 s would leave idle a partition it can saturate: under modern,
// Figure 15's load then serves about 1,400 entities/s of the 2,000 the
// partition's budget allows, where the SDK's retries serve 2,000.
func withClient(s workloads.Spec, profile string) workloads.Spec {
	p, _ := engine.ProfileByName(profile) // built in (TestTodayRunsThroughTodaysClient)
	s.VMSize = enginetarget.ClientSize(p)
	if s.VMSize.ClientCost() != vm.DefaultCost() {
		s.Retry, _ = workloads.DefaultRetry(workloads.RetrySDK)
	}
	return s
}
