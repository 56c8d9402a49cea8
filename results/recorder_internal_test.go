package results

import "testing"

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
