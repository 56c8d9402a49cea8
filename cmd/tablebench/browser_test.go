package main

import (
	"context"
	"errors"
	"fmt"
	"html"
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
//
// A browser that dies by a signal (CI once saw a segmentation fault while
// it took a screenshot of a page it had just rendered twice) is started
// again, up to crashTries times in all: a crash says nothing of the page,
// and what the browser then prints is still checked. An exit with a status,
// or a timeout, fails at once.
func headless(t *testing.T, browser string, args ...string) string {
	t.Helper()
	for try := 1; ; try++ {
		out, err := headlessOnce(t, browser, args)
		if err == nil {
			return out
		}
		if try < crashTries && crashed(err) {
			t.Logf("chromium %v: %v; starting it again (%d of %d)", args, err, try+1, crashTries)
			continue
		}
		t.Fatalf("chromium %v: %v", args, err)
	}
}

// crashTries is how many times headless starts a browser that keeps dying
// by a signal before it fails the test.
const crashTries = 3

func headlessOnce(t *testing.T, browser string, args []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000", "--hide-scrollbars"}
	out, err := exec.CommandContext(ctx, browser, append(base, args...)...).Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("no answer in 60 s: %v", err)
	}
	return string(out), err
}

// crashed tells whether err is a browser's death by a signal of its own,
// not a timeout's kill (headlessOnce tells those apart first).
func crashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == -1 // -1: ended by a signal
}

var svgPath = regexp.MustCompile(`<path `)

// chartCheck runs in a page once its charts are drawn and writes what is
// wrong with them into the page: a chart echarts did not make, one with no
// series holding data, one drawn blank, a legend that pages (it hides
// series), and text that runs off its chart (a cut title or label).
const chartCheck = `<script>
window.addEventListener('load', function () { setTimeout(function () {
  var out = [];
  document.querySelectorAll('div.item').forEach(function (el) {
    var c = echarts.getInstanceByDom(el);
    if (!c) { out.push(el.id + ': no chart'); return; }
    var o = c.getOption(), n = 0;
    (o.series || []).forEach(function (s) { if (s.data && s.data.length) n++; });
    if (!n) out.push(el.id + ': no series with data');
    (o.legend || []).forEach(function (l) { if (l.type === 'scroll') out.push(el.id + ': its legend pages'); });
    var svg = el.querySelector('svg');
    if (!svg) { out.push(el.id + ': not drawn'); return; }
    if (svg.querySelectorAll('path').length < 5) out.push(el.id + ': drawn blank');
    var box = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.width > 0 && (b.left < box.left - 1 || b.right > box.right + 1)) out.push(el.id + ': text runs off the chart: ' + t.textContent);
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'chart-check';
  pre.textContent = out.length ? out.join('\n') : 'charts ok: ' + document.querySelectorAll('div.item').length;
  document.body.appendChild(pre);
}, 500); });
</script>
`

var checkOut = regexp.MustCompile(`(?s)<pre id="chart-check">(.*?)</pre>`)

