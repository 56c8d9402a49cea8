package workloads

import (
	"fmt"
	"math"
	"time"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads/vm"
)

// Thresholds of a run's self-check.
const (
	// NoAnswerShare is the share of requests that may end without an
	// answer from the endpoint (transport errors, client timeouts, requests
	// never sent) before a run is flagged.
	NoAnswerShare = 0.01
	// ProbeTimeout: a client timeout shorter than this probes the
	// service's latency tail on purpose, so its timeouts are not taken for
	// an endpoint that stopped answering.
	ProbeTimeout = time.Second
	// SilenceSecs is how many whole seconds the endpoint may answer nothing,
	// while requests wait, before a run is flagged.
	SilenceSecs = 3
	// SilenceShare: from a real endpoint, a silence of at least SilenceSecs
	// is flagged when it is this many times the median latency of answered
	// requests.
	SilenceShare = 10
	// LagRefuse: on the engine in wall time, a run is refused when the
	// harness's lag is estimated to have moved its throughput, or its p50
	// or p99 latency, by more than this share; past LagWarn it warns with
	// the estimate. The lag itself is no reason: a shared machine's timers
	// wake milliseconds late, which matters only beside the latency.
	LagRefuse = 0.05
	LagWarn   = 0.01
	// ClientLagShare and MinClientLag: against a real endpoint the lag is
	// only warned of past half the median latency, and at least 5 ms.
	ClientLagShare = 0.5
	MinClientLag   = 5.0 // ms
	// ClientSaturated is the modelled client CPU, in % of a VM's limiting
	// resource over the measured window, from which the VM, not the
	// service, decides the run's numbers.
	ClientSaturated = 95.0
)

// check returns the run's warnings, its notes (information that does not
// put the numbers in doubt), and whether its numbers are refused outright
// because the harness could not keep time.
func (r *Coordinator) check(run *results.Run) (warnings, notes []string, refused bool) {
	t := run.Totals
	// An interrupted run measured until the interrupt: what came after is
	// nobody's silence, and its numbers cover only what was measured.
	measuredEnd := r.spec.Warmup + r.spec.Duration
	if run.Interrupted {
		measuredEnd = r.spec.Warmup + time.Duration(run.MeasuredSec*float64(time.Second))
		if run.MeasuredSec > 0 {
			warnings = append(warnings, fmt.Sprintf("the run was interrupted after %.1f s of the %v it was to measure: its numbers cover those %.1f s only", run.MeasuredSec, r.spec.Duration, run.MeasuredSec))
		} else {
			warnings = append(warnings, "the run was interrupted during its warm-up: nothing was measured")
		}
	}
	if t.Requests == 0 && !run.Interrupted {
		warnings = append(warnings, fmt.Sprintf("no request completed in the %v measured: the run has no numbers; measure for longer than a request takes, as in --duration 10s", r.spec.Duration))
	}
	var missing int64
	for code, n := range t.Errors {
		// A client timeout under a second is a deliberate probe of the
		// latency tail (an experiment's), not an endpoint that froze.
		if code == results.OutcomeClientTimeout && r.spec.RequestTimeout > 0 && r.spec.RequestTimeout < ProbeTimeout {
			continue
		}
		if results.NoAnswer(code) {
			missing += n
		}
	}
	if t.Requests > 0 && float64(missing)/float64(t.Requests) > NoAnswerShare {
		warnings = append(warnings, fmt.Sprintf("%.1f%% of requests (%d) got no answer from the endpoint (transport errors, client timeouts, requests never sent): it failed, froze or could not be reached, and the throughput averages over that time",
			100*float64(missing)/float64(t.Requests), missing))
	}
	// A silence counts when requests also went unanswered, when it is long,
	// or, from a real endpoint, when it is long beside the endpoint's usual
	// answer: a frozen endpoint that comes back answers everything, late.
	// The in-tree engine's silences are its model's (a partition moving),
	// which runs measure on purpose.
	if gap, from := silence(run, int(r.spec.Warmup/time.Second), int(measuredEnd/time.Second)); gap >= SilenceSecs &&
		(missing > 0 || gap >= 10*SilenceSecs || run.Env.Target != "engine" && run.SuccessLatencyMs.P50*SilenceShare < float64(gap)*1000) {
		warnings = append(warnings, fmt.Sprintf("the endpoint answered nothing for %d s from second %d of the run while requests were sent: it stalled or went down, and the numbers average over that time", gap, from))
	}
	if lag := run.HarnessLagMs; lag != nil && !r.virtual() {
		switch {
		case run.Env.Target == "engine":
			// The engine in wall time: a late wake-up, multiplied by the
			// time scale, becomes model time the engine counts as load.
			effect, what := lagEffect(*lag, run.LatencyMs, r.spec.Load == LoadOpen)
			switch {
			case effect > LagRefuse:
				refused = true
				warnings = append(warnings, fmt.Sprintf("the harness ran late: %s, more than the %.0f%% a run may be off; use a lower --time-scale, or virtual time (--time-scale 0)",
					what, 100*LagRefuse))
			case effect > LagWarn:
				warnings = append(warnings, fmt.Sprintf("the harness ran late: %s; the numbers hold to about that (a run is refused past %.0f%%)", what, 100*LagRefuse))
			}
		case lag.P99 > max(ClientLagShare*run.SuccessLatencyMs.P50, MinClientLag):
			// A real endpoint: the lag is the client machine's own, part of
			// what was measured, but a busy client is worth knowing about.
			warnings = append(warnings, fmt.Sprintf("the client machine could not keep its schedule: threads sent %.1f ms late at p99, more than half the median latency of %.1f ms; the numbers describe this machine as much as the endpoint (use fewer threads, or shard across machines)",
				lag.P99, run.SuccessLatencyMs.P50))
		}
	}
	if msg := r.overloaded(run); msg != "" {
		warnings = append(warnings, msg)
	}
	if msg := r.saturatedClient(run.ClientCPUPct); msg != "" {
		if r.clientBound != "" {
			notes = append(notes, msg+", as meant: "+r.clientBound)
		} else {
			warnings = append(warnings, msg+"; to measure the service, add client capacity: more VMs (--vms), a larger --vm-size, or fewer --threads per VM")
		}
	}
	return warnings, notes, refused
}

