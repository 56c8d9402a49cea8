package casestudy

import (
	"fmt"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// spec returns a figure run's spec from the method's defaults.
func spec(op workloads.OpKind, partition workloads.PartitionScheme, vms, threads int, size vm.Size, batch int) workloads.Spec {
	s := workloads.DefaultSpec()
	s.Op, s.Partition, s.VMs, s.Threads, s.VMSize = op, partition, vms, threads, size
	if batch > 0 {
		s.BatchSize = batch
	}
	return s
}

func sizeSeries(sz vm.Size) string {
	if sz.Name == "small" {
		return "small VM"
	}
	return "XL VM"
}

// The x values of the figures, where the case study leaves them unstated.
var (
	batchSizes  = []float64{1, 2, 5, 10, 20, 40, 60, 80, 100}
	vmCounts8   = []float64{1, 2, 4, 5, 8, 10, 12, 16}
	vmCounts12  = []float64{1, 2, 4, 8, 12, 16}
	threadSweep = []float64{1, 2, 4, 6, 8, 10, 15, 20, 25, 30}
	bothSizes   = []vm.Size{vm.Small, vm.XL}
	vmSeries    = []string{"small VM", "XL VM"}
)

// oneThread is why Figures 5 and 6 draw their two VM sizes alike.
const oneThread = "with one thread a VM uses one core, and in the client model a core of a small VM costs the same as one of an XL VM, so both sizes measure the same latencies from the same seed"

// Figures returns the case study's Figures 3-15: their runs, labels and
// the choices made where the case study is silent.
func Figures() []workloads.Figure {
	var figs []workloads.Figure
	add := func(f workloads.Figure) { f.Name = fmt.Sprintf("fig%02d", f.ID); figs = append(figs, f) }
	line, hist := results.ChartLine, results.ChartHistogram

	add(workloads.Figure{ID: 3, Title: "Single entity latencies for inserts and gets", XLabel: "latency (ms)", YLabel: "requests",
		Chart: hist, Metric: "entities-per-sec",
		Runs: []workloads.FigureRun{
			{Series: "get", X: 1, Spec: spec(workloads.OpGet, workloads.PartitionGUID, 1, 1, vm.XL, 0)},
			{Series: "insert", X: 1, Spec: spec(workloads.OpInsert, workloads.PartitionGUID, 1, 1, vm.XL, 0)},
		},
		Choices: []string{"threads are not stated: 1 thread on the XL VM, so latency is unloaded"}})

	add(workloads.Figure{ID: 4, Title: "Insert latency distribution for batches of 100 entities", XLabel: "latency (ms)", YLabel: "requests",
		Chart: hist, Metric: "entities-per-sec",
		Runs:    []workloads.FigureRun{{Series: "batch of 100", X: 100, Spec: spec(workloads.OpBatch, workloads.PartitionGUID, 1, 1, vm.Small, 100)}},
		Choices: []string{"one thread on a small VM, all entities of a batch in the thread's own partition"}})

	bySize := func(partition workloads.PartitionScheme, threads int) []workloads.FigureRun {
		var runs []workloads.FigureRun
		for _, sz := range bothSizes {
			for _, n := range batchSizes {
				runs = append(runs, workloads.FigureRun{Series: sizeSeries(sz), X: n, Spec: spec(workloads.OpBatch, partition, 1, threads, sz, int(n))})
			}
		}
		return runs
	}
	add(workloads.Figure{ID: 5, Title: "Mean latency of batches of various sizes to a single partition", XLabel: "batch size (entities)", YLabel: "mean latency (ms)",
		Chart: line, Metric: "mean-latency", Runs: bySize(workloads.PartitionShared, 1),
		Choices:  []string{"batch sizes 1, 2, 5, 10, 20, 40, 60, 80 and 100 (the figure's x values are not stated)", "one thread, one partition"},
		Coincide: oneThread})

	add(workloads.Figure{ID: 6, Title: "Per-entity latency of batches of various sizes to a single partition", XLabel: "batch size (entities)", YLabel: "latency per entity (ms)",
		Chart: line, Metric: "per-entity-latency", From: 5,
		Choices:  []string{"derived from Figure 5's runs: mean batch latency divided by batch size"},
		Coincide: oneThread})

	add(workloads.Figure{ID: 7, Title: "Throughput of batches of various sizes to many partitions, 30 threads on 1 VM", XLabel: "batch size (entities)", YLabel: "entities/s",
		Chart: line, Metric: "entities-per-sec", Runs: bySize(workloads.PartitionGUID, 30),
		Choices: []string{"batch sizes 1, 2, 5, 10, 20, 40, 60, 80 and 100",
			"C7.2's \"a little more than 1.5 times\" is read as 1.5x to 1.9x, written before any result: the published number is a floor, and \"a little\" leaves the top open, so the reading stops short of 2x",
			"C7.2 is decided by the client model: an XL VM's throughput over a small VM's is 1 / its serial fraction (1 / 0.55 = 1.8x) once both are CPU-bound, so the claim checks that calibration, not the service"},
		ClientBound: "30 threads on one VM send batches as fast as its client can build them, and the figure compares what a small and an XL client can send"})

	vmFigure := func(id int, op workloads.OpKind, what string) workloads.Figure {
		var runs []workloads.FigureRun
		for _, p := range []string{"single partition", "multiple partitions"} {
			part := workloads.PartitionShared
			if p == "multiple partitions" {
				part = workloads.PartitionGUID
			}
			for _, n := range vmCounts8 {
				runs = append(runs, workloads.FigureRun{Series: p, X: n, Spec: spec(op, part, int(n), 15, vm.XL, 0), Long: part == workloads.PartitionShared && n >= 5})
			}
		}
		return workloads.Figure{ID: id, Title: fmt.Sprintf("Single entity %s throughput, single against multiple partitions, 15 threads per XL VM", what),
			XLabel: "XL VMs", YLabel: "entities/s", Chart: line, Metric: "entities-per-sec", Runs: runs,
			Choices:     []string{"VM counts 1, 2, 4, 5, 8, 10, 12 and 16", "single-partition runs from 5 VMs measure 5 minutes (quick: 2), so rare throttling is counted"},
			ClientBound: "15 threads keep an XL VM's client busy: over many partitions the service has room to spare, so each VM adds its client's capacity, and the single partition is what the service limits"}
	}
	add(vmFigure(8, workloads.OpInsert, "insert"))
	add(vmFigure(9, workloads.OpGet, "get"))

	threadFigure := func(id int, op workloads.OpKind, batch int, title string) workloads.Figure {
		var runs []workloads.FigureRun
		for _, sz := range bothSizes {
			for _, n := range threadSweep {
				runs = append(runs, workloads.FigureRun{Series: sizeSeries(sz), X: n, Spec: spec(op, workloads.PartitionGUID, 1, int(n), sz, batch)})
			}
		}
		return workloads.Figure{ID: id, Title: title, XLabel: "threads", YLabel: "entities/s", Chart: line, Metric: "entities-per-sec", Runs: runs,
			Choices:     []string{"thread counts 1, 2, 4, 6, 8, 10, 15, 20, 25 and 30"},
			ClientBound: "the figure measures where one VM's client CPU stops its throughput rising with threads"}
	}
	add(threadFigure(10, workloads.OpBatch, 100, "Throughput of batches of 100 to many partitions against threads on one VM"))
	add(threadFigure(11, workloads.OpGet, 0, "Single entity get throughput to many partitions against threads on one VM"))

	batchVMs := func(id, threads int) workloads.Figure {
		var runs []workloads.FigureRun
		for _, n := range vmCounts12 {
			runs = append(runs, workloads.FigureRun{Series: "small VMs", X: n, Spec: spec(workloads.OpBatch, workloads.PartitionGUID, int(n), threads, vm.Small, 100)})
		}
		return workloads.Figure{ID: id, Title: fmt.Sprintf("Throughput of batches of 100 to many partitions against VMs, %d threads per VM", threads),
			XLabel: "VMs", YLabel: "entities/s", Chart: line, Metric: "entities-per-sec", Runs: runs,
			Choices:     []string{"the VM size is not stated: small VMs, which make the published 17,000 entities/s consistent with Figure 10's small-VM plateau", "VM counts 1, 2, 4, 8, 12 and 16"},
			ClientBound: "each small VM's CPU limits it (Figure 10's plateau), and the figure shows throughput rising as VMs, and so clients, are added"}
	}
	f12, f13 := batchVMs(12, 15), batchVMs(13, 30)
	f12.Twin, f13.Twin = 13, 12
	f12.Coincide = "a small VM's CPU already limits it at 15 threads (Figure 10's plateau), so 30 threads per VM add nothing and Figures 12 and 13 measure the same"
	f13.Coincide = f12.Coincide
	add(f12)
	add(f13)

	var f14runs []workloads.FigureRun
	for _, sz := range bothSizes {
		for _, n := range vmCounts12 {
			f14runs = append(f14runs, workloads.FigureRun{Series: sizeSeries(sz), X: n, Spec: spec(workloads.OpGet, workloads.PartitionGUID, int(n), 30, sz, 0)})
		}
	}
	add(workloads.Figure{ID: 14, Title: "Single entity get throughput to many partitions against VMs, 30 threads per VM",
		XLabel: "VMs", YLabel: "entities/s", Chart: line, Metric: "entities-per-sec", Runs: f14runs,
		Choices:     []string{"VM counts 1, 2, 4, 8, 12 and 16"},
		ClientBound: "30 threads of gets saturate both sizes of VM, and the figure shows throughput growing with more client VMs, or larger ones"})

	var f15runs []workloads.FigureRun
	for n := 1; n <= 5; n++ {
		f15runs = append(f15runs, workloads.FigureRun{Series: "10 threads per VM", X: float64(10 * n), Spec: spec(workloads.OpBatch, workloads.PartitionShared, n, 10, vm.XL, 100), Long: true})
	}
	add(workloads.Figure{ID: 15, Title: "Saturation of a single partition with batches of 100 (10 threads per VM, 1 to 5 VMs)",
		XLabel: "threads in all", YLabel: "successful entities/s", Y2Label: "% of requests throttled",
		Chart: results.ChartDual, Metric: "saturation", Runs: f15runs,
		Choices: []string{"the VM size is not stated: XL VMs, so the partition rather than the client is what saturates", "each point measures 5 minutes (quick: 2)", "C15.1's \"almost no throttling\" is read as at most 3% of requests throttled, written before any result: the published chart's throttled line at 20 threads sits on the axis and cannot be read finer than a few percent", "the model's limit: under a rate cap and the 3 s pause the throttled shares at 30 and 50 threads rise and fall together, so the fit lands near 10% and 25% where 11% and 22% were published, inside both claims' 15% but near the edges"}})
	return figs
}

// Claims returns the published claims C3.1-C15.4, in figure order, each
// with the predicate that checks it. The readings were written before any
// result and are never retuned to pass.
func Claims() []Claim {
	figs := Figures()
	fig := map[int]*workloads.Figure{}
	for i := range figs {
		fig[figs[i].ID] = &figs[i]
	}
	f3, f4, f5, f6, f7 := fig[3], fig[4], fig[5], fig[6], fig[7]
	f8, f9, f10, f11, f12, f13, f14, f15 := fig[8], fig[9], fig[10], fig[11], fig[12], fig[13], fig[14], fig[15]

	latency := func(id string, f *workloads.Figure, series, text string, ms float64) Claim {
		x := f.Runs[0].X
		for _, fr := range f.Runs {
			if fr.Series == series {
				x = fr.X
			}
		}
		return Claim{ID: id, Figure: f.ID, Text: text, Value: RunStat(f, series, x, MedianLatency), Bound: Under(ms),
			Show:      []Quantity{RunStat(f, series, x, P90Latency), RunStat(f, series, x, P99Latency), RunStat(f, series, x, Requests)},
			Published: ms, Printed: true}
	}
	// rateAndThrottle: entities/s within 15% of perSec, with at most maxPct
	// of requests throttled.
	rateAndThrottle := func(id string, f *workloads.Figure, series string, x float64, text string, perSec, maxPct float64) Claim {
		return Claim{ID: id, Figure: f.ID, Text: text, Value: RunStat(f, series, x, EntitiesPerSec), Bound: Near(perSec, 0.15),
			Also:      []Condition{Holds("throttled", RunStat(f, series, x, ThrottledPct), AtMost(maxPct))},
			Why:       "\"~\" is read as within 15%",
			Show:      []Quantity{RunStat(f, series, x, Requests)},
			Published: perSec, Printed: true}
	}
	rising := func(id string, f *workloads.Figure) Claim {
		return Claim{ID: id, Figure: f.ID, Text: "Throughput keeps rising as VMs are added (Figure 10's plateau was the client).",
			Value: Growth(f, "small VMs", 1, 16), Bound: AtLeast(10),
			Also:      []Condition{Rising(f, "small VMs", vmCounts12, 0)},
			Published: 10, ClientModel: true}
	}
	partitions := []string{"single partition", "multiple partitions"}

	return []Claim{
		latency("C3.1", f3, "get", "Most gets complete under 40 ms.", 40),
		latency("C3.2", f3, "insert", "Most inserts complete under 50 ms.", 50),
		latency("C4.1", f4, "batch of 100", "Most batches of 100 complete within 1.2 s.", 1200),
		{ID: "C4.2", Figure: 4, Text: "100 entities in one batch finish far sooner than 100 single inserts sent one after another.",
			Value: Ratio(RunStat(f4, "batch of 100", 100, MeanLatency), Times(100, RunStat(f3, "insert", 1, MeanLatency))),
			Bound: AtMost(1.0 / 3), Published: 1.0 / 3},

		{ID: "C5.1", Figure: 5, Text: "Latency grows with batch size.",
			Value:     Lowest(Each(vmSeries, func(s string) Quantity { return Growth(f5, s, 1, 100) })),
			Bound:     AtLeast(5),
			Also:      []Condition{Rising(f5, "small VM", batchSizes, 0.02), Rising(f5, "XL VM", batchSizes, 0.02)},
			Published: 5},

		{ID: "C6.1", Figure: 6, Text: "The per-entity saving flattens out by a batch size of about 20.",
			Value: Highest(Each(vmSeries, func(s string) Quantity { return Fall(f6, s, 20, 100) })),
			Bound: AtMost(25),
			Also: []Condition{Holds("fall 1->20",
				Lowest(Each(vmSeries, func(s string) Quantity { return Fall(f6, s, 1, 20) })), AtLeast(70))},
			Published: 25},

		{ID: "C7.1", Figure: 7, Text: "The benefit of batching levels off around a batch size of 20.",
			Value: Lowest(Each(vmSeries, func(s string) Quantity { return ShareOf(f7, s, 20, 100) })),
			Bound: AtLeast(75),
			Also: []Condition{Holds("growth 1->20",
				Lowest(Each(vmSeries, func(s string) Quantity { return Growth(f7, s, 1, 20) })), AtLeast(3))},
			Published: 75},
		{ID: "C7.2", Figure: 7, Text: "An XL VM gives a little more than 1.5x the small VM's throughput.",
			Value: Mean(EachX(batchSizes, func(x float64) Quantity { return Ratio(Y(f7, "XL VM", x), Y(f7, "small VM", x)) })),
			Bound: Between(1.5, 1.9), Published: 1.5, Printed: true, ClientModel: true,
			Why: "\"a little more than 1.5 times\": the published number is a floor, and \"a little\" stops short of 2x"},

		rateAndThrottle("C8.1", f8, "single partition", 2, "A single partition served ~600 entities/s at 2 VMs, with no throttling.", 600, 0.001),
		rateAndThrottle("C8.2", f8, "single partition", 5, "A single partition served ~1,000 entities/s at 5 VMs, 0.0004% of requests throttled.", 1000, 0.005),
		{ID: "C8.3", Figure: 8, Text: "About 0.03% of requests were throttled at 10 VMs and 0.2% at 16 VMs.",
			Value: RunStat(f8, "single partition", 16, ThrottledPct), Bound: Near(0.2, 0.25),
			Why:       "the published shares are read to a factor of 2 where they are tiny, 25% where they are not",
			Also:      []Condition{Holds("at 10 VMs", RunStat(f8, "single partition", 10, ThrottledPct), WithinFactor(0.03, 2))},
			Show:      []Quantity{RunStat(f8, "single partition", 10, Requests), RunStat(f8, "single partition", 16, Requests)},
			Published: 0.2, Printed: true},
		{ID: "C8.4", Figure: 8, Text: "With multiple partitions throughput keeps scaling as VMs are added.",
			Value: Ratio(Y(f8, "multiple partitions", 16), Y(f8, "single partition", 16)), Bound: AtLeast(3),
			Also: []Condition{Rising(f8, "multiple partitions", vmCounts8, 0)}, Published: 3},

		{ID: "C9.1", Figure: 9, Text: "Gets over multiple partitions give more throughput than a single partition.",
			Value: Ratio(Y(f9, "multiple partitions", 16), Y(f9, "single partition", 16)), Bound: AtLeast(1.5),
			Also: []Condition{Above(f9, "multiple partitions", "single partition", vmCounts8, 0.02)}, Published: 1.5},
		{ID: "C9.2", Figure: 9, Text: "Gets give more throughput than inserts (Figure 8) at the same load.",
			Value: Lowest(Grid(partitions, vmCounts8, func(p string, x float64) Quantity { return Ratio(Y(f9, p, x), Y(f8, p, x)) })),
			Bound: AtLeast(0.98), Published: 1},

		{ID: "C10.1", Figure: 10, Text: "Throughput rises with threads.",
			Value: Lowest(Each(vmSeries, func(s string) Quantity { return Growth(f10, s, 1, 15) })),
			Bound: AtLeast(3), Published: 3},
		{ID: "C10.2", Figure: 10, Text: "The small VM flattens after ~15 threads (its CPU); the XL VM keeps rising.",
			Value: Gain(f10, "XL VM", 15, 30), Bound: AtLeast(15),
			Also: []Condition{Holds("small VM gain", Gain(f10, "small VM", 15, 30), AtMost(10))}, Published: 15},

		{ID: "C11.1", Figure: 11, Text: "The small VM levels off at about 6 threads.",
			Value: ShareOfPeak(f11, "small VM", 6, threadSweep), Bound: AtLeast(75),
			Also: []Condition{Holds("gain after 10", Gain(f11, "small VM", 10, 30), AtMost(10))}, Published: 75},

		rising("C12.1", f12),
		rising("C13.1", f13),
		{ID: "C13.2", Figure: 13, Text: "Batches reach ~17,000 entities/s, far above the account target.",
			Value: RunStat(f13, "small VMs", 16, EntitiesPerSec), Bound: Near(17000, 0.15),
			Also:      []Condition{Holds("throttled", RunStat(f13, "small VMs", 16, ThrottledPct), Under(0.01))},
			Published: 17000, Printed: true, ClientModel: true},

		{ID: "C14.1", Figure: 14, Text: "More VMs, or XL VMs instead of small ones, give more throughput.",
			Value:     Lowest(Each(vmSeries, func(s string) Quantity { return Growth(f14, s, 1, 16) })),
			Bound:     AtLeast(8),
			Also:      []Condition{Above(f14, "XL VM", "small VM", vmCounts12, 0)},
			Published: 8, ClientModel: true},

		rateAndThrottle("C15.1", f15, "10 threads per VM", 20, "~2,300 entities/s at 20 threads with almost no throttling.", 2300, 3),
		{ID: "C15.2", Figure: 15, Text: "Between 20 and 30 threads the partition begins to throttle ~11% of requests.",
			Value: RunStat(f15, "10 threads per VM", 30, ThrottledPct), Bound: Near(11, 0.15),
			Show:      []Quantity{RunStat(f15, "10 threads per VM", 30, Requests)},
			Published: 11, Printed: true},
		{ID: "C15.3", Figure: 15, Text: "At 50 threads ~2,500 entities/s succeed while ~22% of the ~3,200 entities/s sent are throttled.",
			Value: RunStat(f15, "10 threads per VM", 50, ThrottledPct), Bound: Near(22, 0.15),
			Also: []Condition{
				Holds("succeeding", RunStat(f15, "10 threads per VM", 50, EntitiesPerSec), Near(2500, 0.15)),
				Holds("sent", RunStat(f15, "10 threads per VM", 50, SentPerSec), Near(3200, 0.15)),
			},
			Published: 22, Printed: true},
		{ID: "C15.4", Figure: 15, Text: "The successful rate holds steady above ~2,300 entities/s as threads grow.",
			Value: Lowest(EachX([]float64{30, 40, 50}, func(x float64) Quantity { return RunStat(f15, "10 threads per VM", x, EntitiesPerSec) })),
			Bound: AtLeast(2185), Published: 2300, Printed: true, Why: "2,300 less 5% for the '~'"},
	}
}

// All returns the case study's figures and the experiments, in order.
func All() []workloads.Figure { return append(Figures(), Experiments()...) }

// Check checks the claims of the given figures against stored runs. A claim
// whose figures were not run is left out.
func Check(figs []workloads.Figure, runs []*results.Run) []results.CheckedClaim {
	m := workloads.NewMeasured(figs, runs)
	var out []results.CheckedClaim
	for _, c := range append(Claims(), ExperimentClaims()...) {
		if m.Figure(c.Figure) == nil {
			continue
		}
		if rc, ok := c.Check(m); ok {
			out = append(out, rc)
		}
	}
	return out
}
