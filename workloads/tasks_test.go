package workloads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// goroutineTarget is the engine whose sessions hide Send: its threads
// then run as a goroutine each, as every thread did before they were the
// clock's tasks.
type goroutineTarget struct{ *enginetarget.Target }

func (t goroutineTarget) NewSession(seed uint64) workloads.Session {
	return struct{ workloads.Session }{t.Target.NewSession(seed)}
}

// virtualRecord runs spec on an engine on a virtual clock of its own, its
// threads as tasks or as goroutines, and returns its record.
func virtualRecord(t *testing.T, spec workloads.Spec, profile engine.Profile, asTasks bool, partitionRate float64) []byte {
	t.Helper()
	vc := clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	tg := engineTarget(t, func(c *engine.Config) {
		c.Clock, c.Profile, c.Seed, c.PartitionRate = vc, profile, spec.Seed, partitionRate
	})
	var target workloads.Target = tg
	if !asTasks {
		target = goroutineTarget{tg}
	}
	res := run(t, spec, target)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTasksRecordAsGoroutines: a run whose threads are the virtual clock's
// tasks records byte for byte what it records with a goroutine per
// thread, through every branch of a thread's loop: retries and their
// backoff, retry-after, the pause after an error, client timeouts, an
// insert's read-back of its transaction id, an update's read then write,
// and open load's arrivals, dropped or queued.
func TestTasksRecordAsGoroutines(t *testing.T) {
	base := func() workloads.Spec {
		s := workloads.DefaultSpec()
		s.Warmup, s.Duration, s.Seed = time.Second, 8*time.Second, 7
		return s
	}
	cases := map[string]func() (workloads.Spec, engine.Profile){
		"txn-id read-back after client timeouts": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.Threads = workloads.OpInsert, workloads.PartitionGUID, 10
			s.Retry = workloads.Retry{Policy: workloads.RetryFixed, MaxRetries: 3, Delay: 100 * time.Millisecond}
			s.RequestTimeout, s.TxnID = 50*time.Millisecond, true
			return s, engine.WA2010()
		},
		"no retry, pause after throttling": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionShared, 4, 30
			s.Retry = workloads.Retry{Policy: workloads.RetryNone, Pause: 3 * time.Second}
			s.RequestTimeout = 0
			return s, engine.WA2010()
		},
		"sdk retries with retry-after": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionShared, 4, 40
			s.Retry = workloads.Retry{Policy: workloads.RetrySDK, MaxRetries: 3, Delay: 800 * time.Millisecond, MaxBackoff: 60 * time.Second}
			return s, engine.Cosmos()
		},
		"exponential backoff": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionShared, 4, 30
			s.Retry = workloads.Retry{Policy: workloads.RetryExponential, MaxRetries: 3, Delay: 100 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 5 * time.Second}
			return s, engine.WA2010()
		},
		"open load, queued": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionGUID, 2, 5
			s.Load, s.Rate, s.Overload = workloads.LoadOpen, 2000, workloads.OverloadQueue
			return s, engine.Modern()
		},
		"warmed: more threads than a clock runs cold": func() (workloads.Spec, engine.Profile) {
			// From 3,000 tasks on the clock warms each thread before its
			// steps, in two stages (clock.DeepWarmer); threads as goroutines
			// are never warmed.
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionGUID, 201, 15
			s.Warmup, s.Duration = 200*time.Millisecond, time.Second
			return s, engine.Modern()
		},
		"open load, dropped, sparse": func() (workloads.Spec, engine.Profile) {
			s := base()
			s.Op, s.Partition, s.VMs, s.Threads = workloads.OpInsert, workloads.PartitionGUID, 1, 3
			s.Load, s.Rate = workloads.LoadOpen, 20
			return s, engine.Modern()
		},
	}
	for _, preset := range []string{"ycsb-f", "ycsb-e"} {
		cases[preset] = func() (workloads.Spec, engine.Profile) {
			p, err := workloads.LookupPreset(preset)
			if err != nil {
				t.Fatal(err)
			}
			pw, err := workloads.ParseWorkload([]byte(p.File))
			if err != nil {
				t.Fatal(err)
			}
			s, err := pw.Spec(base())
			if err != nil {
				t.Fatal(err)
			}
			s.Warmup, s.Duration, s.Threads = time.Second, 8*time.Second, 8
			s.Retry = workloads.Retry{Policy: workloads.RetrySDK, MaxRetries: 3, Delay: 800 * time.Millisecond, MaxBackoff: 60 * time.Second}
			return s, engine.Modern()
		}
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			spec, profile := mk()
			tasks := virtualRecord(t, spec, profile, true, 300)
			goroutines := virtualRecord(t, spec, profile, false, 300)
			if !bytes.Equal(tasks, goroutines) {
				t.Fatalf("tasks recorded\n%.3000s\ngoroutines recorded\n%.3000s", tasks, goroutines)
			}
			var res struct {
				Totals map[string]any `json:"totals"`
			}
			json.Unmarshal(tasks, &res)
			if res.Totals["requests"] == nil {
				t.Fatalf("nothing measured: %.500s", tasks)
			}
		})
	}
}

// TestEngineLocksAgainAfterARun: while a run's threads are the clock's
// tasks, the engine takes no locks (engine.Engine.Unshared); once the run
// is over it must lock again, for whatever calls it next from goroutines
// of its own. Under -race, an engine left unlocked fails this test.
func TestEngineLocksAgainAfterARun(t *testing.T) {
	vc := clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	tg := engineTarget(t, func(c *engine.Config) { c.Clock, c.Profile, c.Seed = vc, engine.Modern(), 3 })
	spec := workloads.DefaultSpec()
	spec.Op, spec.Partition, spec.VMs, spec.Threads = workloads.OpInsert, workloads.PartitionShared, 2, 5
	spec.Warmup, spec.Duration, spec.Table = time.Second, 2*time.Second, "shared"
	spec.KeepTable = true
	run(t, spec, tg)
	e := tg.Engine()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := e.Client(&engine.Call{Detach: true})
			for i := range 50 {
				ent := tables.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("after-%d-%d", g, i)}
				if _, err := cl.Insert(context.Background(), "shared", ent); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
