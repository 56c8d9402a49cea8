package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/workloads"
)

// TestHelpListsEachVocabulary: run's help gives every op, partition
// scheme, load mode and retry policy with what it means, and sweep's help
// every op, partition scheme and retry policy, as the workloads tables
// list them.
func TestHelpListsEachVocabulary(t *testing.T) {
	_, run, _ := tb(t, context.Background(), nil, "run", "-h")
	_, sweep, _ := tb(t, context.Background(), nil, "sweep", "-h")
	for _, c := range []struct {
		flag        string
		help, names string
		inSweep     bool
	}{
		{"op", workloads.Ops().Help(), workloads.Ops().Or(), true},
		{"partition", workloads.PartitionSchemes().Help(), workloads.PartitionSchemes().Or(), true},
		{"load", workloads.LoadModes().Help(), workloads.LoadModes().Or(), false},
		{"retry", workloads.RetryPolicies().Help(), workloads.RetryPolicies().Or(), true},
	} {
		if !strings.Contains(run, c.help) {
			t.Errorf("run's help of --%s does not say %q:\n%s", c.flag, c.help, run)
		}
		if c.inSweep && !strings.Contains(sweep, c.names) {
			t.Errorf("sweep's help of --%s does not list %q:\n%s", c.flag, c.names, sweep)
		}
	}
	if !strings.Contains(run, "storage2010 (") || !strings.Contains(sweep, "sdk or storage2010") {
		t.Error("a retry policy is missing from the help")
	}
}
