package results_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
)

// BenchmarkRecord reports what recording a request costs, the collector's
// work included: over a thread's one key, and over a key per request.
func BenchmarkRecord(b *testing.B) {
	for _, keys := range []int{1, 1 << 20} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			pks := make([]string, min(keys, 1<<16))
			for i := range pks {
				pks[i] = fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15)
			}
			start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			span := 100 * time.Second
			col := results.NewCollector(start, start, start.Add(span))
			rec := col.Recorder(&results.Live{})
			c0 := cpuTime()
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				done := start.Add(time.Duration(i%1e7) * span / 1e7)
				rec.Record("insert", pks[i%len(pks)], 1, done, done, results.OutcomeOK, 0, false)
			}
			if _, err := col.Close(start.Add(span)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(n), "cpu-ns/req")
		})
	}
}

// BenchmarkRecordThreads reports what recording a request costs, the
// collector's work included, when many threads each send to their own
// key, as a simulated client does: every thread's recorder is written in
// turn, and the collector's deltas interleave threads.
func BenchmarkRecordThreads(b *testing.B) { benchmarkRecordThreads(b, false) }

// BenchmarkRecordAt is BenchmarkRecordThreads for a caller that keeps time
// from the run's start (RecordAt).
func BenchmarkRecordAt(b *testing.B) { benchmarkRecordThreads(b, true) }

func benchmarkRecordThreads(b *testing.B, at bool) {
	for _, threads := range []int{240, 15000} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			span := 100 * time.Second
			col := results.NewCollector(start, start, start.Add(span))
			recs := make([]*results.Recorder, threads)
			pks := make([]string, threads)
			for i := range recs {
				recs[i] = col.Recorder(&results.Live{})
				pks[i] = fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15)
			}
			c0 := cpuTime()
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				t := i % threads
				done := start.Add(time.Duration(i%1e7) * span / 1e7)
				outcome := results.OutcomeOK
				if i%16 == 0 {
					outcome = results.OutcomeThrottled
				}
				if at {
					off := done.Sub(start)
					recs[t].RecordAt("insert", pks[t], 1, off-time.Millisecond, off, outcome, 0, false)
				} else {
					recs[t].Record("insert", pks[t], 1, done.Add(-time.Millisecond), done, outcome, 0, false)
				}
			}
			if _, err := col.Close(start.Add(span)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(n), "cpu-ns/req")
		})
	}
}

// cpuTime is the process's CPU time: on a busy machine it measures the
// work better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecordOpen reports what recording a request costs, the
// collector's work included, for an open load over a fixed key space: a
// thousand threads take requests in turn, each to a key drawn from ten
// thousand, more than the collector counts at once.
func BenchmarkRecordOpen(b *testing.B) {
	const threads, keys = 1000, 10000
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	span := 100 * time.Second
	col := results.NewCollector(start, start, start.Add(span))
	recs := make([]*results.Recorder, threads)
	for i := range recs {
		recs[i] = col.Recorder(&results.Live{})
	}
	pks := make([]string, keys)
	for i := range pks {
		pks[i] = fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c0 := cpuTime()
	n := 0
	for i := 0; b.Loop(); i++ {
		n++
		off := time.Duration(i%1e7) * span / 1e7
		outcome := results.OutcomeOK
		if i%16 == 0 {
			outcome = results.OutcomeThrottled
		}
		recs[i%threads].RecordAt("insert", pks[rng.IntN(keys)], 1, off-time.Millisecond, off, outcome, 0, false)
	}
	if _, err := col.Close(start.Add(span)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(n), "cpu-ns/req")
}
