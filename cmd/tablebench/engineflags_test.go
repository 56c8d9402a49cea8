package main

import (
	"context"
	"encoding/json"
	"github.com/tablebench/tablebench/workloads"
	"strings"
	"testing"
	"time"
)

// TestServeTakesRunsEngineFlags: every engine flag run has, serve has
// under the same name, and so the account key's variable; the older
// --key-env still parses and is not listed in the help.
func TestServeTakesRunsEngineFlags(t *testing.T) {
	e := &env{getenv: func(string) string { return "" }}
	runFS, _ := newRunFlags(e)
	serveFS, _ := newServeFlags(e)
	for _, name := range append(engineFlagNames, "account-key-env", "account") {
		if runFS.Lookup(name) == nil || serveFS.Lookup(name) == nil {
			t.Errorf("--%s: run has it: %v, serve has it: %v; an engine flag has one name everywhere", name, runFS.Lookup(name) != nil, serveFS.Lookup(name) != nil)
		}
	}
	_, help, _ := tb(t, context.Background(), nil, "serve", "-h")
	if strings.Count(help, "-account-key-env ") != 1 || strings.Contains(help, "\n  -key-env") || !strings.Contains(help, "serve answers clients in wall time, so its default is 1") {
		t.Errorf("serve's help:\n%s", help)
	}
}

// TestServeUsesTheEngineFlags: serve takes the engine flags run takes,
// with their names: the balancer, the time scale, the account key's
// variable (and its older name).
func TestServeUsesTheEngineFlags(t *testing.T) {
	const key = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTIzNA=="
	getenv := func(k string) string {
		if k == "SERVE_KEY" {
			return key
		}
		return ""
	}
	for _, args := range [][]string{
		{"--balancer", "off", "--time-scale", "2", "--account-key-env", "SERVE_KEY"},
		{"--key-env", "SERVE_KEY"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errOut syncBuffer
		done := make(chan int)
		go func() {
			done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), &out, &errOut, getenv)
		}()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "connection string") && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != 0 || !strings.Contains(out.String(), "AccountKey=<the value of $SERVE_KEY>") {
			t.Errorf("serve %v: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
	}
}