// checkCharts opens every page of a report with chartCheck added and fails
// on whatever it finds.
func checkCharts(t *testing.T, browser, dir string) {
	t.Helper()
	pages, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	if len(pages) == 0 {
		t.Fatalf("no pages in %s", dir)
	}
	for _, p := range pages {
		if strings.HasPrefix(filepath.Base(p), "check-") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		probe := filepath.Join(dir, "check-"+filepath.Base(p)) // beside the page, so its assets load
		if err := os.WriteFile(probe, []byte(strings.Replace(string(b), "</body>", chartCheck+"</body>", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		m := checkOut.FindStringSubmatch(headless(t, browser, "--dump-dom", "file://"+probe))
		os.Remove(probe)
		switch {
		case m == nil:
			t.Errorf("%s: the chart check did not run (echarts did not load?)", filepath.Base(p))
		case !strings.HasPrefix(m[1], "charts ok"):
			t.Errorf("%s:\n%s", filepath.Base(p), html.UnescapeString(m[1]))
		}
	}
}

// TestReportInBrowser opens the report from disk, network off, and checks
// that its charts were drawn; it leaves screenshots for people to look at.
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	dir, exp := t.TempDir(), t.TempDir()
	suite(t, "figures", "--quick", "--only", "3,5,15", "--out", dir)
	// Short, in a set of its own: the balancer acts in seconds, so its
	// numbers are not the figures'.
	suite(t, "experiments", "--quick", "--only", "balance", "--duration", "90s", "--balancer", "accelerated", "--out", exp)
	checkCharts(t, browser, dir)
	checkCharts(t, browser, exp)
	sweep := t.TempDir() // a sweep of many series: its legend wraps, never pages
	suite(t, "sweep", "--op", "batch", "--batch-size", "1,20,100", "--vms", "1,2", "--vm-size", "small,xl", "--duration", "5s", "--warmup", "1s", "--out", sweep)
	checkCharts(t, browser, sweep)
	shots := filepath.Join(os.TempDir(), "tablebench-browser")
	os.MkdirAll(shots, 0o755)
	for _, page := range []struct{ dir, file, chart, text string }{
		{dir, "index.html", "claims_margin", "C15.3"},
		{dir, "fig15.html", "fig15_main", "% throttled"},
		{dir, "fig03.html", "fig03_main", "latency (ms)"},
		{dir, "fig05.html", "fig05_main", "series coincide"},      // coinciding series, one dashed over the other
		{dir, "fig05.html", "fig05_tput_17", "one panel per run"}, // 18 runs as small multiples
		{exp, "xbalance-221.html", "xbalance_221_main", "X3.3"},   // a timeline with the balancer's moves marked
		{dir, "fig15.html", "fig15_keys", "Where the load landed in the key space"},
		{exp, "xbalance-221.html", "xbalance_221_keys", "range partitions on"}, // the key space with the balancer's splits and moves
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

// TestRunPageInBrowser opens the pages run --out writes, network off: a
// run that is throttled (two outcomes, a throttled share over time) alone
// in its directory, and two runs in one, each page with its charts drawn
// and nothing cut; it leaves a screenshot for people to look at.
func TestRunPageInBrowser(t *testing.T) {
	browser := chromium(t)
	one, two := t.TempDir(), t.TempDir()
	run := []string{"run", "--quiet", "--duration=20s", "--warmup=5s"}
	suite(t, append(run, "--op=batch", "--batch-size=100", "--partition=shared", "--vms=4", "--threads=10", "--out="+one)...)
	suite(t, append(run, "--threads=4", "--out="+two)...)
	suite(t, append(run, "--threads=8", "--job-id=other", "--out="+two)...)
	checkCharts(t, browser, one)
	checkCharts(t, browser, two)
	url := "file://" + filepath.Join(one, "index.html")
	dom := headless(t, browser, "--dump-dom", url)
	for _, want := range []string{"batch, successful", "batch, throttled (ServerBusy)", "% of requests throttled", "warm-up"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the run's page shows no %q", want)
		}
	}
	shots := filepath.Join(os.TempDir(), "tablebench-browser")
	os.MkdirAll(shots, 0o755)
	png := filepath.Join(shots, "run.png")
	headless(t, browser, "--screenshot="+png, "--window-size=1400,2600", url)
	if st, err := os.Stat(png); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", png, err)
	}
	t.Logf("screenshot: %s", png)
}

// TestHeadlessStartsACrashedBrowserAgain stands a script in for the
// browser: one that dies by SIGSEGV on its first start is started again and
// its second answer taken; one that exits with a status is not retried.
func TestHeadlessStartsACrashedBrowserAgain(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	crashy := filepath.Join(dir, "crashy")
	script := "#!/bin/sh\necho x >> " + count + "\n[ $(wc -l < " + count + ") -ge 2 ] || kill -SEGV $$\necho '<html>drawn</html>'\n"
	if err := os.WriteFile(crashy, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := headless(t, crashy, "--dump-dom", "file:///nowhere"); !strings.Contains(out, "drawn") {
		t.Fatalf("the second start's answer was %q", out)
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "x") != 2 {
		t.Fatalf("the browser was started %d times, want 2", strings.Count(string(b), "x"))
	}
	failing := filepath.Join(dir, "failing")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := headlessOnce(t, failing, nil)
	if err == nil || crashed(err) {
		t.Fatalf("an exit with status 3 reads as %v, crashed %v: want an error that is no crash", err, crashed(err))
	}
}
