package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads/advise"
)

// adviseFile writes an advise file of two candidates at a light load, and
// returns its path.
func writeAdviseFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "designs.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const lightAdvice = `mix: {insert: 80, get: 20}
target_rate: 300
profiles: [modern, cosmos]
candidates:
  - name: by-time
    partitions: {scheme: append}
  - name: spread
    partitions: {scheme: fixed, count: 1000}
`

var quickAdvise = []string{"--quiet", "--warmup=2s", "--duration=10s"}

// TestAdviseRefusesBadInput checks that a bad file or flag is refused in
// one line, exit 2, before anything runs.
func TestAdviseRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		name, file string
		args       []string
		want       string
	}{
		{"unknown field", "mix: {insert: 1}\ntarget_rate: 10\ncandidates: [{name: a}, {name: b, partitions: {scheme: append, countt: 2}}]\n", nil, `line 3: "partitions.countt" is not a field of partitions`},
		{"unknown profile", "target_rate: 10\nprofiles: [moden]\ncandidates: [{name: a}, {name: b}]\n", nil, `profiles: unknown profile "moden"`},
		{"a profile that models no service", "mix: {insert: 1}\ntarget_rate: 10\nprofiles: [modern, none]\ncandidates: [{name: a}, {name: b}]\n", nil, "profiles: profile none models no service"},
		{"malformed threshold", lightAdvice, []string{"--threshold", "p99<50"}, "flag -threshold: p99 is a latency: give its unit"},
		{"threshold on an operation none does", lightAdvice, []string{"--threshold", "batch.p99<50ms"}, "no run here does batch requests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"advise", writeAdviseFile(t, c.file), "--out", out}, c.args...)
			code, stdout, stderr := tb(t, context.Background(), nil, args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line saying %q", code, stderr, c.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("bad input wrote %d files into --out", len(entries))
			}
		})
	}
}

// TestAdviseJSONAndThresholds checks --json's object (every candidate
// under every profile, ranked, a winner or a tie per profile) and that a
// threshold the leaders all fail exits 4, one a losing candidate alone
// fails does not.
func TestAdviseJSONAndThresholds(t *testing.T) {
	file := writeAdviseFile(t, lightAdvice)
	code, out, errOut := tb(t, context.Background(), nil, append([]string{"advise", file, "--json", "--threshold", "p99<1us"}, quickAdvise...)...)
	if code != exitThreshold {
		t.Fatalf("a bar every leader fails: exit %d, want %d\n%s", code, exitThreshold, errOut)
	}
	var rep struct {
		Candidates []struct {
			Name, Profile  string
			Rank           int
			Tie            bool
			EntitiesPerSec float64                          `json:"entities_per_sec"`
			ThrottledPct   *float64                         `json:"throttled_pct"`
			LatencyMs      map[string]struct{ P99 float64 } `json:"latency_ms"`
			Hottest        struct{ Kind string }            `json:"hottest_partition"`
			Why            string
		}
		Winner []struct {
			Profile, Winner, Summary string
			Tied                     []string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Candidates) != 4 || len(rep.Winner) != 2 {
		t.Fatalf("%d candidates, %d verdicts: want 2 x 2 and one per profile", len(rep.Candidates), len(rep.Winner))
	}
	for _, c := range rep.Candidates {
		if c.Rank < 1 || c.EntitiesPerSec <= 0 || c.ThrottledPct == nil || c.LatencyMs["insert"].P99 <= 0 || c.Hottest.Kind == "" || c.Why == "" {
			t.Errorf("candidate %+v lacks a field", c)
		}
	}
	for _, v := range rep.Winner {
		if (v.Winner == "") == (len(v.Tied) == 0) || v.Summary == "" {
			t.Errorf("profile %s: winner %q, tied %v: want one or the other", v.Profile, v.Winner, v.Tied)
		}
	}
	// A bar every candidate clears: the command passes and says so.
	code, out, errOut = tb(t, context.Background(), nil, append([]string{"advise", file, "--threshold", "p99<1s"}, quickAdvise...)...)
	if code != 0 || !strings.Contains(out, "PASS  modern/") {
		t.Fatalf("a bar the leaders clear: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestAdvisePageInBrowser opens the page advise --out writes, network off,
// and the page report rebuilds from its directory: each candidate's heat
// map drawn, nothing cut; it leaves a screenshot for people to look at.
func TestAdvisePageInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	suite(t, append([]string{"advise", writeAdviseFile(t, lightAdvice), "--out", dir}, quickAdvise...)...)
	os.Remove(filepath.Join(dir, "index.html"))
	if out := suite(t, "report", dir); !strings.Contains(out, filepath.Join(dir, "index.html")) {
		t.Fatalf("report did not rebuild the page: %s", out)
	}
	checkCharts(t, browser, dir)
	url := "file://" + filepath.Join(dir, "index.html")
	dom := headless(t, browser, "--dump-dom", url)
	for _, want := range []string{"Profile modern", "Profile cosmos", "Where the load lands under modern", "by-time", "spread", "gives up", "hottest partition"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page shows no %q", want)
		}
	}
	if n := strings.Count(dom, `class="item"`); n != 4 {
		t.Errorf("%d charts, want a heat map per candidate per profile (4)", n)
	}
	shots := filepath.Join(os.TempDir(), "tablebench-browser")
	os.MkdirAll(shots, 0o755)
	png := filepath.Join(shots, "advise.png")
	headless(t, browser, "--screenshot="+png, "--window-size=1100,2400", url)
	if st, err := os.Stat(png); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", png, err)
	}
	t.Logf("screenshot: %s", png)
}

// TestAdviseThresholdsJudgeTheLeaders checks whose bars fail the command:
// a profile's winner, or, on a tie, every tied candidate; never a
// candidate advise does not recommend.
func TestAdviseThresholdsJudgeTheLeaders(t *testing.T) {
	p99 := map[string]float64{"best": 10, "worst": 900, "tied-a": 10, "tied-b": 900}
	for _, c := range []struct {
		name       string
		winner     string
		tied       []string
		threshold  string
		wantFailed int
	}{
		{"the winner clears it, a loser fails", "best", nil, "p99<50ms", 0},
		{"the winner fails it", "best", nil, "p99<5ms", 1},
		{"one of the tied fails it", "", []string{"tied-a", "tied-b"}, "p99<50ms", 0},
		{"every tied one fails it", "", []string{"tied-a", "tied-b"}, "p99<5ms", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			names := []string{"best", "worst"}
			if c.winner == "" {
				names = c.tied
			}
			var rep advise.Report
			for _, n := range names {
				rep.Candidates = append(rep.Candidates, advise.Row{Name: n, Profile: "modern", Run: n})
			}
			rep.Winner = []advise.Verdict{{Profile: "modern", Winner: c.winner, Tied: c.tied}}
			if err := rep.Attach(func(id string) (*results.Run, error) {
				return &results.Run{ID: id, SuccessLatencyMs: results.Percentiles{Count: 100, P99: p99[id]}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			var ts thresholdFlags
			if err := ts.Set(c.threshold); err != nil {
				t.Fatal(err)
			}
			if got := checkAdvice(&rep, ts); got != c.wantFailed {
				t.Fatalf("%d failed, want %d", got, c.wantFailed)
			}
			for _, row := range rep.Candidates {
				if len(row.Thresholds) != 1 {
					t.Fatalf("%s: %d thresholds checked, want every candidate's", row.Name, len(row.Thresholds))
				}
			}
		})
	}
}