// lagEffect estimates the largest share by which the harness's lateness
// moved a number the run reports, and says how, in model time. A
// closed-loop thread that wakes late by L per request loses L/(latency+L)
// of its rate; its latencies count from when requests were really sent,
// so they hold. In an open loop the schedule holds the rate, and latency
// counts from when a request was due, so the lag adds to the percentiles.
func lagEffect(lag, latency results.Percentiles, open bool) (float64, string) {
	if open {
		p50, p99 := share(lag.P50, latency.P50), share(lag.P99, latency.P99)
		return max(p50, p99), fmt.Sprintf("threads sent %.2f ms late at p50 and %.1f ms at p99 (model time), an estimated %.1f%% of the p50 latency (%.1f ms) and %.1f%% of the p99 (%.1f ms), which count from when requests were due",
			lag.P50, lag.P99, 100*p50, latency.P50, 100*p99, latency.P99)
	}
	tput := share(lag.Mean, latency.Mean+lag.Mean)
	return tput, fmt.Sprintf("threads woke %.2f ms late on average (p99 %.1f ms, model time) beside a mean latency of %.1f ms, which lowers the throughput by an estimated %.1f%%, a thread late by L per request losing L/(latency+L) of its rate",
		lag.Mean, lag.P99, latency.Mean, 100*tput)
}

// share is part/whole, or 0 for no whole.
func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole
}

// saturatedClient says which modelled VMs were saturated over the measured
// window, or "" when none was.
func (r *Coordinator) saturatedClient(cpu []float64) string {
	n, busiest := 0, 0.0
	for _, c := range cpu {
		if c >= ClientSaturated {
			n++
		}
		busiest = max(busiest, c)
	}
	if n == 0 {
		return ""
	}
	client := "2010 client"
	if r.spec.VMSize.ClientCost() != vm.DefaultCost() {
		client = "client of today"
	}
	return fmt.Sprintf("the modelled %s was saturated: %d of %d VMs (%s) at %.0f%% or more of their CPU over the measured window (the busiest %.0f%%), so the numbers describe the client, not the service",
		client, n, len(cpu), r.spec.VMSize.Name, ClientSaturated, busiest)
}

// silence returns the longest run of whole seconds in [from, to) in which
// the endpoint answered no request, and the second it began.
func silence(run *results.Run, from, to int) (longest, at int) {
	busy := map[int]bool{}
	for _, iv := range run.Intervals {
		if iv.Requests > iv.NoAnswer {
			busy[iv.Second] = true
		}
	}
	cur, start := 0, 0
	for s := from; s < to; s++ {
		if busy[s] {
			cur = 0
			continue
		}
		if cur == 0 {
			start = s
		}
		if cur++; cur > longest {
			longest, at = cur, start
		}
	}
	return longest, at
}

