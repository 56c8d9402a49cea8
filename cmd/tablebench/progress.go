package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tablebench/tablebench/engine/clock"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// startProgress shows a run's progress on w: elapsed model time, entities/s
// and the throttled share overall and per VM. It returns a function that
// stops it.
func startProgress(w io.Writer, runner *workloads.Runner, clock clock.Clock, total time.Duration) func() {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond))
	start := clock.Now()
	lives := runner.Live()
	var mu sync.Mutex
	text := make([]string, len(lives)+1)
	main := p.New(int64(total/time.Millisecond), mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("run ", decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { mu.Lock(); defer mu.Unlock(); return text[0] })))
	var vmBars []*mpb.Bar
	if len(lives) > 1 && len(lives) <= 16 {
		for i := range lives {
			vmBars = append(vmBars, p.New(0, mpb.NopStyle(),
				mpb.PrependDecorators(decor.Name(fmt.Sprintf("VM %d", i+1), decor.WCSyncSpaceR)),
				mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { mu.Lock(); defer mu.Unlock(); return text[i+1] }))))
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		prev := make([]results.Live, len(lives))
		prevT := start
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := clock.Now()
			dt := now.Sub(prevT).Seconds()
			if dt <= 0 {
				continue
			}
			var sumE, sumR, sumT int64
			mu.Lock()
			for i, l := range lives {
				e, r, t := l.Entities.Load(), l.Requests.Load(), l.Throttled.Load()
				de, dr, dth := e-prev[i].Entities.Load(), r-prev[i].Requests.Load(), t-prev[i].Throttled.Load()
				prev[i].Entities.Store(e)
				prev[i].Requests.Store(r)
				prev[i].Throttled.Store(t)
				sumE, sumR, sumT = sumE+de, sumR+dr, sumT+dth
				text[i+1] = rate(de, dr, dth, dt)
			}
			text[0] = fmt.Sprintf("%s / %s  %s", now.Sub(start).Round(time.Second), total, rate(sumE, sumR, sumT, dt))
			mu.Unlock()
			prevT = now
			main.SetCurrent(min(int64(now.Sub(start)/time.Millisecond), int64(total/time.Millisecond)))
		}
	}()
	return func() {
		close(done)
		<-stopped
		main.SetTotal(-1, true)
		for _, b := range vmBars {
			b.SetTotal(-1, true)
		}
		p.Wait()
	}
}

func rate(entities, requests, throttled int64, secs float64) string {
	pct := 0.0
	if requests > 0 {
		pct = 100 * float64(throttled) / float64(requests)
	}
	return fmt.Sprintf("%8.0f entities/s  %5.2f%% throttled", float64(entities)/secs, pct)
}
