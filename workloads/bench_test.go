package workloads_test

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHarnessOverhead reports the harness's own CPU per request: a
// run's CPU per request against the raw engine (profile none) less the CPU
// per request of bare engine inserts of the same entities, measured in the
// same process. Goal: under 1 µs.
func BenchmarkHarnessOverhead(b *testing.B) {
	const threads = 2
	const span = 500 * time.Millisecond
	var harnessNs, rawNs float64
	for b.Loop() {
		cfg := engine.DefaultConfig()
		cfg.Profile, cfg.PreSplit = engine.None(), 16
		// Bare engine inserts of entities shaped as the harness makes them.
		tg, err := enginetarget.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		e := tg.Engine()
		e.CreateTable(ctx, "raw")
		payload := string(make([]byte, 440))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var rawN int64
		c0 := cpuTime()
		deadline := time.Now().Add(span)
		for th := range threads {
			wg.Go(func() {
				pk := "c9da6455-213d-42c9-9a79-3e9149a5783" + strconv.Itoa(th)
				n := int64(0)
				for i := 0; time.Now().Before(deadline); i++ {
					if _, err := e.Client(nil).Insert(ctx, "raw", tables.Entity{PartitionKey: pk, RowKey: "tb_1_1_" + strconv.Itoa(1000000000+i),
						Properties: []tables.Property{tables.String("Payload", payload)}}); err != nil {
						b.Error(err)
						return
					}
					n++
				}
				mu.Lock()
				rawN += n
				mu.Unlock()
			})
		}
		wg.Wait()
		rawNs = float64(cpuTime()-c0) / float64(rawN)
		tg.Close()

		// The same inserts through a run.
		tg, _ = enginetarget.New(cfg)
		spec := workloads.DefaultSpec()
		spec.Threads, spec.Duration, spec.Warmup = threads, span, 0
		r, err := workloads.NewCoordinator(spec, tg)
		if err != nil {
			b.Fatal(err)
		}
		c0 = cpuTime()
		res, err := r.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		harnessNs = float64(cpuTime()-c0) / float64(res.Totals.Requests)
		tg.Close()
	}
	b.ReportMetric(rawNs, "raw-cpu-ns/req")
	b.ReportMetric(harnessNs, "run-cpu-ns/req")
	b.ReportMetric(harnessNs-rawNs, "harness-cpu-ns/req")
}

// instant is a target that answers every request at once: what a run costs
// against it is the harness's own cost.
type instant struct{ workloads.Target }

func (t instant) NewSession(uint64) workloads.Session { return instantSession{t.Clock()} }

type instantSession struct{ clock clock.Clock }

func (s instantSession) Do(_ context.Context, op *workloads.Op) (time.Time, error) {
	return s.clock.Now(), nil
}

// BenchmarkHarnessCost reports the harness's CPU per request: keys, entity,
// the request loop, recording and the once-a-second hand-off, against a
// target that costs nothing. Goal: under 1 µs.
func BenchmarkHarnessCost(b *testing.B) {
	for _, op := range []workloads.OpKind{workloads.OpInsert, workloads.OpGet, workloads.OpBatch} {
		b.Run(string(op), func(b *testing.B) {
			var ns float64
			for b.Loop() {
				cfg := engine.DefaultConfig()
				cfg.Profile = engine.None()
				tg, _ := enginetarget.New(cfg)
				spec := workloads.DefaultSpec()
				spec.Op, spec.BatchSize, spec.Threads, spec.Duration, spec.Warmup = op, 100, 2, 500*time.Millisecond, 0
				r, err := workloads.NewCoordinator(spec, instant{tg})
				if err != nil {
					b.Fatal(err)
				}
				c0 := cpuTime()
				res, err := r.Run(ctx)
				if err != nil {
					b.Fatal(err)
				}
				ns = float64(cpuTime()-c0) / float64(res.Totals.Requests)
				tg.Close()
			}
			b.ReportMetric(ns, "cpu-ns/req")
		})
	}
}
