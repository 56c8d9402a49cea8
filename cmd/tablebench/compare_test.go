package main

import (
	"context"
	"encoding/csv"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/results"
)

// files lists a directory's files, for checking that nothing was written.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// verdictRow is a row of compare's table: a metric, its values, change
// and verdict.
var verdictRow = regexp.MustCompile(`(?m)^\S*\s+(entities-per-sec|throttled-pct|p50|p95|p99)\s+.*\s((~ within noise|[+-]\S+ beyond noise).*)$`)

// TestCompareSameSeedIsWithinNoise: two suites of one seed (Figure 3,
// quick, in virtual time) repeat exactly, so they differ nowhere beyond
// noise and exit 0 even with a tolerance of zero; another seed differs by
// less than 5%; compare writes nothing without --out.
func TestCompareSameSeedIsWithinNoise(t *testing.T) {
	a, b := baseSet(t), filepath.Join(t.TempDir(), "again")
	suite(t, "figures", "--quick", "--only", "3", "--quiet", "--out", b)
	before := append(files(t, a), files(t, b)...)
	code, out, errOut := tb(t, context.Background(), nil, "compare", a, b, "--tolerance", "0%")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	rows := verdictRow.FindAllStringSubmatch(out, -1)
	if len(rows) != 2*5 { // Figure 3's two runs, five metrics each
		t.Fatalf("%d verdict rows, want 10:\n%s", len(rows), out)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r[2], "~ within noise (p=1.000)") {
			t.Errorf("%s: %q; identical runs must be within noise", r[1], r[2])
		}
	}
	for _, want := range []string{"2 runs, 10 differences: 0 beyond noise", "no regression beyond noise and the 0% tolerance", "C3.1: A PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after := append(files(t, a), files(t, b)...); !slices.Equal(before, after) {
		t.Errorf("compare wrote into its inputs: %v", after)
	}

	seed2 := filepath.Join(t.TempDir(), "seed2")
	suite(t, "figures", "--quick", "--only", "3", "--quiet", "--seed", "2", "--out", seed2)
	code, out, _ = tb(t, context.Background(), nil, "compare", a, seed2, "--tolerance", "5%")
	if code != 0 || !strings.Contains(out, "no regression beyond noise and the 5% tolerance") || !strings.Contains(out, "2 runs, 10 differences: ") {
		t.Errorf("another seed: exit %d\n%s", code, out)
	}
}

// TestCompareFindsRegressions: a set made on a faster profile against the
// case study's is beyond noise in throughput and latency; with a
// tolerance, compare exits 3 and names the regressions; without one it
// only reports; its report goes to --out and nowhere else.
func TestCompareFindsRegressions(t *testing.T) {
	slow := baseSet(t)
	fast := filepath.Join(t.TempDir(), "modern")
	suite(t, "figures", "--quick", "--only", "3", "--quiet", "--profile", "modern", "--out", fast)

	code, out, errOut := tb(t, context.Background(), nil, "compare", fast, slow, "--tolerance", "5%")
	if code != exitRegression || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "regression(s) beyond noise and the 5% tolerance") {
		t.Fatalf("exit %d, stderr %q; want exit %d and one line", code, errOut, exitRegression)
	}
	verdicts := map[string]string{}
	for _, r := range verdictRow.FindAllStringSubmatch(out, -1) {
		if _, ok := verdicts[r[1]]; !ok { // fig03-get-x1's
			verdicts[r[1]] = r[2]
		}
	}
	for metric, want := range map[string]string{
		"entities-per-sec": `^-\d+\.\d% beyond noise \(p<0\.001\)  REGRESSION$`,
		"p50":              `^\+\d+\.\d% beyond noise \(p<0\.001\)  REGRESSION$`,
		"p99":              `^\+\d+\.\d% beyond noise \(p<0\.001\)  REGRESSION$`,
		"throttled-pct":    `^~ within noise`,
	} {
		if !regexp.MustCompile(want).MatchString(verdicts[metric]) {
			t.Errorf("%s: %q, want %s\n%s", metric, verdicts[metric], want, out)
		}
	}

	// The other way round every difference is an improvement: no regression.
	if code, out, _ := tb(t, context.Background(), nil, "compare", slow, fast, "--tolerance", "5%"); code != 0 || !strings.Contains(out, "no regression beyond noise") {
		t.Errorf("slow against fast: exit %d\n%s", code, out)
	}
	// A regression smaller than the tolerance passes.
	if code, _, _ := tb(t, context.Background(), nil, "compare", fast, slow, "--tolerance", "1000%"); code != 0 {
		t.Errorf("--tolerance 1000%%: exit %d", code)
	}
	// Without a tolerance compare only reports.
	if code, out, _ := tb(t, context.Background(), nil, "compare", fast, slow); code != 0 || strings.Contains(out, "REGRESSION") || !strings.Contains(out, "beyond noise (p<0.001)") {
		t.Errorf("without --tolerance: exit %d\n%s", code, out)
	}

	report := filepath.Join(t.TempDir(), "cmp")
	before := append(files(t, slow), files(t, fast)...)
	if code, out, errOut := tb(t, context.Background(), nil, "compare", fast, slow, "--out", report); code != 0 || !strings.Contains(out, "charts: "+filepath.Join(report, "index.html")) {
		t.Fatalf("--out: exit %d, %s%s", code, out, errOut)
	}
	if after := append(files(t, slow), files(t, fast)...); !slices.Equal(before, after) {
		t.Errorf("compare wrote into its inputs: %v", after)
	}
	f, err := os.Open(filepath.Join(report, "compare.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 1+10 || strings.Join(recs[0], ",") != "run,metric,a,b,change,change_unit,p,beyond_noise,seconds_a,seconds_b" || recs[1][7] != "true" {
		t.Errorf("compare.csv: %v %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(report, "index.html")); err != nil {
		t.Error(err)
	}
}

// TestCompareBadInput: bad flags and an --out inside an input are refused
// in one line, exit 2, before anything is written.
func TestCompareBadInput(t *testing.T) {
	a := baseSet(t)
	b := baseSet(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compare", a, b, "--tolerance", "five"}, `--tolerance "five": give a percentage of 0 or more`},
		{[]string{"compare", a, b, "--tolerance", "-1%"}, `--tolerance "-1%"`},
		{[]string{"compare", a, b, "--alpha", "2"}, "--alpha 2: give a significance level between 0 and 1"},
		{[]string{"compare", a, b, "--out", a}, "--out " + a + " is inside the input " + a},
		{[]string{"compare", a, b, "--out", filepath.Join(b, "compare")}, "is inside the input " + b},
		{[]string{"compare", a, b, "--out", filepath.Join(link, "x", "y")}, "is inside the input " + b},
	}
	before := append(files(t, a), files(t, b)...)
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[3:], " "), func(t *testing.T) {
			oneLineRefusal(t, tc.args, tc.want)
		})
	}
	if after := append(files(t, a), files(t, b)...); !slices.Equal(before, after) {
		t.Errorf("a refused compare wrote into its inputs: %v", after)
	}
}

