package casestudy_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/casestudy"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

func TestCatalog(t *testing.T) {
	figs := casestudy.Figures()
	if len(figs) != 13 || figs[0].ID != 3 || figs[12].ID != 15 {
		t.Fatalf("catalog has %d figures", len(figs))
	}
	ids := map[string]bool{}
	byID := map[int]bool{}
	for _, f := range figs {
		byID[f.ID] = true
		if f.From == 0 && len(f.Runs) == 0 {
			t.Errorf("figure %d has no runs", f.ID)
		}
		if f.ID == 6 && (f.From != 5 || len(f.Runs) != 0) {
			t.Error("figure 6 must be derived from figure 5's runs, not run again")
		}
		for _, fr := range f.Runs {
			id := workloads.RunID(f.ID, fr.Series, fr.X)
			if ids[id] {
				t.Errorf("run ID %s twice", id)
			}
			ids[id] = true
			if err := fr.Spec.Validate(); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}
	}
	claims := casestudy.Claims()
	if len(claims) != 25 {
		t.Fatalf("%d claims, want the 25 of C3.1-C15.4", len(claims))
	}
	seen := map[string]bool{}
	for _, c := range claims {
		if seen[c.ID] || !strings.HasPrefix(c.ID, fmt.Sprintf("C%d.", c.Figure)) || !byID[c.Figure] {
			t.Errorf("%s: a duplicate, or not of figure %d", c.ID, c.Figure)
		}
		seen[c.ID] = true
		if c.Text == "" || c.Reading() == "" || c.Threshold() == "" {
			t.Errorf("%s lacks its text, reading or threshold", c.ID)
		}
		for _, n := range c.Needs() {
			if !byID[n] {
				t.Errorf("%s reads figure %d, which is not in the catalog", c.ID, n)
			}
		}
	}
}

// TestReadingsAreWrittenFromTheCheck: the reading names the quantities and
// bounds the check uses, so text and check cannot drift apart.
func TestReadingsAreWrittenFromTheCheck(t *testing.T) {
	want := map[string][]string{
		"C3.1":  {"the median latency of get is under 40 ms", "under 40 ms"},
		"C4.2":  {"the mean latency of batch of 100 (Figure 4) over 100 times the mean latency of insert (Figure 3) is at most 0.333x", "at most 0.333x"},
		"C8.3":  {"the throttled share of single partition at 16 XL VMs is within 25% of 0.2%", "the throttled share of single partition at 10 XL VMs is within a factor of 2 of 0.03%", "±25%, at 10 VMs 0.015%-0.06%"},
		"C13.2": {"successful entities/s of small VMs at 16 VMs is within 15% of 17000 e/s", "throttled < 0.01%"},
		"C15.4": {"the lowest of successful entities/s of 10 threads per VM at x threads in all, for x = 30, 40 and 50, is at least 2185 e/s", "2,300 less 5%"},
		"C5.1":  {"entities/s", "mean latency of small VM rises at every step of batch size (within 2%)"},
	}
	for _, c := range casestudy.Claims() {
		text := c.Reading() + " | " + c.Threshold()
		for _, w := range want[c.ID] {
			if w == "entities/s" { // C5.1 is about latency, never throughput
				if strings.Contains(text, w) {
					t.Errorf("%s: %q", c.ID, text)
				}
				continue
			}
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", c.ID, text, w)
			}
		}
	}
}

// fake is a run with the numbers the claims of Figures 3 and 15 read.
func fake(id string, eps, thr, p50 float64) *results.Run {
	r := &results.Run{ID: id, EntitiesPerSec: eps, EntitiesSentPerSec: eps / (1 - thr/100), ThrottledPct: thr}
	r.SuccessLatencyMs.P50 = p50
	r.Totals.Requests = 1000
	return r
}

