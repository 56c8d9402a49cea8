package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// planned returns the warm-up and measurement a run is planned to take.
func planned(pr workloads.PlannedRun) time.Duration { return pr.Spec.Warmup + pr.Spec.Duration }

// plannedWall returns the wall time runs take one at a time, at wall wall
// seconds per planned second.
func plannedWall(runs []workloads.PlannedRun, wall float64) time.Duration {
	var sum time.Duration
	for _, pr := range runs {
		sum += planned(pr)
	}
	return time.Duration(float64(sum) * wall)
}

// etaModel estimates the time a suite has left from the durations planned
// for its runs. In wall time a planned second costs a known number of wall
// seconds, so the estimate is the plan itself. In virtual time a run costs
// CPU, not its duration; the estimate scales the time spent so far by the
// planned seconds still to do over those done.
type etaModel struct {
	wall     float64 // wall seconds per planned second; 0 in virtual time
	parallel int
	begin    time.Time
	plan     map[string]time.Duration
	started  map[string]time.Time
	finished map[string]bool
}

func newETA(runs []workloads.PlannedRun, wall float64, parallel int, begin time.Time) *etaModel {
	m := &etaModel{wall: wall, parallel: max(parallel, 1), begin: begin, plan: map[string]time.Duration{},
		started: map[string]time.Time{}, finished: map[string]bool{}}
	for _, pr := range runs {
		m.plan[pr.ID] = planned(pr)
	}
	return m
}

// left returns the time the suite has left at now, and false while there
// is nothing yet to estimate it from.
func (m *etaModel) left(now time.Time) (time.Duration, bool) {
	var done, todo time.Duration
	var inFlight time.Duration // wall time still planned for runs under way
	for id, d := range m.plan {
		switch t, ok := m.started[id]; {
		case m.finished[id]:
			done += d
		case ok && m.wall > 0:
			inFlight += max(time.Duration(float64(d)*m.wall)-now.Sub(t), 0)
		default: // in virtual time a run under way counts as still to do
			todo += d
		}
	}
	if m.wall > 0 {
		return inFlight + time.Duration(float64(todo)*m.wall)/time.Duration(m.parallel), true
	}
	if done == 0 {
		return 0, false
	}
	return time.Duration(float64(now.Sub(m.begin)) * float64(todo) / float64(done)), true
}

// suiteProgress shows runs done out of all, the time left, and a bar per
// run in progress.
type suiteProgress struct {
	p       *mpb.Progress
	overall *mpb.Bar
	mu      sync.Mutex
	bars    map[string]*mpb.Bar
	eta     *etaModel
}

func newSuiteProgress(w io.Writer, runs []workloads.PlannedRun, wall float64, parallel int) *suiteProgress {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond))
	s := &suiteProgress{p: p, bars: map[string]*mpb.Bar{}, eta: newETA(runs, wall, parallel, time.Now())}
	s.overall = p.New(int64(len(runs)), mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("runs ", decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d", decor.WCSyncWidth)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Any(func(decor.Statistics) string {
			s.mu.Lock()
			defer s.mu.Unlock()
			left, ok := s.eta.left(time.Now())
			if !ok {
				return " elapsed, estimating the time left"
			}
			return fmt.Sprintf(" elapsed, about %s left", left.Round(time.Second))
		})))
	return s
}

func (s *suiteProgress) started(pr workloads.PlannedRun, r *workloads.Coordinator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eta.started[pr.ID] = time.Now()
	lives := r.Live()
	s.bars[pr.ID] = s.p.New(0, mpb.NopStyle(), mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(pr.ID, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			var req, ent, thr int64
			for _, l := range lives {
				req, ent, thr = req+l.Requests.Load(), ent+l.Entities.Load(), thr+l.Throttled.Load()
			}
			return fmt.Sprintf("%d requests, %d entities, %d throttled", req, ent, thr)
		})))
}

func (s *suiteProgress) finished(pr workloads.PlannedRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eta.finished[pr.ID] = true
	if b := s.bars[pr.ID]; b != nil {
		b.SetTotal(-1, true)
		delete(s.bars, pr.ID)
	}
	s.overall.Increment()
}

func (s *suiteProgress) wait() {
	s.mu.Lock()
	for _, b := range s.bars {
		b.Abort(true)
	}
	s.mu.Unlock()
	s.overall.Abort(false)
	s.p.Wait()
}

// suiteLines prints a suite's progress on a log rather than a terminal: a
// line as each run starts, when runs take wall time, and a line as each
// finishes, with its result and the time the suite has left.
type suiteLines struct {
	w    io.Writer
	wall float64
	mu   sync.Mutex
	n    int // runs in all
	done int
	eta  *etaModel
}

func newSuiteLines(w io.Writer, runs []workloads.PlannedRun, wall float64, parallel int) *suiteLines {
	return &suiteLines{w: w, wall: wall, n: len(runs), eta: newETA(runs, wall, parallel, time.Now())}
}

func (s *suiteLines) started(pr workloads.PlannedRun, _ *workloads.Coordinator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eta.started[pr.ID] = time.Now()
	if s.wall > 0 { // in virtual time runs start many a second: their ends say enough
		fmt.Fprintf(s.w, "run %s: started, %s of warm-up and measurement\n", pr.ID, time.Duration(float64(planned(pr))*s.wall).Round(time.Second))
	}
}

func (s *suiteLines) finished(pr workloads.PlannedRun, r *results.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eta.finished[pr.ID] = true
	s.done++
	left := ""
	if d, ok := s.eta.left(time.Now()); ok && s.done < s.n && d >= time.Second {
		left = fmt.Sprintf(", about %s left", d.Round(time.Second))
	}
	fmt.Fprintf(s.w, "[%d/%d] %s: %.0f entities/s, %.2f%% throttled, p50 %.1f ms%s\n",
		s.done, s.n, pr.ID, r.EntitiesPerSec, r.ThrottledPct, r.SuccessLatencyMs.P50, left)
}
