// Package results holds what tablebench measures: per-worker recorders of
// HDR latency histograms and counters, the record of a run (its spec,
// environment, summary, per-second intervals and histograms, and where its
// load landed by PartitionKey, bounded whatever the keys), and the files a
// run is stored in (JSON and HdrHistogram interval logs that standard HDR
// tools read). Charts and reports are rebuilt from these records alone.
//
// In the data flow (spec -> coordinator -> target -> recorder -> results ->
// charts) it is the recorder and the results: workers hand it what each
// request did, and everything after reads what it stored.
package results
