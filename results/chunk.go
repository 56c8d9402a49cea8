package results

import (
	"unsafe"

	"github.com/tablebench/tablebench/clock"
)

// Sequential recording. A simulator in virtual time steps its thousands
// of threads in turn on one goroutine, and each of its threads records
// one or two requests a second: a second handed over in a buffer of its
// own, as a thread in wall time hands its seconds over, costs a buffer
// cold in the recorder's cache, a send on the collector's channel, and
// the collector's own misses on that buffer, for every request. Its
// recorders instead copy their seconds, in the order they hand them over,
// into one chunk they share, which stays in the cache while it fills and
// which the collector takes whole: it adds the same seconds in the same
// order, so that the record is the same.

// Sequential says that the run's recorders record one at a time, never
// two at once nor beside Close: a virtual clock's tasks, stepped in turn.
// They then hand their seconds over in shared chunks (see chunk). Call it
// before the first Recorder.
func (c *Collector) Sequential() { c.seq = true }

// chunk is seconds of a sequential collector's recorders, in the order
// they were handed over: each second's samples and keys follow those of
// the seconds before it.
type chunk struct {
	secs    []chunkSec
	samples []sample
	keys    []keyRun
}

// chunkSec is a recorder's second in a chunk.
type chunkSec struct {
	rec           int32 // the recorder's id
	sec           int
	counts        secCounts
	samples, keys int32 // how many of the chunk's samples and keys are the second's
}

const (
	// chunkSecs and chunkSamples are when a chunk is full: it goes to the
	// collector at chunkSecs seconds or chunkSamples samples. A full
	// chunk of a large simulated client's seconds is some 100 KB, which
	// stay in the processor's cache while they are written, and are read
	// from it again by the collector, on the other core, as a stream.
	chunkSecs    = 1024
	chunkSamples = 4096
	// maxChunks is how many chunks a collector has at most: one filling
	// and the rest on their way to the collector or back. A recorder that
	// needs one while all are on their way waits for the collector, which
	// then sets the pace, as a full channel does in wall time.
	maxChunks = 4
)

// handSecond hands the recorder's second over to a sequential collector,
// and keeps its own buffers, emptied, for the next: a buffer grown past
// reason is left to the garbage, and the next begins in the recorder's own
// lines again.
func (r *Recorder) handSecond() {
	if r.sec >= 0 && r.secCnt.requests > 0 {
		r.c.hand(r.id, r.sec, &r.secCnt, r.secVals, r.secKeys)
	}
	// The chunk holds the keys: the recorder pins none, in its buffer or
	// in its own lines, which a second that outgrew them left behind.
	clear(r.secKeys)
	r.keys0 = [1]keyRun{}
	vals, keys := r.secVals[:0], r.secKeys[:0]
	if cap(vals) > 1<<16 {
		vals = r.vals0[:0]
	}
	if cap(keys) > 1<<16 {
		keys = r.keys0[:0]
	}
	r.secCnt, r.secVals, r.secKeys = secCounts{}, vals, keys
}

// hand copies a recorder's second into the chunk being filled, and sends
// the chunk to the collector when it is full.
func (c *Collector) hand(rec int32, sec int, counts *secCounts, vals []sample, keys []keyRun) {
	ch := c.fill
	if ch == nil {
		ch = c.emptyChunk()
		c.fill = ch
	}
	ch.secs = append(ch.secs, chunkSec{rec: rec, sec: sec, counts: *counts, samples: int32(len(vals)), keys: int32(len(keys))})
	ch.samples = append(ch.samples, vals...)
	ch.keys = append(ch.keys, keys...)
	if len(ch.secs) >= chunkSecs || len(ch.samples) >= chunkSamples {
		c.sendChunk()
	}
}

// sendChunk sends the chunk being filled, if it holds a second, to the
// collector.
func (c *Collector) sendChunk() {
	if ch := c.fill; ch != nil && len(ch.secs) > 0 {
		c.c <- secDelta{chunk: ch}
		c.fill = nil
	}
}

// emptyChunk returns a chunk to fill: one the collector emptied, or a new
// one while there are fewer than maxChunks.
func (c *Collector) emptyChunk() *chunk {
	if c.chunks < maxChunks {
		select {
		case ch := <-c.emptied:
			return ch
		default:
		}
		c.chunks++
		return &chunk{
			secs:    make([]chunkSec, 0, chunkSecs),
			samples: make([]sample, 0, chunkSamples+chunkSamples/4),
			keys:    make([]keyRun, 0, chunkSecs+chunkSecs/4),
		}
	}
	return <-c.emptied
}

// addChunk adds a chunk's seconds, in order, and gives the chunk back
// emptied, its keys cleared.
func (c *Collector) addChunk(ch *chunk) {
	samples, keys := ch.samples, ch.keys
	for i := range ch.secs {
		s := &ch.secs[i]
		// The keys' bytes, which the collector looks up among the run's
		// keys, are the one thing here its stream does not bring.
		if len(keys) > keysAhead && keys[keysAhead].pk != "" {
			pk := keys[keysAhead].pk
			clock.Prefetch(unsafe.Pointer(unsafe.StringData(pk)), uintptr(len(pk)))
		}
		// And what the run's keys hold of the key the recorder of a later
		// second had last, which its keys most often are again.
		if j := i + keysAhead; j < len(ch.secs) {
			if id := int(c.hints[ch.secs[j].rec]) - 1; id >= 0 && id < len(c.pks.keys) {
				clock.Prefetch(unsafe.Pointer(&c.pks.keys[id]), unsafe.Sizeof(keyInfo{}))
			}
		}
		c.add(s.rec, s.sec, &s.counts, samples[:s.samples], keys[:s.keys])
		samples, keys = samples[s.samples:], keys[s.keys:]
	}
	clear(ch.keys)
	ch.secs, ch.samples, ch.keys = ch.secs[:0], ch.samples[:0], ch.keys[:0]
	c.emptied <- ch // never waits: it has room for every chunk
}

// keysAhead is how many keys ahead of those it adds addChunk prefetches.
const keysAhead = 4
