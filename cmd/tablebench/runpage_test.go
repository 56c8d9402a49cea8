package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tablebench/tablebench/results"
)

// readRecord reads the one run record in dir.
func readRecord(t *testing.T, dir string) *results.Run {
	t.Helper()
	runs, err := readRunDir(dir)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%s: %d records, %v", dir, len(runs), err)
	}
	return runs[0]
}

// TestRunThresholds: each threshold is printed after the summary as pass
// or fail with what was measured, kept in the record, and one that fails
// makes the run exit 4.
func TestRunThresholds(t *testing.T) {
	pass, fail := t.TempDir(), t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		run := []string{"run", "--quiet", "--threads=2", "--duration=10s", "--warmup=1s"}
		code, out, errOut := tb(t, context.Background(), nil, append(run, "--out="+pass, "--threshold=p99<10s", "--threshold", "insert.throttled<=0%", "--threshold=entities_per_sec>=1")...)
		if code != 0 || !strings.Contains(out, "thresholds:\n  PASS  p99<10s ") || !strings.Contains(out, "PASS  insert.throttled<=0%  ") {
			t.Fatalf("exit %d:\n%s%s", code, out, errOut)
		}
		if i, j := strings.Index(out, "latency ms"), strings.Index(out, "thresholds:"); i < 0 || j < i {
			t.Fatalf("the thresholds are not after the summary:\n%s", out)
		}
		code, out, errOut = tb(t, context.Background(), nil, append(run, "--out="+fail, "--threshold=p99<1us", "--threshold=errors==0")...)
		if code != exitThreshold || !strings.Contains(out, "FAIL  p99<1us    measured ") || !strings.Contains(out, "PASS  errors==0  measured 0") ||
			!strings.Contains(errOut, "1 threshold(s) fail") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("exit %d, want %d:\n%s%s", code, exitThreshold, out, errOut)
		}
		code, out, errOut = tb(t, context.Background(), nil, append(run, "--json", "--threshold=p99<1us")...)
		if code != exitThreshold || !strings.Contains(out, `"thresholds":[{"threshold":"p99\u003c1us","pass":false,"measured":`) || !strings.Contains(errOut, "FAIL  p99<1us") {
			t.Fatalf("--json: exit %d:\n%s%s", code, out, errOut)
		}
	})
	r := readRecord(t, fail)
	if len(r.Thresholds) != 2 || r.Thresholds[0].Pass || r.Thresholds[0].Measured == nil || *r.Thresholds[0].Measured != r.SuccessLatencyMs.P99 || !r.Thresholds[1].Pass {
		t.Fatalf("the record keeps %+v", r.Thresholds)
	}
	if page, _ := os.ReadFile(filepath.Join(fail, "index.html")); !strings.Contains(string(page), `<td>p99&lt;1us</td><td class="FAIL">FAIL</td>`) {
		t.Fatal("the run's page does not show the failed threshold")
	}
}

// TestSweepThresholds: a sweep checks each threshold against every run and
// names the runs that fail it.
func TestSweepThresholds(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := tb(t, context.Background(), nil, "sweep", "--quiet", "--vms=1,2", "--duration=4s", "--warmup=1s", "--out="+dir,
		"--threshold=entities_per_sec>=40", "--threshold=insert.p99<10s")
	if code != exitThreshold || !strings.Contains(out, "FAIL  entities_per_sec>=40  in 1 of 2 runs: fig100-insert-x1 (") ||
		!strings.Contains(out, "PASS  insert.p99<10s        in all 2 runs") {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitThreshold, out, errOut)
	}
	for _, r := range readSet(t, dir).Runs {
		if len(r.Thresholds) != 2 || r.Thresholds[0].Pass != (r.EntitiesPerSec >= 40) {
			t.Fatalf("run %s keeps %+v", r.ID, r.Thresholds)
		}
	}
}

