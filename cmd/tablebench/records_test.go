package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tablebench/tablebench/results"
)

var (
	baseOnce sync.Once
	baseDir  string
	baseErr  string
)

// baseSet returns a copy of a result set of Figure 3, quick, made once.
func baseSet(t *testing.T) string {
	t.Helper()
	baseOnce.Do(func() {
		d, err := os.MkdirTemp("", "tablebench-base")
		if err != nil {
			baseErr = err.Error()
			return
		}
		baseDir = filepath.Join(d, "fig03")
		if code, out, errOut := tb(t, context.Background(), nil, "figures", "--quick", "--only", "3", "--quiet", "--out", baseDir); code != 0 {
			baseErr = out + errOut
		}
	})
	if baseErr != "" {
		t.Fatal(baseErr)
	}
	return copyDir(t, baseDir)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if baseDir != "" {
		os.RemoveAll(filepath.Dir(baseDir))
	}
	os.Exit(code)
}

// copyDir copies a result directory's files into a new one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dst, ".lock"))
	return dst
}

// editSet rewrites a stored results.json through edit.
func editSet(t *testing.T, dir string, edit func(set map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "results.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	edit(set)
	data, _ = json.Marshal(set)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// oneLineRefusal fails the test unless the command exited 2 with one line
// on stderr holding every wanted string.
func oneLineRefusal(t *testing.T, args []string, want ...string) {
	t.Helper()
	code, _, errOut := tb(t, context.Background(), nil, args...)
	ok := code == 2 && strings.Count(errOut, "\n") == 1
	for _, w := range want {
		ok = ok && strings.Contains(errOut, w)
	}
	if !ok {
		t.Fatalf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, errOut, want)
	}
}

// TestResumeRefusesOtherSettings: a suite resumed with a setting that
// changes its numbers is refused, naming the setting, both values and the
// fix, and nothing is run or stored.
func TestResumeRefusesOtherSettings(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"profile", []string{"--quick", "--profile", "modern"}, []string{"made with --profile wa2010, and this one uses --profile modern", "use --out NEWDIR", "or rerun with --profile wa2010"}},
		{"time scale", []string{"--quick", "--time-scale", "50"}, []string{"made with --time-scale 0, and this one uses --time-scale 50", "rerun with --time-scale 0"}},
		{"presplit", []string{"--quick", "--presplit=false"}, []string{"made with --presplit, and this one uses --presplit=false"}},
		{"balancer", []string{"--quick", "--balancer", "accelerated"}, []string{"made with --balancer default, and this one uses --balancer accelerated"}},
		{"seed", []string{"--quick", "--seed", "2"}, []string{"made with --seed 1, and this one uses --seed 2"}},
		{"mode", nil, []string{"made with --quick, and this one uses --quick=false", "rerun with --quick"}},
		{"duration", []string{"--quick", "--duration", "10s"}, []string{"made without --duration, and this one uses --duration 10s", "rerun with no --duration"}},
		{"warmup", []string{"--quick", "--warmup", "1s"}, []string{"made without --warmup, and this one uses --warmup 1s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseSet(t)
			args := append([]string{"figures", "--only", "3,4", "--resume", "--quiet", "--out", dir}, tc.flags...)
			oneLineRefusal(t, args, append(tc.want, "--out "+dir)...)
			if n := len(readSet(t, dir).Runs); n != 2 {
				t.Fatalf("the refused resume left %d runs; want Figure 3's 2", n)
			}
		})
	}
	t.Run("experiments", func(t *testing.T) {
		dir := baseSet(t)
		oneLineRefusal(t, []string{"experiments", "--quick", "--only", "conflict", "--resume", "--quiet", "--out", dir, "--profile", "modern"},
			"made with --profile wa2010, and this one uses --profile modern")
	})
	t.Run("a sweep into figures", func(t *testing.T) {
		dir := baseSet(t)
		oneLineRefusal(t, []string{"sweep", "--vms", "1,2", "--duration", "2s", "--warmup", "1s", "--resume", "--quiet", "--out", dir}, "holds figures, and this is a sweep")
	})
	t.Run("a set that records no settings", func(t *testing.T) {
		dir := baseSet(t)
		editSet(t, dir, func(set map[string]any) { delete(set, "settings") })
		oneLineRefusal(t, []string{"figures", "--quick", "--only", "3,4", "--resume", "--quiet", "--out", dir}, "does not record the settings")
	})
	t.Run("another version", func(t *testing.T) {
		dir := baseSet(t)
		editSet(t, dir, func(set map[string]any) { set["tablebench"] = "0.0.9" })
		oneLineRefusal(t, []string{"figures", "--quick", "--only", "3,4", "--resume", "--quiet", "--out", dir}, "made by tablebench 0.0.9", "finish it with tablebench 0.0.9")
	})
}

