package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads/aztarget"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// countEngines counts the engine targets built until the test ends.
func countEngines(t *testing.T) *int {
	n := new(int)
	t.Cleanup(func() { newEngineTarget = enginetarget.New })
	newEngineTarget = func(cfg engine.Config) (*enginetarget.Target, error) {
		*n++
		return enginetarget.New(cfg)
	}
	return n
}

// TestSuiteChecksFlagsWithoutAnEngine: a suite checks its target flags,
// good or bad, without building an engine; engines are built to run, and a
// suite that stops before its runs (its --out already holds results)
// builds none.
func TestSuiteChecksFlagsWithoutAnEngine(t *testing.T) {
	n := countEngines(t)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "results.json"), []byte(`{"runs":[{"id":"x"}]}`), 0o644)
	for _, args := range [][]string{
		{"figures", "--quick", "--only", "3", "--out", out},
		{"sweep", "--vms", "1,2", "--out", out},
		{"figures", "--quick", "--only", "3", "--balancer", "sometimes"},
		{"sweep", "--vms", "1,2", "--profile", "none"},
	} {
		code, _, errOut := tb(t, context.Background(), nil, args...)
		if code != 2 || *n != 0 {
			t.Fatalf("%v: exit %d, %d engine(s) built, want exit 2 and none\n%s", args, code, *n, errOut)
		}
	}
}

// TestSuiteResolvesItsEndpointOnce: a suite against a Table endpoint
// resolves the endpoint its flags name once, to record it and to ask
// before sending anything off this machine; it builds no second target to
// ask.
func TestSuiteResolvesItsEndpointOnce(t *testing.T) {
	t.Chdir(t.TempDir())
	n := 0
	t.Cleanup(func() { newTableTarget = aztarget.New })
	newTableTarget = func(cfg aztarget.Config) (*aztarget.Target, error) {
		n++
		return aztarget.New(cfg)
	}
	getenv := func(k string) string {
		if k == "MY_KEY" {
			return aztarget.DevelopmentKey
		}
		return ""
	}
	for _, cmd := range [][]string{{"figures", "--quick", "--only", "3"}, {"sweep", "--vms", "1,2"}} {
		n = 0
		args := append(cmd, "--target", "table", "--endpoint", "https://tablebench-test.invalid/acct", "--auth", "key", "--account-key-env", "MY_KEY")
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader("n\n"), &out, &errOut, getenv)
		if code != 2 || !strings.Contains(errOut.String(), "not confirmed") || n != 1 {
			t.Fatalf("%v, declined: exit %d, %d Table target(s) built, want exit 2 and one\n%s", cmd, code, n, errOut.String())
		}
	}
}
