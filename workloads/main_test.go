package workloads_test

import (
	"flag"
	"os"
	"testing"

	"github.com/tablebench/tablebench/workloads/gctune"
)

// TestMain asks for huge pages for the heap first when it runs
// benchmarks, as the tablebench command does when it simulates
// (gctune.HugePages): the simulator's benchmarks then measure what a
// user's run costs. Tests do without: under the race detector huge pages
// cost a test binary 0.6 GB more and twice the system time, for nothing.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		gctune.HugePages()
	}
	os.Exit(m.Run())
}