// TestSweepResumeRefusesOtherSettings: a sweep resumes under the same rule.
func TestSweepResumeRefusesOtherSettings(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--op", "insert", "--vms", "1,2", "--threads", "2", "--duration", "4s", "--warmup", "1s", "--quiet", "--out", dir}
	suite(t, args...)
	oneLineRefusal(t, append(args, "--resume", "--profile", "modern"), "made with --profile wa2010, and this one uses --profile modern")
	suite(t, append(args, "--resume")...) // the same settings resume
}

// TestReadersRefuseTamperedRecords: report, compare, figures --resume and
// merge refuse a result set whose records contradict themselves, naming
// the run and the field, in one line.
func TestReadersRefuseTamperedRecords(t *testing.T) {
	ids := []string{"fig03-get-x1", "fig03-insert-x1"}
	run := func(set map[string]any, i int) map[string]any { // by ID: runs are stored as they finish
		for _, r := range set["runs"].([]any) {
			if r := r.(map[string]any); r["id"] == ids[i] {
				return r
			}
		}
		t.Fatalf("no run %s", ids[i])
		return nil
	}
	scale := func(m map[string]any, k string, f float64) { m[k] = m[k].(float64) * f }
	tests := []struct {
		name   string
		tamper func(set map[string]any)
		want   []string
	}{
		{"totals scaled", func(set map[string]any) {
			r := run(set, 0)
			tot := r["totals"].(map[string]any)
			for _, k := range []string{"requests", "entities", "entities_sent"} {
				scale(tot, k, 10)
			}
			scale(r, "billable_transactions", 10)
		}, []string{"run fig03-get-x1: totals.requests is", "latency histograms hold"}},
		{"intervals scaled", func(set map[string]any) {
			for _, iv := range run(set, 1)["intervals"].([]any) {
				scale(iv.(map[string]any), "requests", 10)
			}
		}, []string{"run fig03-insert-x1: intervals hold"}},
		{"a negative rate", func(set map[string]any) { scale(run(set, 0), "entities_per_sec", -1) }, []string{"run fig03-get-x1: entities_per_sec is -"}},
		{"a rate against its counts", func(set map[string]any) { scale(run(set, 0), "entities_per_sec", 3) }, []string{"run fig03-get-x1: entities_per_sec is", "over 20 measured seconds"}},
		{"a percentile beyond its histogram", func(set map[string]any) {
			lat := run(set, 1)["latency_ms"].(map[string]any)
			for _, k := range []string{"p99", "p999", "max"} {
				lat[k] = 99999.0
			}
		}, []string{"run fig03-insert-x1: latency_ms.p99 is 99999 ms, outside"}},
		{"a run twice", func(set map[string]any) { set["runs"] = append(set["runs"].([]any), run(set, 0)) }, []string{"run fig03-get-x1 is listed twice"}},
		{"runs null", func(set map[string]any) { set["runs"] = nil }, []string{"holds no runs"}},
		{"two profiles", func(set map[string]any) { run(set, 1)["environment"].(map[string]any)["profile"] = "modern" },
			[]string{"run fig03-insert-x1 ran on profile modern, but the set was made with --profile wa2010"}},
		{"two profiles in a set without settings", func(set map[string]any) {
			delete(set, "settings")
			run(set, 1)["environment"].(map[string]any)["profile"] = "modern"
		}, []string{"ran on profile ", "the set mixes two engine models"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good := baseSet(t)
			dir := baseSet(t)
			editSet(t, dir, tc.tamper)
			oneLineRefusal(t, []string{"report", dir}, tc.want...)
			oneLineRefusal(t, []string{"compare", good, dir}, tc.want...)
			oneLineRefusal(t, []string{"merge", "--out", filepath.Join(t.TempDir(), "m"), dir}, tc.want...)
			if !strings.HasPrefix(tc.name, "runs null") && !strings.HasSuffix(tc.name, "without settings") { // resumed or refused for what they lack
				oneLineRefusal(t, []string{"figures", "--quick", "--only", "3", "--resume", "--quiet", "--out", dir}, tc.want...)
			}
		})
	}
}

