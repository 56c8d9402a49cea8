package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
)

// The real-service path end to end: runs and a short figure suite through
// the Azure SDK against Azurite. A suite's runs take wall time there, so it
// is kept to three.
func TestRunsAgainstAzurite(t *testing.T) {
	_, cs := azurite.Start(t)
	getenv := csEnv(cs)
	for _, args := range [][]string{
		{"--op", "insert", "--threads", "4"},
		{"--op", "batch", "--batch-size", "100", "--partition", "shared", "--vms", "2", "--threads", "2"},
		{"--op", "get", "--threads", "3", "--preload", "20"},
		{"--op", "query", "--batch-size", "10", "--threads", "2", "--preload", "30"},
	} {
		code, out, errOut := tb(t, context.Background(), getenv, append([]string{"run", "--target", "table", "--duration", "2s", "--warmup", "0s", "--json", "--quiet"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var r struct {
			EntitiesPerSec float64                           `json:"entities_per_sec"`
			Errors         map[string]int64                  `json:"errors"`
			Env            struct{ Target, Endpoint string } `json:"environment"`
		}
		json.Unmarshal([]byte(out), &r)
		if r.EntitiesPerSec <= 0 || len(r.Errors) != 0 || r.Env.Target != "table" || strings.Contains(out, azurite.DevKey) {
			t.Fatalf("%v: %s", args, out)
		}
	}
	dir := t.TempDir()
	code, out, errOut := tb(t, context.Background(), getenv, "figures", "--target", "table", "--quick", "--only", "3,4", "--duration", "2s", "--warmup", "0s", "--out", dir)
	if code != 0 {
		t.Fatalf("figures against Azurite: exit %d\n%s\n%s", code, out, errOut)
	}
	set := readSet(t, dir)
	if len(set.Runs) != 3 {
		t.Fatalf("%d runs stored", len(set.Runs))
	}
	for _, r := range set.Runs {
		if len(r.Errors) != 0 || r.Totals.Requests == 0 || r.Env.Target != "table" {
			t.Fatalf("run %s against Azurite: %d requests, errors %v", r.ID, r.Totals.Requests, r.Errors)
		}
	}
}
