package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// sampler turns a run's live counters into rates over the model time
// between two samples, overall and per VM.
type sampler struct {
	clock  clock.Clock
	start  time.Time
	total  time.Duration
	warmup time.Duration
	lives  []*results.Live
	prev   []results.Live
	prevT  time.Time
}

func newSampler(coord *workloads.Coordinator, c clock.Clock) *sampler {
	spec := coord.Spec()
	now := c.Now()
	lives := coord.Live()
	return &sampler{clock: c, start: now, total: spec.Warmup + spec.Duration, warmup: spec.Warmup,
		lives: lives, prev: make([]results.Live, len(lives)), prevT: now}
}

// sample returns the model time elapsed, the overall rate and each VM's
// since the last sample; ok is false when no model time has passed.
func (s *sampler) sample() (elapsed time.Duration, all string, perVM []string, ok bool) {
	now := s.clock.Now()
	dt := now.Sub(s.prevT).Seconds()
	if dt <= 0 {
		return 0, "", nil, false
	}
	var sumE, sumR, sumT int64
	perVM = make([]string, len(s.lives))
	for i, l := range s.lives {
		e, r, t := l.Entities.Load(), l.Requests.Load(), l.Throttled.Load()
		de, dr, dth := e-s.prev[i].Entities.Load(), r-s.prev[i].Requests.Load(), t-s.prev[i].Throttled.Load()
		s.prev[i].Entities.Store(e)
		s.prev[i].Requests.Store(r)
		s.prev[i].Throttled.Store(t)
		sumE, sumR, sumT = sumE+de, sumR+dr, sumT+dth
		perVM[i] = rate(de, dr, dth, dt)
	}
	s.prevT = now
	return now.Sub(s.start), rate(sumE, sumR, sumT, dt), perVM, true
}

// startProgress shows a run's progress on w, a terminal: elapsed model
// time, entities/s and the throttled share overall and per VM, with the
// run's stages printed above the bars. It returns a function that stops it
// and one to hand Coordinator.OnPhase.
func startProgress(w io.Writer, coord *workloads.Coordinator, clock clock.Clock, total time.Duration) (stop func(), phase func(workloads.Phase)) {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond))
	lives := coord.Live()
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
	var once sync.Once
	var smp *sampler
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		smp = newSampler(coord, clock)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			elapsed, all, perVM, ok := smp.sample()
			if !ok {
				continue
			}
			mu.Lock()
			text[0] = fmt.Sprintf("%s / %s  %s", elapsed.Round(time.Second), total, all)
			copy(text[1:], perVM)
			mu.Unlock()
			main.SetCurrent(min(int64(elapsed/time.Millisecond), int64(total/time.Millisecond)))
		}
	}()
	stop = func() {
		once.Do(func() {
			close(done)
			<-stopped
			main.SetTotal(-1, true)
			for _, b := range vmBars {
				b.SetTotal(-1, true)
			}
			p.Wait()
		})
	}
	return stop, func(ph workloads.Phase) { fmt.Fprintln(p, "run:", ph.Text) }
}

// lineEvery is how often, in wall time, a run's progress is printed as a
// line where stderr is not a terminal: often enough that a CI log shows a
// stalled run within seconds, seldom enough to stay readable.
const lineEvery = 5 * time.Second

// startLines prints a run's progress on w, a log rather than a terminal:
// one line per interval of wall time with the model time elapsed, whether
// the run is warming up or measuring, and its rates since the line before;
// the run's stages as they come. It returns a function that stops it and
// one to hand Coordinator.OnPhase.
func startLines(w io.Writer, coord *workloads.Coordinator, clock clock.Clock, every time.Duration) (stop func(), phase func(workloads.Phase)) {
	var mu sync.Mutex // one line at a time
	var smp *sampler
	started := make(chan struct{})
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-started: // rates count from when the threads start
		case <-done:
			return
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			elapsed, all, _, ok := smp.sample()
			if !ok {
				continue
			}
			stage := "measuring"
			if elapsed < smp.warmup {
				stage = "warm-up"
			}
			mu.Lock()
			fmt.Fprintf(w, "run: %s / %s (%s) %s\n", elapsed.Round(time.Second), smp.total, stage, strings.TrimSpace(all))
			mu.Unlock()
		}
	}()
	var once sync.Once
	phase = func(ph workloads.Phase) {
		mu.Lock()
		fmt.Fprintln(w, "run:", ph.Text)
		mu.Unlock()
		if ph.Load {
			once.Do(func() { smp = newSampler(coord, clock); close(started) })
		}
	}
	var stopOnce sync.Once
	stop = func() { stopOnce.Do(func() { close(done); <-stopped }) }
	return stop, phase
}

func rate(entities, requests, throttled int64, secs float64) string {
	pct := 0.0
	if requests > 0 {
		pct = 100 * float64(throttled) / float64(requests)
	}
	return fmt.Sprintf("%8.0f entities/s  %5.2f%% throttled", float64(entities)/secs, pct)
}
