package advise_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/advise"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// testConfig runs candidates on the engine in virtual time, briefly.
func testConfig() advise.Config {
	cfg := advise.DefaultConfig()
	cfg.Warmup, cfg.Duration, cfg.Parallel, cfg.Multiples = 5*time.Second, 20*time.Second, 1, nil
	cfg.Profile = engine.ProfileByName
	cfg.NewTarget = func(name string, seed uint64) (workloads.Target, func(), error) {
		p, err := engine.ProfileByName(name)
		if err != nil {
			return nil, nil, err
		}
		ec := engine.DefaultConfig()
		ec.Profile, ec.Seed, ec.PreSplit, ec.TimeScale = p, seed, p.SteadySplit(), 1
		ec.Balancer = engine.AcceleratedBalancerConfig()
		ec.Clock = clock.NewVirtual(time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC))
		tg, err := enginetarget.New(ec)
		if err != nil {
			return nil, nil, err
		}
		return tg, func() { tg.Close() }, nil
	}
	return cfg
}

// TestGuidesCases checks the advisor against the partitioning guides' own
// cases: the ranking and the reason each gives.
func TestGuidesCases(t *testing.T) {
	cases := []struct {
		name, file string
		first      string // the winner; "" for a tie
		last       string
		why        string // in the last one's reason
	}{
		{"append-only against hash-prefixed keys", `
mix: {insert: 100}
target_rate: 4000
candidates:
  - {name: by-time, partitions: {scheme: append}}
  - {name: hashed, partitions: {scheme: fixed, count: 1, buckets: 32}}
`, "hashed", "by-time", "newest range partition"},
		{"one PartitionKey against many", `
mix: {insert: 100}
target_rate: 3000
candidates:
  - {name: one-key, partitions: {scheme: fixed, count: 1}}
  - {name: many-keys, partitions: {scheme: fixed, count: 10000}}
`, "many-keys", "one-key", "One PartitionKey takes 100% of the requests"},
		{"a skewed tenant key against the same key with buckets", `
mix: {insert: 80, get: 20}
target_rate: 8000
partitions: {scheme: fixed, count: 20, distribution: zipfian, theta: 0.99}
candidates:
  - {name: tenant, partitions: {scheme: fixed, count: 20, distribution: zipfian, theta: 0.99}}
  - {name: tenant-16-buckets, partitions: {scheme: fixed, count: 20, distribution: zipfian, theta: 0.99, buckets: 16}}
`, "tenant-16-buckets", "tenant", "One PartitionKey takes"},
		{"a light load where nothing matters", `
mix: {insert: 100}
target_rate: 200
candidates:
  - {name: by-time, partitions: {scheme: append}}
  - {name: hashed, partitions: {scheme: fixed, count: 1, buckets: 32}}
`, "", "", "carries the target"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := advise.Parse([]byte(c.file))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := advise.Advise(context.Background(), testConfig(), f)
			if err != nil {
				t.Fatal(err)
			}
			v := rep.Winner[0]
			rows := rep.Candidates
			for _, r := range rows {
				t.Logf("%d %s tie=%v carries=%v %.0f/s throttled %.2f%%: %s", r.Rank, r.Name, r.Tie, r.Carries, r.SuccessPerSec, r.ThrottledPct, r.Why)
			}
			t.Logf("verdict: %s", v.Summary)
			if c.first == "" {
				if v.Winner != "" || len(v.Tied) != len(rows) || !strings.HasPrefix(v.Summary, "No design is better at 200 requests/s") {
					t.Fatalf("a light load: want every candidate tied and no winner, got winner %q, tied %v: %s", v.Winner, v.Tied, v.Summary)
				}
				for _, r := range rows {
					if r.Rank != 1 || !r.Tie || !strings.Contains(r.Why, c.why) {
						t.Errorf("%s: rank %d tie %v, why %q: want 1=, saying %q", r.Name, r.Rank, r.Tie, r.Why, c.why)
					}
				}
				return
			}
			if v.Winner != c.first || rows[0].Name != c.first || rows[0].Rank != 1 || rows[0].Tie || !rows[0].Carries {
				t.Fatalf("winner %q (first row %s, rank %d, carries %v), want %s carrying the target alone", v.Winner, rows[0].Name, rows[0].Rank, rows[0].Carries, c.first)
			}
			last := rows[len(rows)-1]
			if last.Name != c.last || last.Rank != 2 || last.Carries {
				t.Fatalf("last %s rank %d carries %v, want %s ranked 2 and not carrying", last.Name, last.Rank, last.Carries, c.last)
			}
			if !strings.Contains(last.Why, c.why) {
				t.Errorf("%s's reason %q does not say %q", last.Name, last.Why, c.why)
			}
		})
	}
}

// TestParseRefuses checks that an advise file's mistakes are refused in
// one line naming the field and its line, before anything runs.
func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown field", "mix: {insert: 100}\ntarget_rate: 10\ncandidate: []\n", `line 3: "candidate" is not a field of a workload`},
		{"unknown field in a candidate", "mix: {insert: 100}\ntarget_rate: 10\ncandidates:\n  - {name: a, partitions: {scheme: append}}\n  - name: b\n    partition: {scheme: fixed}\n", `line 6: "partition" is not a field`},
		{"unknown field in a candidate's partitions", "target_rate: 10\ncandidates:\n  - {name: a, partitions: {scheme: append}}\n  - name: b\n    partitions: {sheme: fixed}\n", `line 5: "partitions.sheme"`},
		{"no target", "mix: {insert: 100}\ncandidates: [{name: a}, {name: b}]\n", "give target_rate"},
		{"bad target", "target_rate: fast\ncandidates: [{name: a}, {name: b}]\n", "line 1: target_rate"},
		{"one candidate", "target_rate: 10\ncandidates: [{name: a}]\n", "two or more key designs"},
		{"no name", "target_rate: 10\ncandidates: [{name: a}, {partitions: {scheme: append}}]\n", "has no name"},
		{"two names alike", "target_rate: 10\ncandidates: [{name: a}, {name: a}]\n", `"a" names two candidates`},
		{"a candidate's value out of range", "target_rate: 10\ncandidates:\n  - {name: a}\n  - name: b\n    partitions: {scheme: fixed, count: 0}\n", "candidate b: workload file, line 5: partitions.count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := advise.Parse([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line containing %q", err, c.want)
			}
		})
	}
}
