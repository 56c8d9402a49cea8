package workloads_test

import (
	"os"
	"testing"

	"github.com/tablebench/tablebench/workloads/gctune"
)

// TestMain asks for huge pages for the heap first, as the tablebench
// command does when it simulates (gctune.HugePages): the simulator's
// benchmarks then measure what a user's run costs.
func TestMain(m *testing.M) {
	gctune.HugePages()
	os.Exit(m.Run())
}