// TestSwappedHlogRefused: a run's interval log swapped with another's is
// refused by a resumed suite and by merge, which would keep or merge it.
func TestSwappedHlogRefused(t *testing.T) {
	dir := baseSet(t)
	a, b := filepath.Join(dir, "fig03-get-x1.hlog"), filepath.Join(dir, "fig03-insert-x1.hlog")
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	os.WriteFile(a, db, 0o644)
	os.WriteFile(b, da, 0o644)
	want := "is the interval log of run fig03-" // get-x1's or insert-x1's, whichever is read first
	oneLineRefusal(t, []string{"figures", "--quick", "--only", "3", "--resume", "--quiet", "--out", dir}, want)
	oneLineRefusal(t, []string{"merge", "--out", filepath.Join(t.TempDir(), "m"), dir}, want)
}

// TestResumeRemovesStaleTemps: the files a killed suite left half-written
// are removed when it is resumed.
func TestResumeRemovesStaleTemps(t *testing.T) {
	dir := baseSet(t)
	stale := []string{filepath.Join(dir, ".tmp-fig04-batch-of-100-x100.hlog2740012"), filepath.Join(dir, ".tmp-results.json991")}
	for _, p := range stale {
		os.WriteFile(p, []byte("half"), 0o644)
	}
	suite(t, "figures", "--quick", "--only", "3", "--resume", "--quiet", "--out", dir)
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after --resume", p)
		}
	}
}

// TestReportWaitsForTheWriter: report rewrites a directory's report, so
// it is refused while another process writes the directory (and might
// remove its temporary files), as a second suite is.
func TestReportWaitsForTheWriter(t *testing.T) {
	dir := baseSet(t)
	d, err := results.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Lock(); err != nil {
		t.Fatal(err)
	}
	oneLineRefusal(t, []string{"report", dir}, "is being written by another tablebench process")
	d.Close()
	suite(t, "report", dir)
}

// TestMergeRefusesShardsOfOtherSettings: shard directories made with other
// settings are not merged into one suite.
func TestMergeRefusesShardsOfOtherSettings(t *testing.T) {
	a, b := baseSet(t), baseSet(t)
	editSet(t, b, func(set map[string]any) { set["settings"].(map[string]any)["profile"] = "modern" })
	oneLineRefusal(t, []string{"merge", "--out", filepath.Join(t.TempDir(), "m"), a, b}, "are not shards of one suite: one was made with --profile wa2010, the other with --profile modern")
}

// TestMergeRefusesTamperedShards: merge refuses a shard's record that
// contradicts itself, and a shard's interval log put beside the other
// shard's record (both are named after the run).
func TestMergeRefusesTamperedShards(t *testing.T) {
	cs, stop := startServe(t, "--profile", "none")
	defer stop()
	getenv := csEnv(cs)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Go(func() {
			code, _, errOut := tb(t, context.Background(), getenv, "run", "--target", "table", "--op", "insert", "--vms", "2", "--threads", "2",
				"--duration", "2s", "--warmup", "1s", "--shard", []string{"0/2", "1/2"}[k], "--job-id", "tamper1", "--quiet", "--out", filepath.Join(dir, []string{"a", "b"}[k]))
			if code != 0 {
				t.Errorf("shard %d: exit %d\n%s", k, code, errOut)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	records := func(d string) []string { // shard 0's, then shard 1's
		var out []string
		for _, s := range []string{"a", "b"} {
			m, _ := filepath.Glob(filepath.Join(d, s, "*.json"))
			out = append(out, m...)
		}
		if len(out) != 2 {
			t.Fatalf("records %v", out)
		}
		return out
	}
	suite(t, append([]string{"merge"}, records(dir)...)...) // as they are, they merge

	t.Run("interval logs swapped", func(t *testing.T) {
		swapped := copyDir(t, dir)
		recs := records(swapped)
		ha, hb := strings.TrimSuffix(recs[0], ".json")+".hlog", strings.TrimSuffix(recs[1], ".json")+".hlog"
		da, _ := os.ReadFile(ha)
		db, _ := os.ReadFile(hb)
		os.WriteFile(ha, db, 0o644)
		os.WriteFile(hb, da, 0o644)
		oneLineRefusal(t, append([]string{"merge"}, recs...), "shard 1/2, not of", "shard 0/2")
	})
	t.Run("totals scaled", func(t *testing.T) {
		scaled := copyDir(t, dir)
		recs := records(scaled)
		f, _ := os.Open(recs[1])
		r, err := results.ReadRun(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		r.Totals.Requests *= 10
		r.Billable = r.Totals.Requests
		var buf bytes.Buffer
		results.Write(&buf, r)
		os.WriteFile(recs[1], buf.Bytes(), 0o644)
		os.Remove(strings.TrimSuffix(recs[1], ".json") + ".hlog")
		oneLineRefusal(t, append([]string{"merge"}, recs...), "shard 1: run ", ": totals.requests is", "latency histograms hold")
	})
}
