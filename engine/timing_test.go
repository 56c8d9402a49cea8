package engine

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// TestTimingAddsUp: a modelled request's Done is its Arrival and its
// stages, served or refused (throttled, or timed out), as a client that
// times its requests by the stages counts on; arrivals with a monotonic
// reading too.
func TestTimingAddsUp(t *testing.T) {
	for name, start := range map[string]time.Time{
		"plain":     time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC),
		"monotonic": time.Now(),
	} {
		e := newModelled(t, start, "timing", func(cfg *Config) { cfg.Profile.ServerTimeout = 20 * time.Millisecond })
		ctx := context.Background()
		refused := 0
		for i := range 3000 {
			c := &Call{Detach: true, Arrival: start.Add(time.Duration(i) * 20 * time.Microsecond)}
			c.Timing = stale()
			ent := tables.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}
			if _, err := e.Client(c).Insert(ctx, "timing", ent); err != nil {
				refused++
			}
			tm := c.Timing
			for f, old := range reflect.ValueOf(stale()).Fields() {
				if reflect.ValueOf(tm).FieldByIndex(f.Index).Equal(old) {
					t.Fatalf("%s: request %d: its timing kept the last request's %s", name, i, f.Name)
				}
			}
			if took := tm.FrontEnd + tm.Wait + tm.Lane + tm.Post; tm.Done.Sub(tm.Arrival) != took || tm.Done != tm.Arrival.Add(took) {
				t.Fatalf("%s: request %d: done %v after it arrived, its stages add up to %v (%+v)", name, i, tm.Done.Sub(tm.Arrival), took, tm)
			}
		}
		if refused < 100 || refused > 2900 {
			t.Fatalf("%s: %d of 3,000 requests refused: want many served and many refused", name, refused)
		}
	}
}

// stale is a Timing no request leaves: each of its fields is one that the
// engine must set, as it sets every field of a request's timing.
func stale() Timing {
	var tm Timing
	v := reflect.ValueOf(&tm).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(-7)
		case reflect.Int64: // durations
			f.SetInt(-7)
		default: // times
			f.Set(reflect.ValueOf(time.Unix(7, 7)))
		}
	}
	return tm
}
