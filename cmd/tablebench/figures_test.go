package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/results"
)

// suite runs `figures` in process and fails the test unless it exits 0.
func suite(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := tb(t, context.Background(), os.Getenv, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	return out
}

func readSet(t *testing.T, dir string) *results.Set {
	t.Helper()
	d, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &d.Set
}

var remote = regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`)

func TestFiguresQuick(t *testing.T) {
	dir := t.TempDir()
	out := suite(t, "figures", "--quick", "--only", "3,4", "--out", dir)
	for _, want := range []string{"C3.1   PASS", "C3.2   PASS", "C4.1   PASS", "C4.2   PASS", "4 of 4 claims pass", "report: " + filepath.Join(dir, "index.html")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	set := readSet(t, dir)
	if len(set.Runs) != 3 || len(set.Claims) != 4 || set.Mode != "quick" {
		t.Fatalf("results.json: %d runs, %d claims, mode %s", len(set.Runs), len(set.Claims), set.Mode)
	}
	for _, f := range []string{"index.html", "fig03.html", "fig04.html", "fig03.csv", "fig04.csv", "claims.csv", "assets/echarts.min.js", "fig03-get-x1.hlog", "fig04-batch-of-100-x100.hlog"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	for _, f := range []string{"index.html", "fig03.html"} {
		html, _ := os.ReadFile(filepath.Join(dir, f))
		if remote.Match(html) {
			t.Errorf("%s loads something from the network: %s", f, remote.Find(html))
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "fig03.csv"))
	if !bytes.HasPrefix(csv, []byte("series,x,y,run,")) || bytes.Count(csv, []byte("\n")) != 3 {
		t.Fatalf("fig03.csv:\n%s", csv)
	}

	// The report rebuilds from stored results alone, the same every time.
	before, _ := os.ReadFile(filepath.Join(dir, "fig04.html"))
	os.Remove(filepath.Join(dir, "fig04.html"))
	suite(t, "report", dir)
	after, _ := os.ReadFile(filepath.Join(dir, "fig04.html"))
	if len(after) == 0 || !bytes.Equal(before, after) {
		t.Fatal("the rebuilt report differs from the first")
	}

	// A used directory needs --resume; --resume runs nothing stored.
	if code, _, errOut := tb(t, context.Background(), os.Getenv, "figures", "--quick", "--only", "3,4", "--out", dir); code != 2 || !strings.Contains(errOut, "--resume") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	stat, _ := os.Stat(filepath.Join(dir, "fig03-get-x1.hlog"))
	code, _, errOut := tb(t, context.Background(), os.Getenv, "figures", "--quick", "--only", "3,4", "--out", dir, "--resume")
	stat2, _ := os.Stat(filepath.Join(dir, "fig03-get-x1.hlog"))
	if code != 0 || !strings.Contains(errOut, "3 of 3 runs already stored") || !stat.ModTime().Equal(stat2.ModTime()) {
		t.Fatalf("resume: exit %d, %s", code, errOut)
	}
	if figs := readSet(t, dir).Figures; len(figs) != 2 {
		t.Fatalf("after a resume the set lists figures %v, want [3 4] once", figs)
	}
	// A run whose interval log went missing is run again.
	os.Remove(filepath.Join(dir, "fig03-get-x1.hlog"))
	code, _, errOut = tb(t, context.Background(), os.Getenv, "figures", "--quick", "--only", "3,4", "--out", dir, "--resume")
	if _, err := os.Stat(filepath.Join(dir, "fig03-get-x1.hlog")); code != 0 || err != nil || !strings.Contains(errOut, "2 of 3 runs already stored") {
		t.Fatalf("resume with a missing .hlog: exit %d, %v, %s", code, err, errOut)
	}
	// Results are readable by everyone, as files usually are.
	for _, f := range []string{"index.html", "results.json", "fig03-get-x1.hlog"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f, st.Mode().Perm())
		}
	}
	// A second process writing the same directory is refused.
	d, err := results.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Lock(); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = tb(t, context.Background(), os.Getenv, "figures", "--quick", "--only", "3", "--out", dir, "--resume")
	d.Close()
	if code != 2 || !strings.Contains(errOut, "another tablebench process") {
		t.Fatalf("a second writer: exit %d, %s", code, errOut)
	}
	// --resume of a directory that holds no suite starts nothing.
	none := filepath.Join(t.TempDir(), "none")
	code, _, errOut = tb(t, context.Background(), os.Getenv, "figures", "--quick", "--only", "3", "--out", none, "--resume")
	if _, err := os.Stat(none); code != 2 || !strings.Contains(errOut, "no suite there") || err == nil {
		t.Fatalf("resume of nothing: exit %d, %s", code, errOut)
	}
}

func TestFiguresInterruptedThenResumed(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // interrupt once the first runs are stored
		// By their interval logs, written as each run is stored: the set's
		// file is rewritten only every two seconds, and the whole suite
		// can take less.
		for {
			if logs, _ := filepath.Glob(filepath.Join(dir, "*.hlog")); len(logs) >= 2 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	code, _, errOut := tb(t, ctx, os.Getenv, "figures", "--quick", "--only", "8", "--out", dir, "--parallel", "1")
	if code != 1 || !strings.Contains(errOut, "--resume --out "+dir) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	kept := len(readSet(t, dir).Runs)
	if kept < 2 || kept >= 16 {
		t.Fatalf("%d runs stored after the interrupt", kept)
	}
	suite(t, "figures", "--quick", "--only", "8", "--out", dir, "--resume")
	set := readSet(t, dir)
	if len(set.Runs) != 16 || len(set.Claims) != 4 {
		t.Fatalf("after resuming: %d runs, %d claims", len(set.Runs), len(set.Claims))
	}
}

func TestSweepAndCompare(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	args := []string{"sweep", "--op", "batch", "--batch-size", "10,100", "--vms", "1,2,4", "--threads", "5", "--partition", "guid", "--duration", "10s", "--warmup", "2s", "--name", "mine"}
	suite(t, append(args, "--out", a)...)
	suite(t, append(args, "--out", b, "--profile", "modern")...)
	set := readSet(t, a)
	if set.Mode != "sweep" || len(set.Runs) != 6 {
		t.Fatalf("sweep stored %d runs, mode %s", len(set.Runs), set.Mode)
	}
	if _, err := os.Stat(filepath.Join(a, "mine.html")); err != nil {
		t.Fatal(err)
	}
	if idx, _ := os.ReadFile(filepath.Join(a, "index.html")); !bytes.Contains(idx, []byte("<title>tablebench sweep: ")) || bytes.Contains(idx, []byte("case study, reproduced")) {
		t.Fatal("the sweep's index is not titled after the sweep")
	}
	suite(t, "report", a)
	report := filepath.Join(t.TempDir(), "cmp")
	out := suite(t, "compare", a, b, "--out", report)
	if !strings.Contains(out, "6 runs, 30 differences: ") || !strings.Contains(out, "fig100-batch-size-10-x4") {
		t.Fatalf("compare output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(report, "index.html")); err != nil {
		t.Fatal(err)
	}
}

func TestSuiteBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("vms: [1]\ncolour: blue\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"figures", "--only", "2"}, "figure 2 is not in the catalog"},
		{[]string{"figures", "--only", "3,x"}, `"x" is not a figure number`},
		{[]string{"figures", "--profile", "none"}, "--profile none has no modelled time"},
		{[]string{"figures", "--resume"}, "--resume needs --out"},
		{[]string{"figures", "--only", ""}, "--only is empty"},
		{[]string{"figures", "--parallel", "0"}, "--parallel 0"},
		{[]string{"sweep"}, "a sweep needs at least one list"},
		{[]string{"sweep", "--vms", "1,x"}, `--vms: "x" is not a whole number`},
		{[]string{"sweep", "--file", filepath.Join(dir, "nope.yaml")}, "--file:"},
		{[]string{"sweep", "--file", filepath.Join(dir, "bad.yaml")}, `"colour" is not a sweep key; use name, title`},
		{[]string{"sweep", "--file", filepath.Join(dir, "bad.yaml"), "--vms", "2"}, "either in --file or in list flags"},
		{[]string{"sweep", "--op", "fly"}, `op "fly" is not known`},
		{[]string{"report"}, "give one result directory"},
		{[]string{"report", dir}, "holds no results"},
		{[]string{"compare", dir}, "give two result directories"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := tb(t, context.Background(), os.Getenv, tc.args...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tc.want)
			}
		})
	}
}

// TestWallTimeSuiteSaysHowLong: before a wall-time suite starts, it says
// how long its runs are planned to take.
func TestWallTimeSuiteSaysHowLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		code, _, errOut := tb(t, context.Background(), nil, "figures", "--only", "3", "--time-scale", "10", "--duration", "20s", "--warmup", "5s", "--out", dir)
		if code != 0 || !strings.Contains(errOut, "2 runs in wall time, one at a time: about 5s of warm-up and measurement") {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
	})
}

// TestExperimentsCommand: an experiment runs like the figures, checks its X
// claims, and lands in a report beside the figures of the same directory.
func TestExperimentsCommand(t *testing.T) {
	dir := t.TempDir()
	suite(t, "figures", "--quick", "--only", "3", "--out", dir)
	out := suite(t, "experiments", "--quick", "--only", "conflict", "--out", dir, "--resume")
	if !strings.Contains(out, "X4.1") || !strings.Contains(out, "X4.2") || !strings.Contains(out, "C3.1") {
		t.Fatalf("claims table:\n%s", out)
	}
	set := readSet(t, dir)
	if len(set.Figures) != 2 || set.Figures[1] != 231 {
		t.Fatalf("the directory lists figures %v", set.Figures)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !bytes.Contains(index, []byte("xconflict-231.html")) || !bytes.Contains(index, []byte("fig03.html")) {
		t.Fatal("the index does not list the figure and the experiment together")
	}
	for args, want := range map[string]string{
		"experiments --only nope":                  `experiment "nope" is not in the catalog`,
		"experiments --target table":               "run on --target engine only",
		"experiments --only conflict --parallel 0": "--parallel 0",
	} {
		code, _, errOut := tb(t, context.Background(), nil, strings.Fields(args)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %q", args, code, errOut)
		}
	}
}

// TestSuitesSpeakInALog: with stderr a log rather than a terminal, a suite
// prints a line as each run finishes, with its result; a sweep ends with
// its points as a table, as figures ends with its claims.
func TestSuitesSpeakInALog(t *testing.T) {
	code, out, errOut := tb(t, context.Background(), nil, "sweep", "--op", "batch", "--batch-size", "10,100", "--vms", "1,2",
		"--duration", "10s", "--warmup", "2s", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\[1/4\] fig100-batch-size-\d+-x\d: \d+ entities/s, \d+\.\d\d% throttled, p50 \d+\.\d ms`),
		regexp.MustCompile(`(?m)^\[4/4\] fig100-`),
	} {
		if !want.MatchString(errOut) {
			t.Errorf("stderr lacks a line like %s:\n%s", want, errOut)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^series +VMs +entities/s +throttled +p50 ms +p99 ms$`),
		regexp.MustCompile(`(?m)^batch-size=10 +1 +\d+(\.\d+)? +\d+\.\d\d% +\d+\.\d +\d+\.\d$`),
		regexp.MustCompile(`(?m)^batch-size=100 +2 +`),
	} {
		if !want.MatchString(out) {
			t.Errorf("stdout lacks a line like %s:\n%s", want, out)
		}
	}
}

// TestFreshDirNeverSharesAName: suites started in one second get
// directories of their own, not one another's.
func TestFreshDirNeverSharesAName(t *testing.T) {
	parent := t.TempDir()
	seen := map[string]bool{}
	for range 3 {
		dir, err := freshDir(parent, "20261126T120000Z")
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("%s given twice", dir)
		}
		seen[dir] = true
	}
	if !seen[filepath.Join(parent, "20261126T120000Z-3")] {
		t.Fatalf("got %v", seen)
	}
}
