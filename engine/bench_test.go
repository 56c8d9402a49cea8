package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// The raw engine's speed: the none profile, in process, with parallelism.

func benchEngine(b *testing.B) *engine.Engine {
	b.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	cfg.PreSplit = 16
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if err := e.CreateTable(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	return e
}

var payload1K = strings.Repeat("x", 1024)

func BenchmarkInsert(b *testing.B) {
	e := benchEngine(b)
	var worker atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		pk := uuid.NewString()
		prefix := "tb_" + strconv.FormatInt(worker.Add(1), 10) + "_"
		props := []tables.Property{tables.String("Payload", payload1K)}
		i := 0
		for pb.Next() { // keys as cheaply as a client could make them: the engine is what is measured
			if _, err := e.Client(nil).Insert(ctx, "bench", tables.Entity{PartitionKey: pk, RowKey: prefix + strconv.Itoa(i), Properties: props}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkGet reads random entities of 100,000 in 64 PartitionKeys. Each
// goroutine makes its keys in one buffer, as cheaply as a client holding
// the key it asks for could: the engine is what is measured. A table of
// every key added two cache misses of the benchmark's own to each get.
func BenchmarkGet(b *testing.B) {
	e := benchEngine(b)
	const n = 100_000
	pks := make([]string, 64)
	for i := range pks {
		pks[i] = uuid.NewString()
	}
	for i := range n {
		e.Client(nil).Insert(ctx, "bench", ent(pks[i%len(pks)], fmt.Sprintf("r%06d", i), tables.String("Payload", payload1K)))
	}
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 0))
		rk := []byte("r000000")
		for pb.Next() {
			i := rng.IntN(n)
			for j, v := len(rk)-1, i; j > 0; j, v = j-1, v/10 {
				rk[j] = byte('0' + v%10)
			}
			if _, err := e.Client(nil).Get(ctx, "bench", pks[i%len(pks)], string(rk), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBatch100 reports entities/s of batch-100 inserts.
func BenchmarkBatch100(b *testing.B) {
	e := benchEngine(b)
	var worker atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		pk := uuid.NewString()
		prefix := strconv.FormatInt(worker.Add(1), 10) + "_"
		i := 0
		ops := make([]tables.BatchOp, 100)
		for pb.Next() { // keys as in BenchmarkInsert, not padded: many land inside a leaf
			for j := range ops {
				ops[j] = tables.BatchOp{Kind: tables.BatchInsert, Entity: ent(pk, prefix+strconv.Itoa(i), tables.String("Payload", payload1K))}
				i++
			}
			if _, err := e.Client(nil).Batch(ctx, "bench", ops); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkMemoryPerEntity reports the heap one stored entity with a 1 KiB
// payload string takes, keys and index included. Such an entity weighs
// about 2.1 KiB by the service's size formula, which counts two bytes a
// character. Its RowKeys are not padded (job_1_7_10 sorts before job_1_7_9),
// so most writes land inside the key range, not at its end.
func BenchmarkMemoryPerEntity(b *testing.B) {
	pk := uuid.NewString()
	memoryPerEntity(b, func(i int) tables.Entity {
		p := []byte(payload1K) // each entity its own payload, as from the wire
		return ent(pk, fmt.Sprintf("job_1_7_%d", i), tables.String("Payload", string(p)))
	})
}

// BenchmarkMemoryPerStoredEntity reports the heap of one entity as `run
// --entity-size 1024` writes it: 1 KiB by the service's size formula, a
// GUID PartitionKey, a RowKey JobID_VMID_WorkerID_Index and a Payload
// string of 444 characters, each entity its own as from the wire.
func BenchmarkMemoryPerStoredEntity(b *testing.B) {
	pk := uuid.NewString()
	const rkLen = len("tb_1_7_") + 10
	n := (1024 - 4 - 2*(len(pk)+rkLen) - 8 - 2*len("Payload") - 4) / 2
	payload := strings.Repeat("x", n)
	memoryPerEntity(b, func(i int) tables.Entity {
		p := []byte(payload)
		e := ent(pk, fmt.Sprintf("tb_1_7_%010d", i), tables.String("Payload", string(p)))
		if size := e.Size(); size != 1024 {
			b.Fatalf("the entity weighs %d bytes, not 1024", size)
		}
		return e
	})
}

// BenchmarkMemoryPerKey reports the heap of an entity that is its
// PartitionKey's only one, as the append and prepend schemes write them:
// what a key's rows cost beside the entity, with a payload shared by
// every write as a run's are.
func BenchmarkMemoryPerKey(b *testing.B) {
	payload := tables.String("Payload", strings.Repeat("x", 444))
	memoryPerEntity(b, func(i int) tables.Entity {
		return ent(fmt.Sprintf("k%019d", i), "tb_1_7_0000000001", payload)
	})
}

// memoryPerEntity stores 200,000 entities made by mk and reports the heap
// they take, per entity.
func memoryPerEntity(b *testing.B, mk func(i int) tables.Entity) {
	const n = 200_000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		e := benchEngine(b)
		for i := range n {
			if _, err := e.Client(nil).Insert(ctx, "bench", mk(i)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/entity")
		runtime.KeepAlive(e)
	}
}

// stepClock is a clock the benchmark moves itself: the model's cost
// without a scheduler's. It takes a lock to read, as the virtual clock does.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *stepClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.set(t)
	return nil
}

// BenchmarkModelInsert is the model's cost of an insert, the path a
// simulated request takes under the modern profile: 240 callers, each
// with its own GUID PartitionKey and ascending RowKeys as the simulator
// makes them, send entities of
// under 1 KiB at 15,000 a second (below the account's budget) to a table
// pre-split as the simulator's are. The callers do not wait, so what is
// measured is the engine alone.
func BenchmarkModelInsert(b *testing.B) {
	clk := &stepClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.Modern()
	cfg.PreSplit = cfg.Profile.SteadySplit()
	cfg.Clock = clk
	cfg.Balancer.Enabled = false
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTable(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	const callers = 240
	type caller struct {
		call engine.Call
		cl   engine.Client
		pk   string
		rk   []byte // the RowKey's prefix, then its padded index
		n    int
	}
	cs := make([]caller, callers)
	var props [8][]tables.Property // each caller cycles through eight, as the simulator's threads do
	for i := range props {
		props[i] = []tables.Property{tables.String("Payload", strings.Repeat(string(rune('a'+i)), 400))}
	}
	for i := range cs {
		c := &cs[i]
		c.call = engine.Call{Rand: rand.New(rand.NewPCG(uint64(i), 1)), Detach: true}
		c.cl = e.Client(&c.call)
		c.pk = uuid.NewString()
		c.rk = []byte("tb_1_" + strconv.Itoa(i) + "_0000000000")
	}
	start := clk.Now()
	refused := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c := &cs[i%callers]
		at := start.Add(time.Duration(i) * (time.Second / 15000))
		clk.set(at)
		c.call.Arrival = at
		c.n++
		for j, v := len(c.rk)-1, c.n; v > 0; j, v = j-1, v/10 {
			c.rk[j] = byte('0' + v%10)
		}
		if _, err := c.cl.Insert(ctx, "bench", tables.Entity{PartitionKey: c.pk, RowKey: string(c.rk), Properties: props[c.n%len(props)]}); err != nil {
			refused++
		}
	}
	b.ReportMetric(100*float64(refused)/float64(b.N), "%refused")
}
