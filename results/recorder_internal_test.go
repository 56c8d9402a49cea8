package results

import (
	"fmt"
	"testing"
	"time"
	"unsafe"
)

// TestSampleRangeIsTheHistograms: a sample holds a latency in 32 bits,
// and 0 for one the histograms would refuse; that is right only while
// NewHistogram records every value below 2^32 µs and none above.
func TestSampleRangeIsTheHistograms(t *testing.T) {
	h := NewHistogram()
	for _, v := range []int64{histMin, histMax, 1<<32 - 1} {
		if err := h.RecordValue(v); err != nil || histValue(v) == 0 {
			t.Errorf("%d µs: the histogram says %v, the sample holds %d; want it recorded", v, err, histValue(v))
		}
	}
	for _, v := range []int64{1 << 32, 1 << 40} {
		if err := h.RecordValue(v); err == nil || histValue(v) != 0 {
			t.Errorf("%d µs: the histogram says %v, the sample holds %d; want it left out by both", v, err, histValue(v))
		}
	}
}

// TestHistIndexIsTheLibrarys: the collector counts samples in buckets it
// finds itself and makes histograms of the counts; they must be the
// histograms the library would have recorded, for every value a sample
// holds.
func TestHistIndexIsTheLibrarys(t *testing.T) {
	var vs []uint32
	for b := 0; b < 32; b++ { // each power of two, and around it
		for _, d := range []int64{-2, -1, 0, 1, 2, 3} {
			if v := int64(1)<<b + d; v >= histMin && v < 1<<32 {
				vs = append(vs, uint32(v))
			}
		}
	}
	for v := uint32(1); v < 4096; v++ {
		vs = append(vs, v)
	}
	vs = append(vs, uint32(histMax), uint32(histMax)+1, 1<<32-1)
	for x := uint64(1); x < 1<<32; x = x*3 + 7 {
		vs = append(vs, uint32(x))
	}
	var all histCounts = newHistCounts()
	want := NewHistogram()
	for _, v := range vs {
		one := NewHistogram()
		if err := one.RecordValue(int64(v)); err != nil {
			t.Fatalf("%d µs: %v", v, err)
		}
		want.RecordValue(int64(v))
		i := histIndex(v)
		if i < 0 || i >= histLen || one.Export().Counts[i] != 1 {
			t.Fatalf("%d µs: counted in bucket %d, not the library's", v, i)
		}
		all[i]++
	}
	got := all.histogram()
	if !got.Equals(want) || got.TotalCount() != want.TotalCount() || got.Max() != want.Max() {
		t.Fatalf("the counts' histogram is not the one recorded")
	}
	var e1, e2 hlogEncoder
	b1, err1 := e1.encode(got)
	b2, err2 := e2.encode(want)
	if err1 != nil || err2 != nil || string(b1) != string(b2) {
		t.Fatalf("the counts' histogram encodes otherwise: %v %v", err1, err2)
	}
	if h := histCounts(nil).histogram(); !h.Equals(NewHistogram()) {
		t.Fatalf("no counts are not an empty histogram")
	}
}

// TestMedianAndP99AreThePercentiles: an interval's percentiles are those
// PercentilesOf finds.
func TestMedianAndP99AreThePercentiles(t *testing.T) {
	h := NewHistogram()
	for _, n := range []int{0, 1, 2, 3, 99, 100, 101, 1000, 12345} {
		for i := 0; i < n; i++ {
			h.RecordValue(int64(1 + (i*7919)%(1<<(i%24+1))))
		}
		p := PercentilesOf(h)
		if p50, p99 := medianAndP99(h); p50 != p.P50 || p99 != p.P99 {
			t.Errorf("%d values: %v %v, PercentilesOf says %v %v", h.TotalCount(), p50, p99, p.P50, p.P99)
		}
	}
}

// TestSecondBounds: a recorder tells a request's second by its bounds,
// which must hold the offsets the division puts in the second and no
// other, either side of zero too.
func TestSecondBounds(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewCollector(start, start, start.Add(time.Hour)).Recorder(&Live{})
	for _, s := range []time.Duration{-3, -2, -1, 0, 1, 2, 3, 3600} {
		for _, d := range []time.Duration{-1, 0, 1, time.Second / 2, time.Second - 1} {
			off := s*time.Second + d
			r.toSecond(off)
			if r.sec != int(off/time.Second) {
				t.Fatalf("%v: second %d, want %d", off, r.sec, int(off/time.Second))
			}
			for _, o := range []time.Duration{off, r.secLo - 1, r.secLo, r.secHi - 1, r.secHi} {
				if in, want := o >= r.secLo && o < r.secHi, int(o/time.Second) == r.sec; in != want {
					t.Errorf("second %d: bounds [%v, %v) say %v of %v, the division %v", r.sec, r.secLo, r.secHi, in, o, want)
				}
			}
		}
	}
}