// TestClaimsFailWhenTheyShould: a claim check is not a formality.
func TestClaimsFailWhenTheyShould(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{3, 15})
	runs := []*results.Run{
		fake("fig03-get-x1", 30, 0, 45), fake("fig03-insert-x1", 25, 0, 30), // gets too slow
		fake("fig15-10-threads-per-vm-x10", 1000, 0, 0), fake("fig15-10-threads-per-vm-x20", 2300, 0.1, 0),
		fake("fig15-10-threads-per-vm-x30", 2400, 30, 0), // far too much throttling
		fake("fig15-10-threads-per-vm-x40", 2500, 18, 0), fake("fig15-10-threads-per-vm-x50", 2500, 22, 0),
	}
	got := map[string]results.CheckedClaim{}
	for _, c := range casestudy.Check(figs, runs) {
		got[c.ID] = c
	}
	want := map[string]bool{"C3.1": false, "C3.2": true, "C15.1": true, "C15.2": false, "C15.3": true, "C15.4": true}
	for id, pass := range want {
		if c, ok := got[id]; !ok || c.Pass != pass {
			t.Errorf("%s: pass=%v (checked %v), want %v", id, c.Pass, ok, pass)
		}
	}
	if _, ok := got["C4.2"]; ok {
		t.Error("C4.2 was checked without figure 4's runs")
	}
	if c := got["C15.4"]; c.Measured != 2400 || !strings.Contains(c.Detail, "at 30 threads in all") {
		t.Errorf("C15.4 should name the lowest of its runs: %+v", c)
	}
}

// TestBoundsAtTheirEdges: each bound keeps or drops its edge as its reading
// says, and the margin is measured to it.
func TestBoundsAtTheirEdges(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{3, 15})
	check := func(p50, thr20 float64) map[string]results.CheckedClaim {
		runs := []*results.Run{
			fake("fig03-get-x1", 30, 0, p50), fake("fig03-insert-x1", 25, 0, p50),
			fake("fig15-10-threads-per-vm-x10", 1000, 0, 0), fake("fig15-10-threads-per-vm-x20", 2300*0.85, thr20, 0),
			fake("fig15-10-threads-per-vm-x30", 2400, 12.5, 0), fake("fig15-10-threads-per-vm-x40", 2500, 18, 0),
			fake("fig15-10-threads-per-vm-x50", 2185, 22, 0),
		}
		got := map[string]results.CheckedClaim{}
		for _, c := range casestudy.Check(figs, runs) {
			got[c.ID] = c
		}
		return got
	}
	at := check(40, 3)
	if at["C3.1"].Pass { // "under 40 ms" leaves 40 out
		t.Error("C3.1 passed at exactly 40 ms")
	}
	for _, id := range []string{"C15.1", "C15.4"} { // inclusive bounds keep their edges
		if !at[id].Pass {
			t.Errorf("%s failed on its edge: %+v", id, at[id])
		}
	}
	beyond := check(39.9, math.Nextafter(3, 4))
	if !beyond["C3.1"].Pass || beyond["C15.1"].Pass {
		t.Errorf("C3.1 %v at 39.9 ms, C15.1 %v just over 3%% throttled", beyond["C3.1"].Pass, beyond["C15.1"].Pass)
	}
	if c := beyond["C3.1"]; c.Margin == nil || math.Abs(*c.Margin-0.25) > 0.01 {
		t.Errorf("C3.1 margin %v, want 0.25%%", c.Margin)
	}
}

// TestClaimsOfEmptyRunsStillStore: a run that measured nothing makes its
// claims unmeasurable, never a value that cannot be stored.
func TestClaimsOfEmptyRunsStillStore(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{7})
	var runs []*results.Run
	for _, fr := range figs[0].Runs {
		runs = append(runs, &results.Run{ID: workloads.RunID(7, fr.Series, fr.X)}) // all zero
	}
	claims := casestudy.Check(figs, runs)
	if len(claims) != 2 {
		t.Fatalf("%d claims", len(claims))
	}
	for _, c := range claims {
		if c.Pass || !strings.Contains(c.Detail, "not measurable") {
			t.Errorf("%s: %+v", c.ID, c)
		}
	}
	if _, err := json.Marshal(claims); err != nil {
		t.Fatalf("claims cannot be stored: %v", err)
	}
}

