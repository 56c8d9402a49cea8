package workloads_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/casestudy"
	"github.com/tablebench/tablebench/workloads/enginetarget"
	"github.com/tablebench/tablebench/workloads/vm"
)

func virtualTarget(pr workloads.PlannedRun) (workloads.Target, func(), error) {
	seed := pr.Spec.Seed
	cfg := engine.DefaultConfig()
	cfg.PreSplit, cfg.Seed = 16, seed
	cfg.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
	tg, err := enginetarget.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return tg, func() { tg.Close() }, nil
}

func runPlan(t *testing.T, plan []workloads.PlannedRun, parallel int) map[string]*results.Run {
	t.Helper()
	var mu sync.Mutex
	got := map[string]*results.Run{}
	s := &workloads.Suite{Runs: plan, NewTarget: virtualTarget, Parallel: parallel,
		Finished: func(pr workloads.PlannedRun, r *results.Run) error {
			mu.Lock()
			got[r.ID] = r
			mu.Unlock()
			return nil
		}}
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return got
}

func shortMode() workloads.Mode {
	return workloads.Mode{Name: "test", Warmup: 2 * time.Second, Duration: 10 * time.Second, Long: 20 * time.Second}
}

// TestParallelRunsAreHonest: runs on their own virtual clocks measure the
// same whether the suite runs them one or several at a time.
func TestParallelRunsAreHonest(t *testing.T) {
	figs, _ := workloads.Select(casestudy.Figures(), []int{3, 15})
	plan := workloads.Plan(figs, shortMode())
	one, two := runPlan(t, plan, 1), runPlan(t, plan, 4)
	for id, a := range one {
		b := two[id]
		if b == nil || a.Totals.Requests != b.Totals.Requests || a.Totals.Throttled != b.Totals.Throttled || a.LatencyMs != b.LatencyMs {
			t.Fatalf("%s differs run alone and alongside others: %+v against %+v", id, a.Totals, b.Totals)
		}
	}
}

func TestSweepDefinition(t *testing.T) {
	d, err := workloads.ParseSweepFile([]byte("name: mine\nvms: [1, 2, 4]\nvm_size: [small, xl]\nop: [batch]\nbatch_size: [20, 100]\nduration: 5s\nwarmup: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Figure()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 12 || f.XLabel != "VMs" {
		t.Fatalf("%d runs against %s", len(f.Runs), f.XLabel)
	}
	series := map[string]bool{}
	for _, r := range f.Runs {
		series[r.Series] = true
	}
	if len(series) != 4 || !series["vm-size=small, batch-size=20"] {
		t.Fatalf("series %v", series)
	}
	raw, _ := json.Marshal(d)
	g, err := workloads.SweepFromJSON(raw)
	if err != nil || len(g.Runs) != 12 {
		t.Fatalf("stored sweep: %v", err)
	}
	for _, bad := range []struct{ file, want string }{
		{"vms: [1, 2]\nthreds: [3]\n", `"threds" is not a sweep key`},
		{"vms: [0]\n", "0 VMs is out of range"},
		{"x: color\n", `x axis "color" is not known`},
		{"y: joy\n", `y "joy" is not known`},
		{"vm_size: [giant]\n", `VM size "giant" is not valid`},
		{"duration: soon\n", `duration "soon"`},
		{"vms: one\n", `sweep file, line 1: vms: "one" is not a whole number`},
	} {
		d, err := workloads.ParseSweepFile([]byte(bad.file))
		if err == nil {
			_, err = d.Figure()
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.file, err, bad.want)
		}
	}
}

