// Package results holds what tablebench measures: per-worker recorders of
// HDR latency histograms and counters, the record of a run (its spec,
// environment, summary, per-second intervals and histograms), and the files a
// run is stored in (JSON and HdrHistogram interval logs that standard HDR
// tools read). Charts and reports are rebuilt from these records alone.
package results
