package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
)

// chromium returns the browser, or fails (under CI) or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROME"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	azurite.Need(t, "the browser test needs chromium: install Debian's chromium package (.ci/run does)")
	return ""
}

// headless runs chromium on a file with every network request sent to a
// closed port, so only what the report folder holds can load.
func headless(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000", "--hide-scrollbars"}
	out, err := exec.CommandContext(ctx, browser, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

var svgPath = regexp.MustCompile(`<path `)

// TestReportInBrowser opens the report from disk, network off, and checks
// that its charts were drawn; it leaves screenshots for people to look at.
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	dir, exp := t.TempDir(), t.TempDir()
	suite(t, "figures", "--quick", "--only", "3,5,15", "--out", dir)
	// Short, in a set of its own: the balancer acts in seconds, so its
	// numbers are not the figures'.
	suite(t, "experiments", "--quick", "--only", "balance", "--duration", "90s", "--balancer", "accelerated", "--out", exp)
	shots := filepath.Join(os.TempDir(), "tablebench-browser")
	os.MkdirAll(shots, 0o755)
	for _, page := range []struct{ dir, file, chart, text string }{
		{dir, "index.html", "claims_margin", "C15.3"},
		{dir, "fig15.html", "fig15_main", "% throttled"},
		{dir, "fig03.html", "fig03_main", "latency (ms)"},
		{dir, "fig05.html", "fig05_main", "series coincide"},      // coinciding series, one dashed over the other
		{dir, "fig05.html", "fig05_tput_17", "one panel per run"}, // 18 runs as small multiples
		{exp, "xbalance-221.html", "xbalance_221_main", "X3.3"},   // a timeline with the balancer's moves marked
	} {
		url := "file://" + filepath.Join(page.dir, page.file)
		dom := headless(t, browser, "--dump-dom", url)
		i := strings.Index(dom, `id="`+page.chart+`"`)
		if i < 0 {
			t.Fatalf("%s: no chart %s in the page", page.file, page.chart)
		}
		chart := dom[i:]
		if j := strings.Index(chart[1:], `class="item"`); j > 0 {
			chart = chart[:j]
		}
		svg := strings.Index(chart, "<svg")
		if svg < 0 {
			t.Fatalf("%s: chart %s was not drawn (no SVG): echarts did not load offline", page.file, page.chart)
		}
		if n := len(svgPath.FindAllString(chart[svg:], -1)); n < 10 {
			t.Fatalf("%s: chart %s has %d paths, want a drawn chart", page.file, page.chart, n)
		}
		if !strings.Contains(dom, page.text) {
			t.Fatalf("%s: no %q on the page", page.file, page.text)
		}
		png := filepath.Join(shots, page.chart+".png")
		headless(t, browser, "--screenshot="+png, "--window-size=1100,2400", url)
		if st, err := os.Stat(png); err != nil || st.Size() < 10000 {
			t.Fatalf("screenshot %s: %v", png, err)
		}
		t.Logf("screenshot: %s", png)
	}
}
