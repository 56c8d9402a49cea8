package engine

import (
	"testing"
	"time"
)

// TestAdmissionAt: the times a request's timing is rebuilt in are the
// Times arrival.Add gives, with or without a monotonic reading, in UTC or
// elsewhere.
func TestAdmissionAt(t *testing.T) {
	east := time.FixedZone("east", 5*3600)
	for _, arrival := range []time.Time{
		time.Unix(1_700_000_000, 999_999_999).UTC(),
		time.Unix(1_700_000_000, 1).In(east),
		time.Unix(-5, 10).UTC(), // before the epoch: a virtual clock may start there
		time.Now(),              // a monotonic reading
		time.Now().In(east),     // In drops it
	} {
		var a admission
		a.arrival = arrival
		if l := a.arrival.Location(); a.arrival.In(l) == a.arrival {
			a.loc = l
		}
		if mono := arrival != arrival.Round(0); (a.loc == nil) != mono {
			t.Errorf("%v: location %v taken with a monotonic reading %v", arrival, a.loc, mono)
		}
		a.t0 = arrival.UnixNano()
		for _, d := range []time.Duration{0, 1, 999, time.Second - 1, time.Second, 3*time.Second + 7, -1, -time.Second - 3, 90 * time.Minute} {
			want := arrival.Add(d)
			if got := a.at(a.t0 + int64(d)); got != want {
				t.Errorf("%v at %v: got %#v, want %#v", arrival, d, got, want)
			}
		}
	}
}