// TestRunOutWritesItsPage: run --out writes the run's page beside its
// record, report rebuilds it from the directory, and a directory of
// several runs gets an index of them.
func TestRunOutWritesItsPage(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		code, out, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--threads=2", "--duration=5s", "--warmup=1s", "--out="+dir)
		if code != 0 || !strings.Contains(out, "page: "+filepath.Join(dir, "index.html")) {
			t.Fatalf("exit %d:\n%s%s", code, out, errOut)
		}
	})
	r := readRecord(t, dir)
	index := filepath.Join(dir, "index.html")
	page, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Run " + r.ID, "Throughput and throttling over time", "Latency over time", "Latency distribution per operation", "insert, successful", "Where the load landed in the key space", "No warnings", "Settings"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "assets", "echarts.min.js")); err != nil {
		t.Fatal("the page's echarts is not beside it")
	}
	os.Remove(index)
	code, out, errOut := tb(t, context.Background(), nil, "report", dir)
	if code != 0 || out != "report: "+index+"\n" {
		t.Fatalf("report on a run's directory: exit %d:\n%s%s", code, out, errOut)
	}
	if again, _ := os.ReadFile(index); string(again) != string(page) {
		t.Fatal("report rebuilt another page than the run wrote")
	}
	synctest.Test(t, func(t *testing.T) { // a second run into the same directory
		if code, out, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--threads=2", "--duration=5s", "--warmup=1s", "--job-id=second", "--out="+dir); code != 0 {
			t.Fatalf("exit %d:\n%s%s", code, out, errOut)
		}
	})
	runs, err := readRunDir(dir)
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	idx, _ := os.ReadFile(index)
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(dir, r.ID+".html")); err != nil || !strings.Contains(string(idx), `<td><a href="`+r.ID+`.html">`) {
			t.Errorf("run %s has no page of its own linked from the index's table", r.ID)
		}
	}
}

// TestRunIntoASuiteKeepsItsReport: a run stored in a suite's directory
// does not replace the suite's report with its page, and says so.
func TestRunIntoASuiteKeepsItsReport(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "index.html")
	os.WriteFile(filepath.Join(dir, results.SetFile), []byte(`{"runs":[]}`), 0o644)
	os.WriteFile(index, []byte("the suite's report"), 0o644)
	synctest.Test(t, func(t *testing.T) {
		code, out, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--threads=2", "--duration=3s", "--warmup=1s", "--out="+dir)
		if code != 0 || strings.Contains(out, "page:") || !strings.Contains(errOut, "holds a suite's results, so the run's page is not written there") {
			t.Fatalf("exit %d:\n%s%s", code, out, errOut)
		}
	})
	if b, _ := os.ReadFile(index); string(b) != "the suite's report" {
		t.Fatal("the run replaced the suite's report")
	}
}

// TestReportRefusesAnUnreadableOrMisnamedRecord: a run record edited until
// it no longer reads, or renamed, makes report refuse the directory and
// name the file, rather than leave the run off the page without a word;
// another JSON file beside the records is passed over.
func TestReportRefusesAnUnreadableOrMisnamedRecord(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		if code, out, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--duration=2s", "--warmup=1s", "--out="+dir); code != 0 {
			t.Fatalf("exit %d:\n%s%s", code, out, errOut)
		}
	})
	r := readRecord(t, dir)
	path := filepath.Join(dir, r.ID+".json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	m["measured_sec"] = "soon"
	edited, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"owner": "me"}`), 0o644)
	for _, c := range []struct {
		name, file, text, want string
	}{
		{"a word for a number", r.ID + ".json", string(edited), r.ID + ".json: not a readable run record"},
		{"renamed", "other.json", string(good), `other.json holds run "` + r.ID + `", whose record is named "` + r.ID + `.json"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(path)
			os.WriteFile(filepath.Join(dir, c.file), []byte(c.text), 0o644)
			defer os.Remove(filepath.Join(dir, c.file))
			code, _, errOut := tb(t, context.Background(), nil, "report", dir)
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, %q: want exit 2 and one line with %q", code, errOut, c.want)
			}
		})
	}
	os.WriteFile(path, good, 0o644)
	if code, _, errOut := tb(t, context.Background(), nil, "report", dir); code != 0 {
		t.Fatalf("the restored directory: exit %d, %s", code, errOut)
	}
}