// overloaded says, of an open load that left more than NoAnswerShare of
// its requests unsent, why: by Little's law a rate R at a mean latency L
// keeps R·L threads busy, so when that is more than the run's threads, the
// client was too small, and the message says how many threads would do;
// when it is not, the threads were held by answers that came late or never.
func (r *Coordinator) overloaded(run *results.Run) string {
	ol := run.OpenLoad
	if ol == nil || ol.Due == 0 || float64(ol.Dropped)/float64(ol.Due) <= NoAnswerShare {
		return ""
	}
	s := &r.spec
	threads := s.VMs * s.Threads
	if s.Shards > 1 {
		threads = (s.VMs - s.Shard + s.Shards - 1) / s.Shards * s.Threads
	}
	what := "were dropped, never sent"
	if s.Overload == OverloadQueue {
		what = "were still queued for a thread when the run ended, never sent"
	}
	pct := 100 * float64(ol.Dropped) / float64(ol.Due)
	head := fmt.Sprintf("the open load sent %.1f requests/s of the %.1f/s intended: %.1f%% of the %d requests due (%d) found all %d threads busy and %s",
		ol.AchievedPerSec, ol.IntendedPerSec, pct, ol.Due, ol.Dropped, threads, what)
	lat := run.SuccessLatencyMs.Mean
	if lat <= 0 {
		lat = run.LatencyMs.Mean
	}
	if lat <= 0 {
		// Nothing answered in the window (all queued, their latency mostly
		// the wait): threads that are always busy send 1/latency each, so
		// the busiest second says what a thread takes.
		var best int64
		for _, iv := range run.Intervals {
			best = max(best, iv.Requests-iv.NoAnswer)
		}
		if best > 0 {
			lat = 1000 * float64(threads) / float64(best)
		}
	}
	if r.saturatedClient(run.ClientCPUPct) != "" {
		// The modelled VMs' CPU, not the number of threads, held the rate:
		// a thread more on a saturated VM only queues for its CPU.
		return head + fmt.Sprintf("; the client is too small for the rate, not the endpoint too slow: its modelled VMs' CPU was saturated (%s VMs), so more threads per VM will not help; use more VMs (--vms) or a larger --vm-size",
			s.VMSize.Name)
	}
	need := int(math.Ceil(ol.IntendedPerSec * lat / 1000 * 1.25)) // a quarter to spare: latency varies
	if lat > 0 && need > threads {
		head += fmt.Sprintf("; the client is too small for the rate, not the endpoint too slow: at the mean latency of %.1f ms a thread sends at most %.1f requests/s, so %.0f/s needs some %d threads",
			lat, 1000/lat, ol.IntendedPerSec, need)
		switch vms := (need + MaxThreadsPerVM - 1) / MaxThreadsPerVM; {
		case need > MaxThreads:
			// Advice the spec would refuse is no advice: say what one run
			// can carry, and how to go past it.
			return head + fmt.Sprintf(", more than the %d one run drives: lower the rate to about %.0f/s, or split it over sharded runs against one endpoint (docs/sharding.md)",
				MaxThreads, float64(MaxThreads)*1000/lat/1.25)
		case (need+s.VMs-1)/s.VMs > MaxThreadsPerVM:
			return head + fmt.Sprintf("; use --vms %d --threads %d (at most %d threads a VM)", vms, (need+vms-1)/vms, MaxThreadsPerVM)
		default:
			return head + fmt.Sprintf("; use --threads %d with --vms %d, or more VMs", (need+s.VMs-1)/s.VMs, s.VMs)
		}
	}
	holder, why := "the endpoint", "its answers came late or not at all (see the other warnings)"
	var failed int64
	for _, n := range run.Errors {
		failed += n
	}
	switch {
	case s.Retry.Policy == RetryNone && s.Retry.Pause > 0 && failed > 0:
		why += fmt.Sprintf(", and each of its %d errors (throttling included) held a thread for the %v pause of --retry none: retry, or add threads for the pauses", failed, s.Retry.Pause)
	case run.Totals.Retries > 0:
		// A thread waiting out a retry's backoff sends nothing: by Little's
		// law the backoffs alone keep retries x backoff / seconds threads.
		holder = "the retries"
		why = fmt.Sprintf("its %d retries each held a thread for its backoff (--retry %s, from %v), which is more than the answers' latency; add threads for the backoffs, or spread the load that is throttled", run.Totals.Retries, s.Retry.Policy, s.Retry.Delay)
	}
	return head + fmt.Sprintf("; at the answered requests' mean latency of %.1f ms %d threads suffice for %.0f/s, so %s held them: %s",
		lat, threads, ol.IntendedPerSec, holder, why)
}
