package main

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads/enginetarget"
)

// TestVirtualRunsUseACoreEach: a run in virtual time keeps one core busy,
// so the process runs it on one, and a suite on one for each run at once;
// the limit that held before is back when the command ends. A run in wall
// time keeps every core.
func TestVirtualRunsUseACoreEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var mu sync.Mutex // a suite builds its runs' targets concurrently
	var cores []int
	t.Cleanup(func() { newEngineTarget = enginetarget.New })
	newEngineTarget = func(cfg engine.Config) (*enginetarget.Target, error) {
		mu.Lock()
		cores = append(cores, runtime.GOMAXPROCS(0))
		mu.Unlock()
		return enginetarget.New(cfg)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"run", "--vms=1", "--threads=2", "--duration=2s", "--warmup=0s"}, 1},
		{[]string{"run", "--vms=1", "--threads=2", "--duration=100ms", "--warmup=0s", "--time-scale=1"}, 4},
		{[]string{"sweep", "--vms=1,2", "--threads=2", "--duration=2s", "--warmup=0s", "--parallel=2", "--out", t.TempDir()}, 2},
	} {
		cores = nil
		// A run in wall time may be refused for a busy machine's lag: its
		// cores are what is checked here.
		if code, _, errOut := tb(t, context.Background(), nil, c.args...); code != 0 && c.want != 4 {
			t.Fatalf("%v: exit %d\n%s", c.args, code, errOut)
		}
		for _, n := range cores {
			if n != c.want {
				t.Errorf("%v: ran on %d cores, want %d", c.args, n, c.want)
			}
		}
		if len(cores) == 0 {
			t.Errorf("%v: built no engine", c.args)
		}
		if n := runtime.GOMAXPROCS(0); n != 4 {
			t.Errorf("%v: left the process on %d cores, want the 4 it had", c.args, n)
		}
	}
}