// TestRunTakesServesBudgets: run takes the budgets serve takes, by the
// same names, says so in its configuration line, and its engine holds
// them: one PartitionKey held to 100 entities/s throttles 10 threads.
func TestRunTakesServesBudgets(t *testing.T) {
	code, out, errOut := tb(t, context.Background(), nil, "run", "--json", "--profile", "modern", "--partition-rate", "100", "--partition", "shared", "--threads", "10", "--duration", "5s", "--warmup", "0s")
	var res struct {
		EntitiesPerSec float64 `json:"entities_per_sec"`
		ThrottledPct   float64 `json:"throttled_pct"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !strings.Contains(errOut, "100 entities/s per PartitionKey") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if res.ThrottledPct == 0 || res.EntitiesPerSec > 150 {
		t.Fatalf("under a budget of 100 entities/s: %.0f entities/s, %.1f%% throttled", res.EntitiesPerSec, res.ThrottledPct)
	}
}

// TestRUFlagsAreChecked: --ru and --ru-max take the documented range,
// one at a time, and only under the cosmos profile; each mistake is one
// line and exit 2.
func TestRUFlagsAreChecked(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ru", "1000"}, "use them with --profile cosmos"},
		{[]string{"--profile", "cosmos", "--ru", "100"}, "--ru 100 is out of range: use 400 to 1000000 RU/s"},
		{[]string{"--profile", "cosmos", "--ru", "NaN"}, "--ru NaN is out of range"},
		{[]string{"--profile", "cosmos", "--ru-max", "500"}, "--ru-max 500 is out of range: use 1000 to 1000000 RU/s"},
		{[]string{"--profile", "cosmos", "--ru", "1000", "--ru-max", "2000"}, "give one"},
		{[]string{"--profile", "cosmos", "--partition-rate", "100"}, "use --ru or --ru-max"},
	} {
		code, _, errOut := tb(t, context.Background(), nil, append([]string{"run", "--duration", "1s"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("run %v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestRunUnderCosmosRecordsRequestUnits: a hot key under --profile cosmos
// --ru 1000 is held to its 1,000 RU/s (200 writes of 1 KB a second), and
// the record says so: request units per second, 429s counted as
// throttled, their retry-afters; the summary names them.
func TestRunUnderCosmosRecordsRequestUnits(t *testing.T) {
	code, out, errOut := tb(t, context.Background(), nil, "run", "--json", "--profile", "cosmos", "--ru", "1000", "--partition", "shared", "--threads", "10", "--duration", "5s", "--warmup", "1s", "--retry", "sdk")
	var res struct {
		EntitiesPerSec     float64          `json:"entities_per_sec"`
		ThrottledPct       float64          `json:"throttled_pct"`
		RequestUnitsPerSec float64          `json:"request_units_per_sec"`
		Errors             map[string]int64 `json:"errors"`
		RetryAfterMs       *struct {
			Count int64   `json:"count"`
			Max   float64 `json:"max"`
		} `json:"retry_after_ms"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !strings.Contains(errOut, "1000 RU/s per table") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if res.RequestUnitsPerSec < 950 || res.RequestUnitsPerSec > 1050 || res.EntitiesPerSec < 190 || res.EntitiesPerSec > 210 {
		t.Errorf("%.0f RU/s, %.0f entities/s: want the provisioned 1,000 RU/s, 200 writes/s", res.RequestUnitsPerSec, res.EntitiesPerSec)
	}
	if res.Errors["RequestRateTooLarge"] == 0 || res.ThrottledPct == 0 || res.RetryAfterMs == nil || res.RetryAfterMs.Count != res.Errors["RequestRateTooLarge"] || res.RetryAfterMs.Max > 1000 {
		t.Errorf("429s: errors %v, %.2f%% throttled, retry-after %+v", res.Errors, res.ThrottledPct, res.RetryAfterMs)
	}
	code, out, _ = tb(t, context.Background(), nil, "run", "--profile", "cosmos", "--ru", "1000", "--partition", "shared", "--threads", "10", "--duration", "3s", "--warmup", "0s")
	if code != 0 || !strings.Contains(out, "RequestRateTooLarge") || !strings.Contains(out, "RU/s (") || !strings.Contains(out, "retry-after ms") {
		t.Errorf("the summary does not show request units and 429s:\n%s", out)
	}
}

// TestSuiteRunsTakeTheirOwnThroughput: in a suite, --ru provisions the
// runs on the cosmos profile; a run whose figure provisions its own keeps
// it, and a run an experiment puts on another profile has none to
// provision, so the flag does not refuse it.
func TestSuiteRunsTakeTheirOwnThroughput(t *testing.T) {
	s := &suiteFlags{tf: targetFlags{target: "engine", engineFlags: engineFlags{profile: "cosmos", ru: 20000, latencyScale: 1, balancer: "default"}}}
	for _, c := range []struct {
		setup  workloads.EngineSetup
		wantRU float64
	}{
		{workloads.EngineSetup{}, 20000},
		{workloads.EngineSetup{Profile: "cosmos", RU: 50000}, 50000},
		{workloads.EngineSetup{Profile: "wa2010"}, 0},
	} {
		tf, err := s.targetFor(workloads.PlannedRun{Engine: c.setup})
		if err != nil {
			t.Fatalf("%+v: %v", c.setup, err)
		}
		cfg, err := tf.config(1)
		if err != nil {
			t.Fatalf("%+v: %v", c.setup, err)
		}
		if tf.ru != c.wantRU || (c.wantRU > 0 && cfg.Profile.RU != c.wantRU) {
			t.Errorf("%+v: --ru %v, profile RU %v; want %v", c.setup, tf.ru, cfg.Profile.RU, c.wantRU)
		}
	}
}
