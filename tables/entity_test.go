package tables

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestTimestampFormats checks the hand-written timestamp and ETag formats
// against time.Format over random instants, zones and the year's edges.
func TestTimestampFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zone := time.FixedZone("X", -7*3600-30*60)
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	for range 10000 {
		times = append(times, time.Unix(rng.Int64N(300e9)-100e9, rng.Int64N(1e9)).In(zone))
	}
	for _, at := range times {
		want := at.UTC().Format("2006-01-02T15:04:05.0000000Z")
		if got := FormatTimestamp(at); got != want {
			t.Fatalf("FormatTimestamp(%v) = %q, want %q", at, got, want)
		}
		if got, want := FormatETag(at), `W/"datetime'`+strings.ReplaceAll(want, ":", "%3A")+`'"`; got != want {
			t.Fatalf("FormatETag(%v) = %q, want %q", at, got, want)
		}
	}
}
