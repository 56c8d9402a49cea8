package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tablebench/tablebench/results"
)

// Mode sets the durations of a suite's runs.
type Mode struct {
	Name     string
	Warmup   time.Duration
	Duration time.Duration
	Long     time.Duration // runs that measure rare throttling
}

// FullMode is the suite as `make bench` runs it: 10 s of warm-up and 60 s
// measured, 5 minutes where rare throttling is counted.
func FullMode() Mode { return Mode{"full", 10 * time.Second, 60 * time.Second, 300 * time.Second} }

// QuickMode is a shorter suite: 5 s of warm-up and 20 s measured, 2 minutes
// where rare throttling is counted.
func QuickMode() Mode { return Mode{"quick", 5 * time.Second, 20 * time.Second, 120 * time.Second} }

// PlannedRun is one run of a suite.
type PlannedRun struct {
	Figure int
	Series string
	X      float64
	ID     string
	Spec   Spec
	Engine EngineSetup // for a run on the in-tree engine
	// ClientBound is the figure's reason to saturate its modelled client
	// on purpose, if it has one (Figure.ClientBound).
	ClientBound string
}

// Specs returns the specs of planned runs.
func Specs(plan []PlannedRun) []Spec {
	out := make([]Spec, len(plan))
	for i, pr := range plan {
		out[i] = pr.Spec
	}
	return out
}

// Plan lists the runs of figures in a mode. Derived figures have none.
func Plan(figs []Figure, mode Mode) []PlannedRun {
	var out []PlannedRun
	for _, f := range figs {
		for _, fr := range f.Runs {
			s := fr.Spec
			s.Warmup, s.Duration = mode.Warmup, mode.Duration
			if fr.Long {
				s.Duration = mode.Long
			}
			if m := fr.Measure; m.Full > 0 {
				s.Duration = m.Full
				if mode.Name == QuickMode().Name {
					s.Duration = m.Quick
				}
			}
			out = append(out, PlannedRun{Figure: f.ID, Series: fr.Series, X: fr.X, ID: RunID(f.ID, fr.Series, fr.X), Spec: s, Engine: fr.Engine, ClientBound: f.ClientBound})
		}
	}
	return out
}

// SameSpec reports whether a stored run was made with spec, so a resumed
// suite can skip it. The two are compared as JSON values: a results.json
// rewritten by a tool that reorders keys or indents still matches.
func SameSpec(r *results.Run, spec Spec) bool {
	b, err := json.Marshal(spec)
	var want, stored any
	return err == nil && json.Unmarshal(b, &want) == nil && json.Unmarshal(r.Spec, &stored) == nil && reflect.DeepEqual(want, stored)
}

// Select returns the catalog figures whose IDs are listed, with the figures
// derived ones need. An empty list selects all.
func Select(figs []Figure, ids []int) ([]Figure, error) {
	for i := range figs {
		if err := figs[i].Check(); err != nil {
			return nil, err
		}
	}
	if len(ids) == 0 {
		return figs, nil
	}
	want := map[int]bool{}
	for _, id := range ids {
		i := slices.IndexFunc(figs, func(f Figure) bool { return f.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("figure %d is not in the catalog: use figures 3 to 15", id)
		}
		want[id] = true
		if from := figs[i].From; from != 0 {
			want[from] = true
		}
	}
	var out []Figure
	for _, f := range figs {
		if want[f.ID] {
			out = append(out, f)
		}
	}
	return out, nil
}

// ParseIDs parses a comma-separated list of figure numbers; an empty
// string is none (every figure, to Select), an empty item a mistake.
func ParseIDs(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ids []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(part)), "fig"))
		if part == "" { // 3,,8 or a trailing comma: a typo whose meaning is not clear
			return nil, fmt.Errorf("%q: an item of the list is empty: list figures as 3,8,15", s)
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a figure number: list them as 3,8,15", part)
		}
		ids = append(ids, n)
	}
	return ids, nil
}

// Suite runs planned runs, each on a fresh target, Parallel at a time.
type Suite struct {
	Runs []PlannedRun
	// NewTarget makes a fresh target for one run.
	NewTarget func(PlannedRun) (Target, func(), error)
	Parallel  int
	// Started is called as a run starts (for progress), Finished when it
	// ends; an error from Finished stops the suite.
	Started  func(PlannedRun, *Coordinator)
	Finished func(PlannedRun, *results.Run) error
}

// Run runs the suite. It stops at the first failed run, or when ctx is
// done; finished runs have been handed to Finished.
func (s *Suite) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(s.Parallel, 1))
	var mu sync.Mutex
	for _, pr := range s.Runs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			tg, release, err := s.NewTarget(pr)
			if err != nil {
				return err
			}
			defer release()
			r, err := NewCoordinator(pr.Spec, tg)
			if err != nil {
				return fmt.Errorf("%s: %w", pr.ID, err)
			}
			r.ClientBound(pr.ClientBound)
			r.Identify(Identity{ID: pr.ID, Figure: fmt.Sprintf("fig%02d", pr.Figure), Series: pr.Series, X: pr.X})
			if s.Started != nil {
				mu.Lock()
				s.Started(pr, r)
				mu.Unlock()
			}
			res, err := r.Run(gctx)
			if err != nil {
				return fmt.Errorf("%s: %w", pr.ID, err)
			}
			if res.Interrupted {
				return gctx.Err()
			}
			mu.Lock()
			defer mu.Unlock()
			return s.Finished(pr, res)
		})
	}
	return g.Wait()
}