// TestExperimentCatalog: experiments have IDs of their own, runs that
// validate, and claims with X ids that read their own figures.
func TestExperimentCatalog(t *testing.T) {
	exps := casestudy.Experiments()
	seen := map[int]bool{}
	for _, f := range casestudy.Figures() {
		seen[f.ID] = true
	}
	for _, f := range exps {
		if seen[f.ID] || f.ID < 200 {
			t.Errorf("experiment figure %d clashes with a figure", f.ID)
		}
		seen[f.ID] = true
		for _, fr := range f.Runs {
			if err := fr.Spec.Validate(); err != nil {
				t.Errorf("%s: %v", workloads.RunID(f.ID, fr.Series, fr.X), err)
			}
		}
	}
	claims := casestudy.ExperimentClaims()
	if len(claims) < 10 {
		t.Fatalf("%d experiment claims", len(claims))
	}
	for _, c := range claims {
		if !strings.HasPrefix(c.ID, "X") || !seen[c.Figure] || c.Reading() == "" || c.Text == "" {
			t.Errorf("%s: %+v", c.ID, c)
		}
	}
	for _, name := range casestudy.ExperimentNames() {
		if figs, err := casestudy.ExperimentFigures([]string{name}); err != nil || len(figs) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := casestudy.ExperimentFigures([]string{"nope"}); err == nil {
		t.Error("an unknown experiment was accepted")
	}
}

// TestPublishedNumbersAreMarked: each printed number a figure can show is
// placed on it (series, x, axis), from the claim's own data, so a chart can
// draw it beside what was measured; a ratio has no place and gets none.
func TestPublishedNumbersAreMarked(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{3, 7, 8, 13, 15})
	var runs []*results.Run
	for _, f := range figs {
		for _, fr := range f.Runs {
			runs = append(runs, fake(workloads.RunID(f.ID, fr.Series, fr.X), 1000, 1, 30))
		}
	}
	got := map[string][]string{}
	for _, c := range casestudy.Check(figs, runs) {
		for _, m := range c.Marks {
			x := "level"
			if m.X != nil {
				x = fmt.Sprint(*m.X)
			}
			got[c.ID] = append(got[c.ID], fmt.Sprintf("%s %s %s p%g %s", m.On, m.Series, x, m.Percentile, m.Label()))
		}
	}
	want := map[string][]string{
		"C3.1":  {"latency get 1 p50 published: 40 ms"},
		"C8.1":  {"y single partition 2 p0 published: 600 e/s"},
		"C13.2": {"y small VMs 16 p0 published: 17000 e/s"},
		"C15.1": {"y 10 threads per VM 20 p0 published: 2300 e/s"},
		"C15.2": {"y2 10 threads per VM 30 p0 published: 11%"},
		"C15.3": {"y2 10 threads per VM 50 p0 published: 22%", "y 10 threads per VM 50 p0 published: 2500 e/s"},
		"C15.4": {"y 10 threads per VM level p0 published: 2300 e/s"},
		"C7.2":  nil, // a ratio: no axis shows it
		"C8.3":  nil, // a throttled share: Figure 8 draws entities/s
		"C7.1":  nil, // not printed: the reading's own threshold
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("%s marks %q, want %q", id, got[id], w)
		}
	}
}

// TestTodayRunsThroughTodaysClient: an experiment's run on an engine
// profile of its own models that profile's client, so today's service is
// not measured through the 2010 client's 5 ms of CPU a request, nor paused
// 3 s after a 503 where today's SDK retries; the 2010 profile keeps the
// 2010 XL VM and the study's method its figures were calibrated with.
func TestTodayRunsThroughTodaysClient(t *testing.T) {
	want := map[string]string{"wa2010": "xl", "modern": "modern"}
	retry := map[string]workloads.RetryPolicy{"wa2010": workloads.RetryNone, "modern": workloads.RetrySDK}
	seen := map[string]bool{}
	for _, f := range casestudy.Experiments() {
		for _, fr := range f.Runs {
			name := fr.Engine.Profile
			if name == "" {
				continue
			}
			p, err := engine.ProfileByName(name)
			if err != nil {
				t.Fatalf("%s: %v", workloads.RunID(f.ID, fr.Series, fr.X), err)
			}
			if got := fr.Spec.VMSize; got != enginetarget.ClientSize(p) || want[name] != "" && got.Name != want[name] {
				t.Errorf("%s runs on profile %s with a %s VM, want its client %s", workloads.RunID(f.ID, fr.Series, fr.X), name, got.Name, enginetarget.ClientSize(p).Name)
			}
			if r := retry[name]; r != "" && fr.Spec.Retry.Policy != r {
				t.Errorf("%s runs on profile %s retrying as %s, want %s", workloads.RunID(f.ID, fr.Series, fr.X), name, fr.Spec.Retry.Policy, r)
			}
			seen[name] = true
		}
	}
	if !seen["modern"] || !seen["wa2010"] {
		t.Errorf("the experiments run profiles %v, want wa2010 and modern among them", seen)
	}
}
