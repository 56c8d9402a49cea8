package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tablebench/tablebench/results"
)

// TestShardedSuiteMerges: two shards of a sweep, each its own process
// against one served engine, merge into one suite whose report draws every
// run whole.
func TestShardedSuiteMerges(t *testing.T) {
	cs, stop := startServe(t, "--profile", "none")
	defer stop()
	getenv := csEnv(cs)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Go(func() {
			code, out, errOut := tb(t, context.Background(), getenv, "sweep", "--target", "table", "--op", "insert", "--vms", "1,2", "--threads", "2",
				"--duration", "2s", "--warmup", "1s", "--shard", []string{"0/2", "1/2"}[k], "--job-id", "sw1", "--quiet",
				"--out", filepath.Join(dir, []string{"a", "b"}[k]))
			if code != 0 {
				t.Errorf("shard %d: exit %d\n%s\n%s", k, code, out, errOut)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	merged := filepath.Join(dir, "merged")
	code, out, errOut := tb(t, context.Background(), nil, "merge", "--out", merged, filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	d, err := results.ReadDir(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Set.Runs) != 2 {
		t.Fatalf("%d merged runs, want the sweep's 2", len(d.Set.Runs))
	}
	for _, r := range d.Set.Runs {
		if r.X == 2 && len(r.MergedFrom) != 2 {
			t.Errorf("the 2-VM run was not merged from both shards: %+v", r.MergedFrom)
		}
		if r.X == 1 && r.Shard != nil {
			t.Errorf("the 1-VM run should be shard 0's alone")
		}
		if r.Totals.Requests == 0 || len(r.Intervals) == 0 {
			t.Errorf("run %s: %d requests, %d seconds", r.ID, r.Totals.Requests, len(r.Intervals))
		}
	}
	if _, err := os.Stat(filepath.Join(merged, "index.html")); err != nil {
		t.Fatal("the merged suite has no report")
	}
	// A merged run's rate is checked against its seconds.
	forged := copyDir(t, merged)
	editSet(t, forged, func(set map[string]any) {
		for _, r := range set["runs"].([]any) {
			if r := r.(map[string]any); r["merged_from"] != nil {
				r["entities_per_sec"] = r["entities_per_sec"].(float64) * 2
			}
		}
	})
	oneLineRefusal(t, []string{"report", forged}, "run fig100-insert-x2: entities_per_sec is", "but no 1-second window of its intervals holds")
	// A shard missing is named.
	code, _, errOut = tb(t, context.Background(), nil, "merge", "--out", filepath.Join(dir, "half"), filepath.Join(dir, "a"))
	if code != 2 || !strings.Contains(errOut, "shard(s) 1 of 2 missing") {
		t.Fatalf("merging one shard: exit %d, %s", code, errOut)
	}
}

// TestShardedRunFromPodLogs: the --json records of a run's shards, as the
// pods' logs hold them (one line each, among other lines), merge into the
// run's record.
func TestShardedRunFromPodLogs(t *testing.T) {
	cs, stop := startServe(t, "--profile", "none")
	defer stop()
	getenv := csEnv(cs)
	var wg sync.WaitGroup
	logs := make([]string, 2)
	for k := range 2 {
		wg.Go(func() {
			code, out, errOut := tb(t, context.Background(), func(v string) string {
				if v == "JOB_COMPLETION_INDEX" {
					return []string{"0", "1"}[k]
				}
				return getenv(v)
			}, "run", "--target", "table", "--op", "insert", "--vms", "2", "--threads", "2", "--duration", "2s", "--warmup", "1s",
				"--shards", "2", "--job-id", "pods1", "--json", "--quiet")
			if code != 0 {
				t.Errorf("shard %d: exit %d\n%s", k, code, errOut)
			}
			logs[k] = out
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	path := filepath.Join(t.TempDir(), "shards.jsonl")
	os.WriteFile(path, []byte(logs[1]+"warning: a line a pod printed\n"+logs[0]), 0o644)
	code, out, errOut := tb(t, context.Background(), nil, "merge", "--json", path)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, errOut)
	}
	var m results.Run
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.MergedFrom) != 2 || m.Totals.Requests == 0 || m.Shard != nil {
		t.Fatalf("merged: %+v", m.MergedFrom)
	}
	if err := m.Check(); err != nil { // what merge writes, every reader takes
		t.Fatal(err)
	}
}
