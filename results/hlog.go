package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The interval lines of a run's .hlog are written here, not by the
// library's log writer: it encodes every count through reflection and
// compresses each interval with a new zlib writer at the best compression,
// which made writing results a tenth of a suite's CPU. The format is the
// same (V2 compressed histograms, base64), and ReadHlog reads it with the
// library's own decoder.

// V2 encoding cookies, as every HdrHistogram implementation writes them.
const (
	v2Cookie           = 0x1c849303 | 0x10
	v2CompressedCookie = 0x1c849304 | 0x10
)

// hlogEncoder encodes interval histograms, reusing its buffers and its
// compressor from one interval to the next.
type hlogEncoder struct {
	counts, raw, packed bytes.Buffer
	zw                  *zlib.Writer
	b64                 []byte
}

// encode returns h in the V2 compressed encoding, base64: the payload of
// an interval line. The slice is reused by the next call.
func (e *hlogEncoder) encode(h *hdr.Histogram) ([]byte, error) {
	snap := h.Export()
	limit := 1 // as the library: through the bucket of the largest value, at least one
	for i := len(snap.Counts) - 1; i >= 0; i-- {
		if snap.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	e.counts.Reset()
	var leb [binary.MaxVarintLen64]byte
	for i := 0; i < limit; {
		c := snap.Counts[i]
		i++
		if c == 0 { // a run of zeros is one negative count
			zeros := int64(1)
			for i < limit && snap.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.counts.Write(leb[:putZigZag(leb[:], c)])
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	e.raw.Reset()
	var head [40]byte
	binary.BigEndian.PutUint32(head[0:], v2Cookie)
	binary.BigEndian.PutUint32(head[4:], uint32(e.counts.Len()))
	binary.BigEndian.PutUint32(head[8:], 0) // normalizing index offset: counts are stored unrotated
	binary.BigEndian.PutUint32(head[12:], uint32(snap.SignificantFigures))
	binary.BigEndian.PutUint64(head[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(head[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(head[32:], math.Float64bits(ratio))
	e.raw.Write(head[:])
	e.raw.Write(e.counts.Bytes())

	e.packed.Reset()
	e.packed.Write(make([]byte, 8)) // cookie and length, filled in below
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.packed, zlib.BestSpeed) // the level is valid: no error
	} else {
		e.zw.Reset(&e.packed)
	}
	if _, err := e.zw.Write(e.raw.Bytes()); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	p := e.packed.Bytes()
	binary.BigEndian.PutUint32(p[0:], v2CompressedCookie)
	binary.BigEndian.PutUint32(p[4:], uint32(len(p)-8))
	n := base64.StdEncoding.EncodedLen(len(p))
	if cap(e.b64) < n {
		e.b64 = make([]byte, n)
	}
	e.b64 = e.b64[:n]
	base64.StdEncoding.Encode(e.b64, p)
	return e.b64, nil
}

// putZigZag writes v as a ZigZag LEB128 of at most nine bytes, the
// HdrHistogram form, and returns its length.
func putZigZag(b []byte, v int64) int {
	u := uint64((v << 1) ^ (v >> 63))
	i := 0
	for ; i < 8 && u >= 0x80; i++ {
		b[i] = byte(u) | 0x80
		u >>= 7
	}
	b[i] = byte(u) // the ninth byte carries all eight remaining bits
	return i + 1
}

// writeInterval writes one interval line: start and length in seconds from
// the log's base time, the largest value in milliseconds (values are
// microseconds, the library's default ratio), and the histogram.
func (e *hlogEncoder) writeInterval(w io.Writer, base int64, h *hdr.Histogram) error {
	payload, err := e.encode(h)
	if err != nil {
		return err
	}
	start := float64(h.StartTimeMs()-base) / 1000
	length := float64(h.EndTimeMs()-h.StartTimeMs()) / 1000
	_, err = fmt.Fprintf(w, "%f,%f,%f,%s\n", start, length, float64(h.Max())/hdr.MsToNsRatio, payload)
	return err
}
