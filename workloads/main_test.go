package workloads_test

import (
	"os"
	"testing"
	"time"

	"github.com/tablebench/tablebench/workloads/gctune"
)

// TestMain asks for huge pages for the heap first, as the tablebench
// command does (gctune.HugePages): the simulator's benchmarks then measure
// what a user's run costs.
func TestMain(m *testing.M) {
	stop := gctune.HugePages(time.Second)
	code := m.Run()
	stop()
	os.Exit(code)
}
