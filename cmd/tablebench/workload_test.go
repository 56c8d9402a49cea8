package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// customWorkload is a workload of a user's own: orders over a few hundred
// customers, some hot, read mostly.
const customWorkload = `name: orders
mix: {get: 50, upsert: 15, query: 5, delete: 5, update: 10, range: 10, scan: 5}
batch_size: 10
partitions:
  scheme: fixed
  count: 300
  distribution: hotspot
  hot_data: 0.1
  hot_ops: 0.6
  names: sequential
rows: {count: 3, distribution: latest}
entity: {size: {min: 300, max: 2000}}
vms: 1
threads: 4
duration: 3s
warmup: 1s
`

// runJSON runs tablebench with args and returns the record it printed.
func runJSON(t *testing.T, getenv func(string) string, args ...string) map[string]any {
	t.Helper()
	code, out, errOut := tb(t, context.Background(), getenv, append(args, "--json", "--quiet")...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return v
}

// shape is the fields of a record that say what it holds: its top-level
// keys, its setup's, and each operation's, without those only one kind of
// target writes (where it ran, modelled client CPU, harness lag, the
// engine's own range partitions).
func shape(v map[string]any) []string {
	var out []string
	for k := range v {
		switch k {
		case "environment", "client_cpu_pct", "harness_lag_ms", "events", "range_partitions", "max_start_lag_ms", "warnings", "notes", "errors":
			continue
		}
		out = append(out, k)
	}
	for k := range v["setup"].(map[string]any) {
		out = append(out, "setup."+k)
	}
	ops, _ := v["ops"].(map[string]any)
	for op, s := range ops {
		for k := range s.(map[string]any) {
			if k != "errors" && k != "missed" {
				out = append(out, "ops."+op+"."+k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestWorkloadsRunOnTheEngineAndServed: a YCSB preset and a workload file
// of the user's own run on the engine in virtual time and through the SDK
// against the served engine, and their records have the same shape: each
// operation of the mix with its counts, rates and latency, and the
// workload's fields in the setup.
func TestWorkloadsRunOnTheEngineAndServed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "orders.yaml")
	if err := os.WriteFile(file, []byte(customWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, stop := startServe(t, "--profile", "none")
	defer stop()
	for _, c := range []struct {
		workload string
		args     []string
		ops      []string
	}{
		{"ycsb-b", []string{"--preload", "2", "--threads", "4", "--duration", "2s", "--warmup", "0s"}, []string{"get", "upsert"}},
		{file, nil, []string{"delete", "get", "query", "range", "scan", "update", "upsert"}},
	} {
		engine := runJSON(t, nil, append([]string{"run", "--workload", c.workload}, c.args...)...)
		served := runJSON(t, csEnv(cs), append([]string{"run", "--workload", c.workload, "--target", "table"}, c.args...)...)
		for _, rec := range []map[string]any{engine, served} {
			ops, _ := rec["ops"].(map[string]any)
			if got := slices.Sorted(maps.Keys(ops)); !slices.Equal(got, c.ops) {
				t.Fatalf("%s: operations %v, want %v", c.workload, got, c.ops)
			}
			if rec["setup"].(map[string]any)["mix"] == nil {
				t.Fatalf("%s: no mix in the setup: %v", c.workload, rec["setup"])
			}
		}
		if a, b := shape(engine), shape(served); !slices.Equal(a, b) {
			t.Errorf("%s: the engine's record holds %v\nthe served engine's %v", c.workload, a, b)
		}
	}
}

// TestWorkloadsShowGivesAFileThatRunsTheSame: a preset shown as a file
// runs, from that file, to the same record for the same seed as the
// preset by name.
func TestWorkloadsShowGivesAFileThatRunsTheSame(t *testing.T) {
	code, listing, _ := tb(t, context.Background(), nil, "workloads")
	if code != 0 || !strings.Contains(listing, "ycsb-a ") || !strings.Contains(listing, "ycsb-f ") || !strings.Contains(listing, "case-batch ") {
		t.Fatalf("exit %d:\n%s", code, listing)
	}
	for _, name := range []string{"ycsb-d", "case-get"} {
		code, file, errOut := tb(t, context.Background(), nil, "workloads", "show", name)
		if code != 0 {
			t.Fatalf("show %s: exit %d %s", name, code, errOut)
		}
		path := filepath.Join(t.TempDir(), name+".yaml")
		os.WriteFile(path, []byte(file), 0o644)
		args := []string{"--seed", "7", "--duration", "2s", "--warmup", "1s"}
		byName := runJSON(t, nil, append([]string{"run", "--workload", name}, args...)...)
		byFile := runJSON(t, nil, append([]string{"run", "--workload", path}, args...)...)
		a, _ := json.Marshal(byName)
		b, _ := json.Marshal(byFile)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the preset and its file ran differently:\n%s\n%s", name, a, b)
		}
	}
	if code, _, errOut := tb(t, context.Background(), nil, "workloads", "show", "ycsb-z"); code != 2 || !strings.Contains(errOut, "ycsb-a, ycsb-b") {
		t.Fatalf("an unknown preset: exit %d, %q", code, errOut)
	}
}

// TestWorkloadFlagsOverrideItsFields: flags given beside --workload
// override its fields, and only those.
func TestWorkloadFlagsOverrideItsFields(t *testing.T) {
	rec := runJSON(t, nil, "run", "--workload", "ycsb-c", "--threads", "3", "--duration", "2s", "--warmup", "0s", "--preload", "1")
	setup := rec["setup"].(map[string]any)
	if setup["threads"].(float64) != 3 || setup["vms"].(float64) != 1 || setup["duration"] != "2s" || setup["rows_each"].(float64) != 1 {
		t.Fatalf("setup %v", setup)
	}
	if keys := setup["keys"].(map[string]any); keys["count"].(float64) != 1000 {
		t.Fatalf("keys %v: the workload's, which no flag set", keys)
	}
}

// TestWorkloadRunsOnItsProfilesClient: a workload that names no VM size
// runs on its profile's client, as a run of flags does; one that names its
// VM size, or a --vm-size beside it, keeps it.
func TestWorkloadRunsOnItsProfilesClient(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("mix: {get: 1}\npartitions: {count: 10}\nthreads: 2\nduration: 2s\nwarmup: 0s\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", plain, "--profile", "modern"}, "modern"},
		{[]string{"--workload", plain, "--profile", "wa2010"}, "xl"},
		{[]string{"--workload", plain, "--profile", "modern", "--vm-size", "small"}, "small"},
		{[]string{"--workload", "case-insert", "--profile", "modern", "--duration", "2s", "--warmup", "0s"}, "xl"}, // the case study's own
	} {
		rec := runJSON(t, nil, append([]string{"run"}, c.args...)...)
		if got := rec["setup"].(map[string]any)["vm_size"]; got != c.want {
			t.Errorf("%v: vm_size %v, want %s", c.args, got, c.want)
		}
	}
}

// TestWorkloadBadInput: a bad workload file, or a preset that does not
// exist, exits 2 with one line that names the field and its line, and
// creates nothing.
func TestWorkloadBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("mix: {get: 1}\npartitions:\n  count: 10\n  distribution: zipfian\n  theta: -1\n"), 0o644)
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("mix: {get: 1}\nthreds: 4\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", bad}, "--workload: workload file, line 5: partitions.theta: theta -1 is out of range"},
		{[]string{"--workload", bad, "--duration", "5s"}, "--workload: workload file, line 5: partitions.theta: theta -1 is out of range"},
		{[]string{"--workload", typo}, `--workload: workload file, line 2: "threds" is not a field of a workload`},
		{[]string{"--workload", "ycsb-z"}, `--workload: workload "ycsb-z" is neither a file nor a preset`},
		{[]string{"--workload", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"--workload", "ycsb-a", "--threads", "0"}, "--workload with --threads: 0 threads per VM is out of range"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, errOut := tb(t, context.Background(), nil, append(append([]string{"run"}, c.args...), "--out", out)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errOut, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was created", c.args, out)
		}
	}
}

// TestWorkloadFromStandardInput: --workload - reads the file from
// standard input, in JSON as in YAML.
func TestWorkloadFromStandardInput(t *testing.T) {
	var out, errOut bytes.Buffer
	file := `{"name": "piped", "mix": {"get": 3, "insert": 1}, "partitions": {"count": 20}, "threads": 2, "duration": "2s", "warmup": "0s"}`
	code := run(context.Background(), []string{"run", "--workload", "-", "--json", "--quiet"}, strings.NewReader(file), &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rec struct {
		Setup struct {
			Workload string             `json:"workload"`
			Mix      map[string]float64 `json:"mix"`
		} `json:"setup"`
		Ops map[string]any `json:"ops"`
	}
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil || rec.Setup.Workload != "piped" || rec.Setup.Mix["get"] != 3 || len(rec.Ops) != 2 {
		t.Fatalf("%v: %+v", err, rec)
	}
}
