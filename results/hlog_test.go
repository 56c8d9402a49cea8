package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// uncompressed returns the V2 payload inside a compressed, base64 encoding.
func uncompressed(t *testing.T, b64 []byte) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		t.Fatal(err)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIntervalEncodingMatchesTheLibrary checks our encoder against the
// library's on empty, sparse, dense and extreme histograms: the same bytes
// before compression, and a payload the library decodes to the same counts.
func TestIntervalEncodingMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var enc hlogEncoder
	for i := range 40 {
		h := NewHistogram()
		switch i % 4 {
		case 1: // a few values
			for range 5 {
				h.RecordValue(rng.Int64N(10_000))
			}
		case 2: // many, over the whole range, with huge counts
			for range 2000 {
				h.RecordValues(1+rng.Int64N(histMax), 1+rng.Int64N(1<<40))
			}
		case 3: // the extremes
			h.RecordValue(histMin)
			h.RecordValue(histMax)
		}
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.encode(h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(uncompressed(t, got), uncompressed(t, want)) {
			t.Fatalf("histogram %d: the V2 payload differs from the library's", i)
		}
		back, err := hdr.Decode(got)
		if err != nil {
			t.Fatalf("histogram %d: the library cannot decode ours: %v", i, err)
		}
		if !slices.Equal(back.Export().Counts, h.Export().Counts) || back.TotalCount() != h.TotalCount() {
			t.Fatalf("histogram %d: counts differ after a round trip", i)
		}
	}
}

// TestHlogRoundTrip writes a run's interval log and reads it back with the
// library's log reader.
func TestHlogRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := &Run{ID: "r1", Start: start}
	for s := range 5 {
		h := NewHistogram()
		h.SetStartTimeMs(start.Add(time.Duration(s) * time.Second).UnixMilli())
		h.SetEndTimeMs(start.Add(time.Duration(s+1) * time.Second).UnixMilli())
		for v := range int64(100 * s) {
			h.RecordValue(1000 + v)
		}
		r.IntervalHists = append(r.IntervalHists, h)
		r.Intervals = append(r.Intervals, Interval{Second: s, Requests: 100 * int64(s)})
	}
	path := filepath.Join(t.TempDir(), "r1.hlog")
	var buf bytes.Buffer
	if err := r.WriteHlog(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back := &Run{ID: r.ID, Start: start, Intervals: r.Intervals}
	if err := back.ReadHlog(path); err != nil {
		t.Fatal(err)
	}
	for i, h := range back.IntervalHists {
		w := r.IntervalHists[i]
		if h.TotalCount() != w.TotalCount() || h.Max() != w.Max() || h.StartTimeMs() != w.StartTimeMs() || h.EndTimeMs() != w.EndTimeMs() {
			t.Fatalf("second %d: read back %d values to %d µs over [%d, %d], wrote %d to %d over [%d, %d]", i,
				h.TotalCount(), h.Max(), h.StartTimeMs(), h.EndTimeMs(), w.TotalCount(), w.Max(), w.StartTimeMs(), w.EndTimeMs())
		}
	}
}

// TestHistSumIsMerge checks the count-by-count sum against the library's
// Merge.
func TestHistSumIsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var sum histSum
	want := NewHistogram()
	for range 30 {
		h := NewHistogram()
		for range rng.IntN(200) {
			h.RecordValue(1 + rng.Int64N(histMax))
		}
		sum.add(h)
		want.Merge(h)
	}
	got := sum.hist()
	if !slices.Equal(got.Export().Counts, want.Export().Counts) || got.TotalCount() != want.TotalCount() || got.Max() != want.Max() || got.Min() != want.Min() {
		t.Fatalf("sum: %d values to %d, merge: %d to %d", got.TotalCount(), got.Max(), want.TotalCount(), want.Max())
	}
	var empty histSum
	if empty.hist().TotalCount() != 0 {
		t.Fatal("an empty sum is not empty")
	}
}
