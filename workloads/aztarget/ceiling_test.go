package aztarget_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine/rest/resttest"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/gctune"
)

// cannedChild is set in the child process that serves the canned endpoint
// for BenchmarkHarnessCeiling.
const cannedChild = "TABLEBENCH_TEST_CANNED_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(cannedChild) == "1" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr())
		http.Serve(ln, resttest.Canned()) // until the parent kills it
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cpu returns the CPU time this process has used, user and system.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHarnessCeiling drives the whole harness (coordinator, SDK
// target, recorder) against the canned endpoint, which runs in a child
// process so that the CPU counted is the harness's alone, and reports
// requests/s per core of harness CPU: past that rate times the cores a
// machine has, a run needs more machines (tablebench run --shards). The
// CPU counted includes the run's setup (the table, the entities a get run
// reads), so the figure is a lower bound.
func BenchmarkHarnessCeiling(b *testing.B) {
	defer gctune.LoadGenerator(time.Second)() // as tablebench collects when it drives an endpoint
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), cannedChild+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the canned server did not start: %v", err)
	}
	conn := devConn("http://" + strings.TrimSpace(addr))
	for b.Loop() {
		for _, op := range []workloads.OpKind{workloads.OpInsert, workloads.OpGet, workloads.OpBatch} {
			tg := targetFor(b, conn)
			spec := workloads.DefaultSpec()
			spec.Op, spec.Threads, spec.Duration, spec.Warmup, spec.EntitySize = op, 30, 3*time.Second, 0, 1024
			r, err := workloads.NewCoordinator(spec, tg)
			if err != nil {
				b.Fatal(err)
			}
			c0, w0 := cpu(b), time.Now()
			res, err := r.Run(ctx)
			c1, w1 := cpu(b), time.Now()
			if err != nil {
				b.Fatal(err)
			}
			cores := (c1 - c0).Seconds() / w1.Sub(w0).Seconds()
			perCore := float64(res.Totals.Requests) / (c1 - c0).Seconds()
			b.Logf("%-6s %7.0f requests/s (%.0f entities/s) on %.2f cores of harness CPU: %6.0f requests/s per core",
				op, float64(res.Totals.Requests)/w1.Sub(w0).Seconds(), float64(res.Totals.Entities)/w1.Sub(w0).Seconds(), cores, perCore)
			b.ReportMetric(perCore, string(op)+"-requests/s/core")
		}
	}
}
