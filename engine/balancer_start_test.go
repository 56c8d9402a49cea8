package engine_test

import (
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
)

// TestBalancerTicksFromTheEnginesStart checks that on a virtual clock the
// balancer ticks every interval from the model time the engine was made,
// however late its goroutine first runs while a participant drives time.
func TestBalancerTicksFromTheEnginesStart(t *testing.T) {
	start := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	c := clock.NewVirtual(start)
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.Clock = engine.WA2010(), c
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	driven := make(chan struct{})
	c.Hold(1)
	c.Go(func() { // an hour, a second at a time, as fast as the CPU allows
		defer close(driven)
		for s := 1; s <= 3600; s++ {
			c.SleepUntil(ctx, start.Add(time.Duration(s)*time.Second))
		}
	})
	c.Release()
	<-driven
	e.Close()
	snaps := e.Snapshots()
	interval := cfg.Balancer.Interval
	if len(snaps) != int(time.Hour/interval) {
		t.Fatalf("%d balancer ticks in an hour, want %d", len(snaps), time.Hour/interval)
	}
	for i, s := range snaps {
		if want := start.Add(time.Duration(i+1) * interval); !s.Time.Equal(want) {
			t.Fatalf("tick %d at %v, want %v", i+1, s.Time.Sub(start), want.Sub(start))
		}
	}
}
