package faults

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProbability: a rule with probability p fires on a share within 3
// standard deviations of p over 10,000 requests; every N fires exactly on
// every Nth; rules match only what they name.
func TestProbability(t *testing.T) {
	s := NewSet(7)
	s.Replace([]Rule{
		{Op: OpGet, Table: "orders", Probability: 0.2, Status: 503, Code: "ServerBusy"},
		{Op: OpInsert, PartitionKeyPrefix: "user-", Every: 10, Reset: true},
	})
	const n = 10000
	var gets, inserts, others int
	for i := range n {
		if _, ok := s.Match(Request{Op: OpGet, Table: "Orders", PartitionKey: "p"}); ok {
			gets++
		}
		if r, ok := s.Match(Request{Op: OpInsert, Table: "x", PartitionKey: "user-" + string(rune('a'+i%26))}); ok && r.Kind() == KindReset {
			inserts++
		}
		if _, ok := s.Match(Request{Op: OpGet, Table: "other", PartitionKey: "user-a"}); ok {
			others++
		}
	}
	sigma := math.Sqrt(n * 0.2 * 0.8)
	t.Logf("probability 0.2: fired %d of %d (expected %d, sigma %.0f); every 10: fired %d", gets, n, int(0.2*n), sigma, inserts)
	if d := math.Abs(float64(gets) - 0.2*n); d > 3*sigma {
		t.Errorf("probability 0.2 fired %d of %d times, more than 3 sigma (%.0f) from %d", gets, n, sigma, int(0.2*n))
	}
	if inserts != n/10 || others != 0 {
		t.Errorf("every 10 fired %d times, want %d; a rule fired %d times on what it does not name", inserts, n/10, others)
	}
}

// TestWindow: after and for open a window measured from when the rules
// were loaded.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewSet(1)
	s.now = func() time.Time { return now }
	s.Replace([]Rule{{After: Duration(10 * time.Second), For: Duration(5 * time.Second), Delay: Duration(time.Second)}})
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {9 * time.Second, false}, {10 * time.Second, true}, {14 * time.Second, true}, {15 * time.Second, false}} {
		now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(c.at)
		if _, ok := s.Match(Request{Op: OpGet}); ok != c.want {
			t.Errorf("at %v: fired %v, want %v", c.at, ok, c.want)
		}
	}
}

// TestBadRules: every bad rules file is refused with one line that names
// the rule and what to fix.
func TestBadRules(t *testing.T) {
	for body, want := range map[string]string{
		"":                    "the faults file is empty",
		"faults: [{op: get}]": "fault 1 does nothing",
		"faults: [{op: gett, status: 503, code: ServerBusy}]":                          `op "gett" is not known`,
		"faults: [{status: 503}]":                                                      "needs a code",
		"faults: [{status: 200, code: OK}]":                                            "not an error status",
		"faults: [{probability: 1.5, reset: true}]":                                    "probability 1.5 is out of range",
		"faults: [{probability: 0.5, every: 2, reset: true}]":                          "probability or every, not both",
		"faults: [{delay: soon}]":                                                      `"soon" is not a duration`,
		"faults: [{colour: red, reset: true}]":                                         "field colour not found",
		"faults: [{reset: true, truncate: true}]":                                      "more than one thing",
		"faults: [{name: slow, reset: true}, {name: odd, op: table, unavailable: 1s}]": "fault 2 (odd)",
		"faults: []\n---\nfaults: [{op: get, status: 503, code: ServerBusy}]":          "line 2: a second YAML document",
		"faults: [": "not valid",
	} {
		_, err := Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", body, err, want)
		}
	}
	for header, want := range map[string]string{
		"status=503":        "needs a code",
		"status=abc;code=X": `status="abc" is not valid`,
		"colour=red":        `"colour" is not a fault field`,
		"":                  "is empty",
		"delay=-1s":         `delay="-1s" is not valid`,
	} {
		if _, err := ParseHeader(header); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("header %q: %v, want %q", header, err, want)
		}
	}
	if r, err := ParseHeader("status=503; code=ServerBusy"); err != nil || r.Status != 503 || r.Code != "ServerBusy" {
		t.Errorf("%+v %v", r, err)
	}
	if r, err := ParseHeader("reset"); err != nil || !r.Reset {
		t.Errorf("%+v %v", r, err)
	}
}

// TestWatchKeepsRulesOnABadFile: a rules file that changes is reloaded; one
// that no longer parses is reported and the rules in force are kept.
func TestWatchKeepsRulesOnABadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.yaml")
	os.WriteFile(path, []byte("faults: [{op: get, reset: true}]\n"), 0o644)
	s := NewSet(1)
	var mu sync.Mutex
	var reports []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Watch(ctx, s, path, 5*time.Millisecond, func(m string) { mu.Lock(); reports = append(reports, m); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s; reports: %q", what, reports)
			}
		}
	}
	os.WriteFile(path, []byte("faults: [{op: get, delay: 1s}, {op: insert, reset: true}]\n"), 0o644)
	wait("the changed file was not loaded", func() bool { return len(s.Rules()) == 2 })
	os.WriteFile(path, []byte("faults: [{op: nope, reset: true}]\n"), 0o644)
	wait("the bad file was not reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		last := ""
		if len(reports) > 0 {
			last = reports[len(reports)-1]
		}
		return strings.Contains(last, `op "nope" is not known`) && strings.Contains(last, "keeping the 2 rules in force")
	})
	if len(s.Rules()) != 2 {
		t.Fatalf("the bad file replaced the rules: %+v", s.Rules())
	}
	if err := Watch(ctx, NewSet(1), filepath.Join(t.TempDir(), "none.yaml"), time.Second, func(string) {}); err == nil {
		t.Fatal("a missing rules file was accepted")
	}
}
