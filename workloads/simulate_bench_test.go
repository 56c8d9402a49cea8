package workloads_test

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// simulate runs spec on a fresh engine with profile p in virtual time, as
// `tablebench run` does, and returns the requests it measured and the CPU
// the run took. When probeAt > 0, it also returns the memory the process
// holds (live heap and goroutine stacks, after a collection) once probeAt
// requests have been sent: every thread is running then, and the store
// holds only a few entities each.
func simulate(b *testing.B, p engine.Profile, spec workloads.Spec, probeAt int64) (requests int64, cpu time.Duration, held uint64) {
	b.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.Seed, cfg.PreSplit = p, spec.Seed, p.SteadySplit()
	cfg.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	tg, err := enginetarget.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	var target workloads.Target = tg
	pr := &probe{Target: tg, at: probeAt}
	if probeAt > 0 {
		target = pr
	}
	r, err := workloads.NewCoordinator(spec, target)
	if err != nil {
		b.Fatal(err)
	}
	c0 := processCPU()
	res, err := r.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if probeAt > 0 && pr.held == 0 {
		b.Fatalf("%d threads sent %d requests, fewer than the %d to measure at: lengthen the run", spec.VMs*spec.Threads, pr.sent, probeAt)
	}
	return res.Totals.Requests, processCPU() - c0, pr.held
}

// processCPU is the CPU the process has used, user and system. (This file
// is also built against earlier releases, whose benchmarks name theirs
// differently, so it has its own.)
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// probe is the engine as a target that measures the process's memory when
// its at'th request is sent. In virtual time one participant runs at a
// time, so its count needs no lock.
type probe struct {
	*enginetarget.Target
	at, sent int64
	held     uint64
}

func (p *probe) NewSession(seed uint64) workloads.Session {
	return &probeSession{p: p, s: p.Target.NewSession(seed)}
}

type probeSession struct {
	p *probe
	s workloads.Session
}

func (s *probeSession) Do(ctx context.Context, op *workloads.Op) (time.Time, error) {
	s.count()
	return s.s.Do(ctx, op)
}

// Send is the engine session's own, when it has one: threads then run as
// the virtual clock's tasks, as they do without the probe.
func (s *probeSession) Send(ctx context.Context, op *workloads.Op) (time.Time, error) {
	s.count()
	return s.s.(interface {
		Send(context.Context, *workloads.Op) (time.Time, error)
	}).Send(ctx, op)
}

func (s *probeSession) count() {
	if s.p.sent++; s.p.sent == s.p.at {
		s.p.held = heldBytes()
	}
}

// heapProfileEnv names a file for a heap profile taken where
// BenchmarkSimulateMemory measures (a benchmark's -memprofile is taken at
// its end, when the run's threads are gone): what a thread holds, by
// where it was allocated.
const heapProfileEnv = "TABLEBENCH_SIMULATE_HEAPPROFILE"

// heldBytes is the live heap and the goroutine stacks after a collection.
func heldBytes() uint64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(m)
	if f := os.Getenv(heapProfileEnv); f != "" {
		out, _ := os.Create(f)
		pprof.WriteHeapProfile(out)
		out.Close()
	}
	return m[0].Value.Uint64() + m[1].Value.Uint64()
}

// simSpec is a closed-loop run of single inserts, one GUID partition per
// thread, 15 threads per VM: the shape of the case study's scaling runs.
func simSpec(threads int, warmup, duration time.Duration) workloads.Spec {
	spec := workloads.DefaultSpec()
	spec.VMs, spec.Threads = threads/15, 15
	spec.Warmup, spec.Duration = warmup, duration
	return spec
}

// BenchmarkSimulate reports what the engine costs as a simulator in
// virtual time: simulated requests (those measured) per CPU-second of the
// whole run, at 240, 3,840 and 15,000 simulated threads, for each
// calibrated profile. Goal: a million, and no worse than 1.5 times less
// at 15,000 threads than at 240.
func BenchmarkSimulate(b *testing.B) {
	for _, p := range []engine.Profile{engine.Modern(), engine.WA2010()} {
		for _, threads := range []int{240, 3840, 15000} {
			b.Run(p.Name+"/threads="+strconv.Itoa(threads), func(b *testing.B) {
				var reqs int64
				var cpu time.Duration
				for b.Loop() {
					n, c, _ := simulate(b, p, simSpec(threads, 2*time.Second, 10*time.Second), 0)
					reqs, cpu = reqs+n, cpu+c
				}
				b.ReportMetric(float64(reqs)/cpu.Seconds(), "sim-req/cpu-s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkSimulateMemory reports the memory one simulated thread holds:
// the live heap and stacks of a run of 15,000 threads less those of one of
// 240, measured once each thread has sent two requests on average, per
// thread between them. Goal: 4 KB.
func BenchmarkSimulateMemory(b *testing.B) {
	const small, large = 240, 15000
	var perThread float64
	for b.Loop() {
		var held [2]uint64
		for i, threads := range []int{small, large} {
			_, _, held[i] = simulate(b, engine.Modern(), simSpec(threads, 0, time.Second), 2*int64(threads))
		}
		perThread = (float64(held[1]) - float64(held[0])) / (large - small)
	}
	b.ReportMetric(perThread, "bytes/thread")
	b.ReportMetric(0, "ns/op")
}
