package workloads

import (
	"strings"
	"testing"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/results"
)

// wallTarget is a target in wall time, for judging synthetic records.
type wallTarget struct{ Target }

func (wallTarget) Clock() clock.Clock { return clock.NewScaled(1) }

// TestLagJudgedByItsEffect: on the engine in wall time, a lag is refused
// only when it moves a reported number by more than 5%, and warned of, with
// its estimated effect, past 1%. A busy machine's millisecond tail beside a
// 44 ms median moves nothing and passes.
func TestLagJudgedByItsEffect(t *testing.T) {
	latency := results.Percentiles{Count: 10000, P50: 44, P99: 120, Mean: 48}
	for _, c := range []struct {
		name    string
		open    bool
		lag     results.Percentiles
		refused bool
		warning string // "" for none
	}{
		{"busy machine, p99 6.5 ms", false, results.Percentiles{P50: 0.2, P99: 6.5, Mean: 0.4}, false, ""},
		{"a lag that costs 3% of the rate", false, results.Percentiles{P50: 1, P99: 9, Mean: 1.5}, false, "lowers the throughput by an estimated 3.0%"},
		{"a lag that costs 9% of the rate", false, results.Percentiles{P50: 4, P99: 20, Mean: 5}, true, "lowers the throughput by an estimated 9.4%"},
		{"open loop, the p99 moved 2.5%", true, results.Percentiles{P50: 0.2, P99: 3, Mean: 0.4}, false, "2.5% of the p99"},
		{"open loop, the p50 moved 11%", true, results.Percentiles{P50: 5, P99: 6, Mean: 5}, true, "11.4% of the p50 latency"},
	} {
		spec := DefaultSpec()
		if c.open {
			spec.Load, spec.Rate = LoadOpen, 100
		}
		r, err := NewCoordinator(spec, wallTarget{})
		if err != nil {
			t.Fatal(err)
		}
		lag := c.lag
		run := &results.Run{Env: results.Environment{Target: "engine", TimeScale: 1}, Totals: results.Counts{Requests: 1400}, LatencyMs: latency, SuccessLatencyMs: latency, HarnessLagMs: &lag, MeasuredSec: 60}
		for sec := range 70 { // answers every second: no silence
			run.Intervals = append(run.Intervals, results.Interval{Second: sec, Requests: 20})
		}
		warnings, _, refused := r.check(run)
		if refused != c.refused || (c.warning == "") != (len(warnings) == 0) || c.warning != "" && !strings.Contains(strings.Join(warnings, "\n"), c.warning) {
			t.Errorf("%s: refused %v, warnings %q; want refused %v and a warning saying %q", c.name, refused, warnings, c.refused, c.warning)
		}
	}
}
