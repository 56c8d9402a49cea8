package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// TestSetRatesWhileServing: a partition rate set while the engine serves
// caps one PartitionKey of a modelled profile at that rate, the rest refused
// with 503 ServerBusy; the rate can be raised again.
func TestSetRatesWhileServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRaw(t, func(c *engine.Config) { c.Profile = engine.WA2010(); c.PreSplit = 64 })
		phase := 0
		served := func(rate float64, d time.Duration) (ok, busy int) {
			phase++
			if err := e.SetRates(engine.Rates{Partition: rate, Account: 20000}); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			deadline := time.Now().Add(d)
			for w := range 60 {
				wg.Go(func() {
					for i := 0; time.Now().Before(deadline); i++ {
						_, err := e.Client(nil).Insert(ctx, "people", ent("hot", fmt.Sprintf("%d-%d-%d", phase, w, i)))
						mu.Lock()
						if err == nil {
							ok++
						} else if te, isTE := tables.AsError(err); isTE && te.Code == tables.CodeServerBusy {
							busy++
						} else {
							t.Errorf("unexpected %v", err)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return ok, busy
		}
		served(100, 5*time.Second) // spend what the key saved up
		ok, busy := served(100, 20*time.Second)
		if r := float64(ok) / 20; r < 90 || r > 110 || busy == 0 {
			t.Fatalf("at 100/s: %.0f entities/s served, %d refused", r, busy)
		}
		served(300, 5*time.Second)
		ok, _ = served(300, 20*time.Second)
		if r := float64(ok) / 20; r < 270 || r > 330 {
			t.Fatalf("raised to 300/s: %.0f entities/s served", r)
		}
		if err := e.SetRates(engine.Rates{Partition: -1}); err == nil {
			t.Fatal("a negative rate was taken")
		}
	})
}

// TestMakeUnavailable: a partition made unavailable refuses requests while
// it is away, under the profile without a model too, and serves after.
func TestMakeUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRaw(t)
		if err := e.MakeUnavailable("people", "p", 10*time.Second); err != nil {
			t.Fatal(err)
		}
		_, err := e.Client(nil).Insert(ctx, "people", ent("p", "1"))
		wantCode(t, err, 503, tables.CodeServerBusy)
		time.Sleep(11 * time.Second)
		_, err = e.Client(nil).Insert(ctx, "people", ent("p", "1"))
		wantCode(t, err, 0, "")
		if err := e.MakeUnavailable("nosuch", "p", time.Second); err == nil {
			t.Fatal("a table that does not exist was made unavailable")
		}
	})
}

// TestLatencyScale: a scaled profile answers an unloaded request that many
// times slower, and serves as much.
func TestLatencyScale(t *testing.T) {
	mean := func(f float64) time.Duration {
		var d time.Duration
		synctest.Test(t, func(t *testing.T) {
			e := newRaw(t, func(c *engine.Config) { c.Profile = engine.WA2010().ScaleLatency(f); c.PreSplit = 64 })
			e.Client(nil).Insert(ctx, "people", ent("p", "r"))
			start := time.Now()
			for range 200 {
				if _, err := e.Client(nil).Get(ctx, "people", "p", "r", nil); err != nil {
					t.Fatal(err)
				}
			}
			d = time.Since(start) / 200
		})
		return d
	}
	one, three := mean(1), mean(3)
	if r := float64(three) / float64(one); r < 2.7 || r > 3.1 {
		t.Fatalf("unloaded get: %v at scale 1, %v at scale 3 (%.2fx)", one, three, r)
	}
}
