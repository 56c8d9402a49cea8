package casestudy

import (
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/vm"
)

// The cosmos experiment: the DocumentDB partitioning document's claims
// (seed 002, "Partitioning and scaling in Azure DocumentDB"), on the
// engine's cosmos profile, figures 251 to 253. The Table service's loads
// under it sit beside wa2010 and modern in the modern experiment's
// figures 241 and 242.

// ExpCosmos names the cosmos experiment, for --only.
const ExpCosmos = "cosmos"

// Series of the hot-key experiment.
const (
	hotKey   = "one PartitionKey"
	manyKeys = "GUID PartitionKeys"
	pointGet = "1 KB point read"
	insert1K = "1 KB insert"
)

// cosmosRU is the hot-key experiment's provisioned throughput: five
// physical partitions of 10,000 RU/s, so one key's partition holds a
// fifth of it.
const cosmosRU = 50000

// cosmosVMs are the hot-key experiment's XL VMs of 10 threads: one
// saturates a physical partition with batches of 100; eight can send
// more than the table's 50,000 RU/s.
var cosmosVMs = []float64{1, 2, 4, 8}

// cosmosExperiments returns the cosmos experiment's figures.
func cosmosExperiments() []workloads.Figure {
	engine := workloads.EngineSetup{Profile: "cosmos", RU: cosmosRU}
	var runs []workloads.FigureRun
	for i, series := range []string{hotKey, manyKeys} {
		part := []workloads.PartitionScheme{workloads.PartitionShared, workloads.PartitionGUID}[i]
		for _, n := range cosmosVMs {
			s := withClient(spec(workloads.OpBatch, part, int(n), 10, vm.XL, 100), "cosmos")
			runs = append(runs, workloads.FigureRun{Series: series, X: n, Spec: s, Engine: engine})
		}
	}
	choices := []string{"50,000 RU/s provisioned: five physical partitions of 10,000 RU/s, the most one serves (Azure Cosmos DB service quotas)",
		"batches of 100 entities of 1 KB (500 RU each) from VMs of today's client (4 vCPUs, the SDK's retries) of 10 threads, into one PartitionKey or a GUID key per batch",
		"today's SDK retry policy, which waits what each 429's x-ms-retry-after-ms says"}
	get := withClient(spec(workloads.OpGet, workloads.PartitionGUID, 1, 10, vm.XL, 0), "cosmos")
	ins := withClient(spec(workloads.OpInsert, workloads.PartitionGUID, 1, 10, vm.XL, 0), "cosmos")
	return []workloads.Figure{
		{ID: 251, Title: "Cosmos DB: one hot PartitionKey against many, at 50,000 RU/s", XLabel: "XL VMs (10 threads each)", YLabel: "successful entities/s",
			Chart: results.ChartLine, Metric: "entities-per-sec", Runs: runs, Choices: choices,
			ClientBound: "measured through the 2010 client model, whose XL VM of 10 threads sends about 2,100 entities/s in batches of 100: one VM saturates a physical partition's 10,000 RU/s, and eight send more than the table's 50,000"},
		{ID: 252, Title: "Cosmos DB: request units charged per second, one hot PartitionKey against many", XLabel: "XL VMs (10 threads each)", YLabel: "RU/s",
			Chart: results.ChartLine, Metric: "request-units-per-sec", From: 251},
		{ID: 253, Title: "Cosmos DB: request units charged per request, 1 KB entities", XLabel: "XL VMs", YLabel: "RU per request",
			Chart: results.ChartLine, Metric: "request-units-per-request",
			Runs: []workloads.FigureRun{
				{Series: pointGet, X: 1, Spec: get, Engine: workloads.EngineSetup{Profile: "cosmos"}},
				{Series: insert1K, X: 1, Spec: ins, Engine: workloads.EngineSetup{Profile: "cosmos"}},
			},
			Choices:     []string{"single point reads and single inserts of the harness's 1 KB entities from one XL VM of 10 threads, at the cosmos profile's 100,000 RU/s"},
			ClientBound: "the 2010 client model limits how many requests one VM sends, not what each is charged"},
	}
}