// TestCompareTwoRunDirectories: two runs stored by run --out compare as
// their one run each, whatever each is named; a different seed of one
// workload differs little, the 2010 model from today's beyond noise; a
// run's directory beside a suite's is refused.
func TestCompareTwoRunDirectories(t *testing.T) {
	dirs := map[string]string{}
	for name, args := range map[string][]string{
		"a":    {"--seed", "1"},
		"b":    {"--seed", "2", "--job-id", "other"},
		"2010": {"--seed", "1", "--profile", "wa2010"},
	} {
		dirs[name] = filepath.Join(t.TempDir(), name)
		run := append([]string{"run", "--profile", "modern", "--vms", "2", "--threads", "4", "--duration", "20s", "--warmup", "2s", "--quiet", "--out", dirs[name]}, args...)
		if code, _, errOut := tb(t, context.Background(), nil, run...); code != 0 {
			t.Fatalf("%v: exit %d: %s", run, code, errOut)
		}
	}
	code, out, errOut := tb(t, context.Background(), nil, "compare", dirs["a"], dirs["b"])
	if code != 0 || errOut != "" || !strings.Contains(out, "1 run, 5 differences") {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	// The runs have different IDs: the table names both, not A's alone.
	if !regexp.MustCompile(`(?m)^tb\S* vs tbother\S* `).MatchString(out) {
		t.Errorf("the comparison's run column does not name both runs:\n%s", out)
	}
	code, out, _ = tb(t, context.Background(), nil, "compare", dirs["a"], dirs["2010"], "--tolerance", "5%")
	if code != 3 || !strings.Contains(out, "entities-per-sec") || !strings.Contains(out, "REGRESSION") {
		t.Fatalf("today's model against 2010's: exit %d, want 3 and a regression\n%s", code, out)
	}
	oneLineRefusal(t, []string{"compare", dirs["a"], baseSet(t)}, "is a run's directory and")
	// A second run stored beside b's, of another ID: which of the two to
	// compare is not for compare to guess.
	if code, _, errOut := tb(t, context.Background(), nil, "run", "--profile", "modern", "--duration", "2s", "--warmup", "0s", "--job-id", "third", "--quiet", "--out", dirs["b"]); code != 0 {
		t.Fatalf("a second run into b: exit %d: %s", code, errOut)
	}
	oneLineRefusal(t, []string{"compare", dirs["a"], dirs["b"]}, "holds 1 run(s) and "+dirs["b"]+" 2, none of one ID")
}

// TestDocsNameEveryMetric: the docs (the README and docs/commands.md) and
// the help name every metric a sweep may plot, and compare's exit code, so
// neither drifts from the table.
func TestDocsNameEveryMetric(t *testing.T) {
	var readme []byte // the README and the command reference it points to
	for _, doc := range []string{"../../README.md", "../../docs/commands.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(append(readme, b...), '\n')
	}
	_, help, _ := tb(t, context.Background(), nil, "sweep", "-h")
	for i := range results.Metrics {
		m := &results.Metrics[i]
		if !m.Sweep {
			continue
		}
		if !strings.Contains(string(readme), "`"+m.Name+"`") {
			t.Errorf("neither the README nor docs/commands.md lists the sweep metric %s", m.Name)
		}
		if !strings.Contains(help, m.Name) {
			t.Errorf("sweep -h does not list %s", m.Name)
		}
	}
	_, help, _ = tb(t, context.Background(), nil, "compare", "-h")
	for _, doc := range []string{string(readme), help} {
		if !strings.Contains(doc, "exits **3**") && !strings.Contains(doc, "\n3 a regression beyond noise") {
			t.Errorf("compare's exit code %d is not documented in:\n%.300s", exitRegression, doc)
		}
	}
}