func TestSelectAndParseIDs(t *testing.T) {
	ids, err := workloads.ParseIDs("3, fig8,15")
	if err != nil || len(ids) != 3 || ids[1] != 8 {
		t.Fatalf("%v %v", ids, err)
	}
	for _, bad := range []string{"3,,8", "3,8,", ","} {
		if _, err := workloads.ParseIDs(bad); err == nil || !strings.Contains(err.Error(), "an item of the list is empty") {
			t.Errorf("ParseIDs(%q) = %v; want an empty item refused", bad, err)
		}
	}
	if _, err := workloads.ParseIDs("3,x"); err == nil {
		t.Fatal("a bad figure number was taken")
	}
	figs, err := workloads.Select(casestudy.Figures(), []int{6})
	if err != nil || len(figs) != 2 || figs[0].ID != 5 {
		t.Fatalf("figure 6 must bring figure 5's runs: %v", err)
	}
	if _, err := workloads.Select(casestudy.Figures(), []int{2}); err == nil {
		t.Fatal("figure 2 is not in the catalog")
	}
}

var _ = context.Background

// TestSweepFileForms: scalars are lists of one, as on the command line;
// errors name the key and what is allowed; JSON errors are JSON's.
func TestSweepFileForms(t *testing.T) {
	d, err := workloads.ParseSweepFile([]byte("op: insert\nthreads: 15\nvms: [1, 2]\nname: mine\n"))
	if err != nil || len(d.Ops) != 1 || d.Ops[0] != "insert" || len(d.Threads) != 1 || d.Threads[0] != 15 || len(d.VMs) != 2 || d.Name != "mine" {
		t.Fatalf("%+v %v", d, err)
	}
	if d, err := workloads.ParseSweepFile([]byte(`{"batch_size": 20, "vms": [1, 4]}`)); err != nil || len(d.BatchSizes) != 1 || d.BatchSizes[0] != 20 {
		t.Fatalf("JSON: %+v %v", d, err)
	}
	for body, want := range map[string]string{
		"":                  "the sweep file is empty",
		"   \n":             "the sweep file is empty",
		"colour: blue\n":    `"colour" is not a sweep key; use name, title, x, y`,
		`{"vms": [1,2],}`:   "not valid JSON",
		"vms: [1, x]\n":     "vms",
		"threads: {a: 1}\n": "threads",
		"vms: [1\n":         "not valid YAML",
	} {
		if _, err := workloads.ParseSweepFile([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", body, err, want)
		}
	}
}

// TestSameSpecAsJSONValues: a stored spec matches whatever the order of
// its keys and its indentation (a results.json rewritten by a tool), and
// no other spec matches it.
func TestSameSpecAsJSONValues(t *testing.T) {
	spec := workloads.DefaultSpec()
	b, _ := json.Marshal(spec)
	var m map[string]any
	json.Unmarshal(b, &m)
	sorted, _ := json.MarshalIndent(m, "", "\t") // keys in another order
	r := &results.Run{Spec: sorted}
	if !workloads.SameSpec(r, spec) {
		t.Fatalf("the spec with its keys reordered does not match:\n%s", sorted)
	}
	other := spec
	other.Seed++
	if workloads.SameSpec(r, other) {
		t.Fatal("a spec of another seed matches")
	}
	if workloads.SameSpec(&results.Run{Spec: []byte("{")}, spec) {
		t.Fatal("a spec that is not JSON matches")
	}
}

// TestClientBoundFigureNotes: a figure that saturates its modelled client
// on purpose says so, and its runs carry the saturation as a note, not a
// warning that would fail a --check.
func TestClientBoundFigureNotes(t *testing.T) {
	spec := workloads.DefaultSpec()
	spec.Op, spec.BatchSize, spec.Threads, spec.VMSize = workloads.OpBatch, 100, 30, vm.Small
	fig := workloads.Figure{ID: 99, Name: "fig99", ClientBound: "it measures the client", Runs: []workloads.FigureRun{{Series: "small VM", X: 30, Spec: spec}}}
	got := runPlan(t, workloads.Plan([]workloads.Figure{fig}, shortMode()), 1)
	if len(got) != 1 {
		t.Fatalf("%d runs", len(got))
	}
	for id, r := range got {
		if len(r.Warnings) > 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "saturated") || !strings.Contains(r.Notes[0], "it measures the client") {
			t.Fatalf("%s: warnings %q, notes %q", id, r.Warnings, r.Notes)
		}
	}
}
