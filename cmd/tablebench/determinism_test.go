package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/casestudy"
)

// wallClockFields are the only fields of results.json that may differ
// between two suites of one seed: when the file was first and last written.
var wallClockFields = []string{"created", "updated"}

// TestFiguresRepeatExactly runs Figure 9's single partition at 16 VMs and
// Figure 15 at 30 and 50 VMs twice, through the code that `figures --quick`
// runs them with (in parallel, in virtual time), and checks that the
// records are the same byte for byte: every .hlog, and results.json but for
// wallClockFields.
func TestFiguresRepeatExactly(t *testing.T) {
	ids := []string{"fig09-single-partition-x16", "fig15-10-threads-per-vm-x30", "fig15-10-threads-per-vm-x50"}
	suite := func() string {
		dir := t.TempDir()
		e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		fs := newFlagSet(e, "figures", "")
		var sf suiteFlags
		sf.register(fs, true)
		if err := parse(fs, []string{"--quick", "--quiet", "--out", dir}); err != nil {
			t.Fatal(err)
		}
		figs, err := workloads.Select(casestudy.Figures(), []int{9, 15})
		if err != nil {
			t.Fatal(err)
		}
		plan := workloads.Plan(figs, workloads.QuickMode())
		if err := sf.override(plan); err != nil {
			t.Fatal(err)
		}
		plan = slices.DeleteFunc(plan, func(pr workloads.PlannedRun) bool { return !slices.Contains(ids, pr.ID) })
		if len(plan) != len(ids) {
			t.Fatalf("the quick plan of Figures 9 and 15 has %d of the runs %v", len(plan), ids)
		}
		if err := sf.checkTarget(e.getenv, plan); err != nil {
			t.Fatal(err)
		}
		settings, err := sf.settings(true, e.getenv)
		if err != nil {
			t.Fatal(err)
		}
		d, err := sf.openOut(workloads.QuickMode().Name, settings)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := runSuite(context.Background(), e, &sf, d, plan); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := suite(), suite()
	for _, id := range ids {
		x, y := readFile(t, a, id+".hlog"), readFile(t, b, id+".hlog")
		if !bytes.Equal(x, y) {
			t.Errorf("%s.hlog differs between two suites of one seed", id)
		}
	}
	var x, y map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, a, results.SetFile), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readFile(t, b, results.SetFile), &y); err != nil {
		t.Fatal(err)
	}
	for _, f := range wallClockFields {
		if _, ok := x[f]; !ok {
			t.Errorf("%s has no field %q: update wallClockFields", results.SetFile, f)
		}
		delete(x, f)
		delete(y, f)
	}
	for k, v := range x {
		if !bytes.Equal(v, y[k]) {
			t.Errorf("%s: %q differs between two suites of one seed", results.SetFile, k)
		}
	}
	if len(x) != len(y) {
		t.Errorf("%s: %d fields, then %d", results.SetFile, len(x), len(y))
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlanOrder checks that a suite's runs are listed in its plan's order,
// whichever finished first, and that runs the plan does not name follow.
func TestPlanOrder(t *testing.T) {
	d, err := results.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, id := range []string{"c", "old", "a", "b"} {
		d.Set.Runs = append(d.Set.Runs, &results.Run{ID: id})
	}
	planOrder(d, []workloads.PlannedRun{{ID: "a"}, {ID: "b"}, {ID: "c"}})
	var got []string
	for _, r := range d.Set.Runs {
		got = append(got, r.ID)
	}
	if want := []string{"a", "b", "c", "old"}; !slices.Equal(got, want) {
		t.Fatalf("runs listed as %v, want %v", got, want)
	}
}