// cosmosClaims returns the cosmos experiment's claims, written from the
// DocumentDB partitioning document and the Cosmos DB documentation, and
// the Table service's targets on the cosmos profile.
func cosmosClaims(fig map[int]*workloads.Figure) []Claim {
	f241, f242, f251, f253 := fig[241], fig[242], fig[251], fig[253]
	share := 10000.0 / 5 // a physical partition's RU/s in 1 KB writes/s
	return []Claim{
		{ID: "X6.1", Figure: 251,
			Text:  "The throughput is distributed evenly among the available partitions: the throughput per partition = (total throughput per collection) / (number of partitions).",
			Value: Y(f251, hotKey, 8), Bound: Near(share, 0.1), Published: share,
			Also: []Condition{
				Holds("throttled", RunStat(f251, hotKey, 8, ThrottledPct), AtLeast(1)),
				Holds("the share of the collection's RU/s charged", ofProvisioned(RunStat(f251, hotKey, 8, RUPerSec)), AtMost(0.25)),
			},
			Why: "one PartitionKey is served its physical partition's 10,000 RU/s, 2,000 writes of 1 KB a second, within 10%, and is throttled, while the collection's other four fifths go unused"},
		{ID: "X6.2", Figure: 251,
			Text:  "In order to achieve the full throughput of the collection, you must choose a partition key that allows you to evenly distribute requests among a number of distinct partition key values.",
			Value: ofProvisioned(RunStat(f251, manyKeys, 8, RUPerSec)), Bound: AtLeast(0.9),
			Also: []Condition{Holds("against one key", Ratio(Y(f251, manyKeys, 8), Y(f251, hotKey, 8)), AtLeast(4))},
			Why:  "the same load over GUID keys is charged at least 90% of the provisioned 50,000 RU/s, and serves at least four times what one key does"},
		{ID: "X6.3", Figure: 253,
			Text:  "A read of a 1 kB document with Session consistency consumes 1 request unit.",
			Value: RunStat(f253, pointGet, 1, RUPerRequest), Bound: Near(1, 0.05), Published: 1, Printed: true,
			Also: []Condition{Holds("a 1 KB write", RunStat(f253, insert1K, 1, RUPerRequest), Near(5, 0.05))},
			Why:  "the harness's 1 KB entities, read by key, and written (5 RU, \"Optimize reads and writes cost in Azure Cosmos DB\")"},
		{ID: "X6.4", Figure: 242,
			Text:  "Provisioned at the Table service's targets (20,000 entities/s of 1 KB writes, 100,000 RU/s at 5 RU each), one partition key serves the Table service's per-partition target, 2,000 entities/s.",
			Value: Y(f242, "cosmos", 50), Bound: Near(2000, 0.15), Published: 2000,
			Also: []Condition{Holds("single inserts from 16 VMs (Figure 8's load)", Y(f241, "cosmos", 16), Near(2000, 0.15))},
			Why:  "Figure 15's heaviest load and Figure 8's largest on the cosmos profile: a physical partition's 10,000 RU/s are 2,000 writes of 1 KB a second"},
	}
}

// ofProvisioned is q, in RU/s, as a share of the hot-key experiment's
// provisioned throughput.
func ofProvisioned(q Quantity) Quantity {
	return Quantity{text: q.text + " over the 50,000 RU/s provisioned", unit: "x", figs: q.figs,
		eval: func(m workloads.Measured) (float64, bool) {
			v, ok := q.eval(m)
			return v / cosmosRU, ok
		}}
}

// cosmosNote says how the cosmos series of the modern experiment's
// figures are set up.
const cosmosNote = "cosmos is provisioned at the Table service's account target in request units: 20,000 entities/s of 1 KB writes at 5 RU each is 100,000 RU/s, ten physical partitions of 10,000 RU/s, each 2,000 writes/s, the per-partition target; its clients retry as today's SDK does, waiting what each 429's x-ms-retry-after-ms says (the study's 3 s pause after every refusal, against budgets that refill each second, leaves half a partition's share unused: docs/cosmos.md)"