// TestRecyclePinsNoKeys: a recorder's own buffer, refused for having grown
// past reason, keeps neither its arrays nor the PartitionKeys in them, and
// serves again; a buffer besides it that comes back while the recorder
// has its own spare is let go, so that a recorder holds two at most.
func TestRecyclePinsNoKeys(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCollector(start, start, start.Add(3*time.Second))
	r := c.Recorder(&Live{})
	const many = 1<<16 + 10
	for i := range many { // every request to a key of its own: a key run each
		done := start.Add(time.Duration(i) * time.Microsecond)
		r.Record("insert", fmt.Sprintf("pk%d", i), 1, done, done, OutcomeOK, 0, false)
	}
	done := start.Add(time.Second + time.Millisecond)
	r.Record("insert", "next", 1, done, done, OutcomeOK, 0, false) // hands second 0 over in own
	if _, err := c.Close(start.Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if cap(r.own.samples) != 0 || cap(r.own.keys) != 0 {
		t.Errorf("the recorder's own buffer keeps room for %d samples and %d keys after growing past reason", cap(r.own.samples), cap(r.own.keys))
	}
	if r.spare.Load() != &r.own {
		t.Errorf("the recorder's spare is %p, not its own buffer %p", r.spare.Load(), &r.own)
	}

	other := newSecBuf(4, 4)
	other.keys = append(other.keys, keyRun{pk: "kept?", n: 1})
	other.recycle(r) // the recorder has its own spare: this one goes
	if r.spare.Load() != &r.own {
		t.Errorf("a second buffer back took the place of the recorder's own")
	}
	if other.keys[:1][0].pk != "" {
		t.Errorf("a buffer let go still holds a key")
	}
}

// TestSequentialRecorderKeepsItsOwnLines: a sequential collector's
// recorder records a second of one or two requests in its own lines, and
// hands the second over without pinning its keys there; a second grown past
// reason leaves its arrays to the garbage, and the next begins in the
// recorder's own lines again.
func TestSequentialRecorderKeepsItsOwnLines(t *testing.T) {
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCollector(start, start, start.Add(4*time.Second))
	c.Sequential()
	r := c.Recorder(&Live{})
	at := func(d time.Duration) time.Time { return start.Add(d) }
	r.Record("insert", "a", 1, at(time.Millisecond), at(2*time.Millisecond), OutcomeOK, 0, false)
	if !r.inline(r.secVals) || unsafe.SliceData(r.secKeys) != &r.keys0[0] {
		t.Fatalf("a second's first request was not recorded in the recorder's own lines")
	}
	if hs := r.Hints(nil); len(hs) != 0 {
		t.Errorf("Hints names %d places besides the recorder's own lines, which Warm warms", len(hs))
	}
	const many = 1<<16 + 10
	for i := range many { // second 1, each request to a key of its own
		done := at(time.Second + time.Duration(i)*time.Microsecond)
		r.Record("insert", fmt.Sprintf("pk%d", i), 1, done, done, OutcomeOK, 0, false)
	}
	done := at(2*time.Second + time.Millisecond)
	r.Record("insert", "b", 1, done, done, OutcomeOK, 0, false) // hands second 1 over
	if !r.inline(r.secVals) || unsafe.SliceData(r.secKeys) != &r.keys0[0] {
		t.Errorf("after a second of %d requests the recorder keeps room for %d samples and %d keys", many, cap(r.secVals), cap(r.secKeys))
	}
	r.Record("insert", "c", 1, done, done, OutcomeOK, 0, false) // second 2 outgrows the recorder's lines
	done = at(3*time.Second + time.Millisecond)
	r.Record("insert", "d", 1, done, done, OutcomeOK, 0, false) // hands it over, and goes on in its buffer
	if r.keys0[0].pk != "" {
		t.Errorf("the recorder still holds key %q of a second it handed over", r.keys0[0].pk)
	}
	run, err := c.Close(at(4 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if run.Totals.Requests != many+4 {
		t.Errorf("%d requests counted, want %d", run.Totals.Requests, many+4)
	}
	if r.keys0[0].pk != "" {
		t.Errorf("the recorder still holds key %q after Close", r.keys0[0].pk)
	}
}

// TestRecordersBeginOnALine: a collector's recorders, which a simulator's
// threads read at every request, each begin on a cache line.
func TestRecordersBeginOnALine(t *testing.T) {
	if size := unsafe.Sizeof(Recorder{}); size%64 != 0 {
		t.Errorf("a recorder is %d bytes, not whole lines", size)
	}
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCollector(start, start, start.Add(time.Second))
	for i := range 2*recorders + 1 {
		if p := uintptr(unsafe.Pointer(c.Recorder(&Live{}))); p%64 != 0 {
			t.Fatalf("recorder %d begins %d bytes into a line", i, p%64)
		}
	}
	if _, err := c.Close(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
}
