package results

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"
	"unsafe"

	"github.com/axiomhq/hyperloglog"
	metro "github.com/dgryski/go-metro"
)

// Partitions says where a run's measured requests landed by PartitionKey:
// how many keys they touched, and the hottest keys with their requests and
// throttled requests, so that a user sees where throttling lands. It is
// bounded whatever the number of keys: the collector keeps a Space-Saving
// summary (Metwally, Agrawal and El Abbadi, 2005) of TrackedKeys counters
// and a HyperLogLog of the keys, and the record keeps the TopKeys hottest.
//
// Counts are exact while the run touched at most TrackedKeys keys. Past
// that, a key the summary did not hold takes the place of the least
// counted one and inherits its count as its error: each listed count then
// overstates by at most its Error, never understates, and no key's error
// exceeds the run's requests / TrackedKeys. A key that is hot enough to be
// listed is almost always held from its first requests, with no error.
type Partitions struct {
	// Distinct is how many PartitionKeys the measured requests touched:
	// exact when DistinctExact, else a HyperLogLog estimate (standard
	// error about 1.6%).
	Distinct      int64 `json:"distinct"`
	DistinctExact bool  `json:"distinct_exact"`
	// Top are the most requested keys, most requested first (at most
	// TopKeys).
	Top []KeyLoad `json:"top"`
	// UnlistedMax bounds the keys Top leaves out: none had more requests.
	// Zero when Top lists every key the run touched.
	UnlistedMax int64 `json:"unlisted_max"`
	// Sketch is the HyperLogLog of the keys, base64, by which shards'
	// distinct counts merge; left out when Top lists every key exactly.
	Sketch string `json:"sketch,omitempty"`
}

// KeyLoad is one PartitionKey's share of a run.
type KeyLoad struct {
	Key       string `json:"key"`
	Requests  int64  `json:"requests"`
	Throttled int64  `json:"throttled"` // answered 503 ServerBusy or 500 OperationTimedOut
	// Error is how much Requests and Throttled may overstate: the true
	// counts lie in [count - Error, count]. Zero: exact.
	Error int64 `json:"error,omitempty"`
}

// Bounds of what a run keeps of its keys.
const (
	// TrackedKeys is how many keys the collector counts at once: exact
	// counts (and an exact distinct count) up to this many keys.
	TrackedKeys = 4096
	// TopKeys is how many of the hottest keys a record keeps.
	TopKeys = 32
	// sketchPrecision is the HyperLogLog's: 2^12 registers, a standard
	// error of 1.04/64 = 1.6%, and at most 4 KiB in a record.
	sketchPrecision = 12
)

// keyCounter is the collector's Space-Saving summary of the measured
// requests' keys: at most TrackedKeys counters in a min-heap by count, so
// that the least counted is at hand when a new key must take its place.
//
// It numbers the keys it meets (warm-up's too, for the heat map) in a
// table, so that a key's counter and heat map row are found by the key's
// number once the key is found: a key that moves from counter to counter
// costs no map insertion and deletion, and a key seen before no search of
// the heat map's rows.
type keyCounter struct {
	ids map[string]int32 // a key's number in keys
	// byAddr holds numbers of keys by where their bytes are, plus one (0:
	// none): a workload hands the same string for a key each time, whose
	// address is found without hashing its bytes, and compared equal to
	// the key's without reading them.
	byAddr  *[byAddrSize]int32
	keys    []keyInfo
	heap    keyHeap
	evicted bool // a key has taken another's counter: counts are estimates
	hll     *hyperloglog.Sketch
	last    int32 // the last key found, which the next request most often shares
	// renumbered is called when the table starts again, numbering anew
	// the keys that hold counters, so that a number kept elsewhere is
	// forgotten.
	renumbered func()
}

// keyInfo is what the collector keeps of a key by its number.
type keyInfo struct {
	key    string
	ent    *keyEntry // its counter; nil while it holds none
	row    *heatRow  // the heat map row that counted it, while rowGen is the heat map's
	rowGen uint32
	hashed bool   // hash is the key's sketch hash, hashed once for the times it takes a counter
	hash   uint64 // as sketchHash
}

// keyEntry is a counter. Its count is in the heap beside it, where the
// heap compares counts without a load from each counter.
type keyEntry struct {
	key      string
	id       int32 // the key's number
	pos      int32 // in the heap
	thr, err int64
}

// maxKeyIDs bounds the keys numbered at once: past it the table keeps
// those that hold counters and numbers the others anew as they come, so
// that a run of endless keys (a time-ordered scheme) holds a bounded
// table.
const maxKeyIDs = 1 << 16

// byAddrSize is how many slots keyCounter finds keys by address in: a
// key space of tens of thousands of keys, drawn from again and again,
// mostly finds its keys there, for 256 KiB.
const (
	byAddrBits = 16
	byAddrSize = 1 << byAddrBits
)

func newKeyCounter() *keyCounter {
	sk, _ := hyperloglog.NewSketch(sketchPrecision, true)
	return &keyCounter{ids: map[string]int32{}, byAddr: new([byAddrSize]int32), last: -1, hll: sk}
}

// id returns key's number. hint, if not negative, is a number that may be
// key's.
func (c *keyCounter) id(key string, hint int32) int32 {
	// The hint and the last key are taken only for the very string: where
	// they are another key, as they mostly are in an open load over many
	// keys, that costs no comparison of bytes.
	if hint >= 0 && int(hint) < len(c.keys) && sameString(c.keys[hint].key, key) {
		return hint
	}
	if l := c.last; l >= 0 && sameString(c.keys[l].key, key) {
		return l
	}
	// Fibonacci hashing of the address: keys' bytes lie a key's length
	// apart, and the product's high bits spread them over the table.
	a := &c.byAddr[uint64(uintptr(unsafe.Pointer(unsafe.StringData(key))))*0x9e3779b97f4a7c15>>(64-byAddrBits)]
	if id := *a - 1; id >= 0 && c.keys[id].key == key {
		c.last = id
		return id
	}
	id, ok := c.ids[key]
	if !ok {
		if len(c.keys) >= maxKeyIDs {
			c.renumber()
		}
		id = int32(len(c.keys))
		c.keys = append(c.keys, keyInfo{key: key})
		c.ids[key] = id
	}
	*a, c.last = id+1, id
	return id
}

// sketchHash is the hash the sketch's Insert takes of a key, which
// InsertHash takes as given: a key in an open load over more keys than
// TrackedKeys takes a counter again and again, and is hashed once.
func sketchHash(key string) uint64 {
	return metro.Hash64(unsafe.Slice(unsafe.StringData(key), len(key)), 1337)
}

// sameString reports whether a and b are the same bytes in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// renumber starts the table again with the keys that hold counters.
func (c *keyCounter) renumber() {
	clear(c.ids)
	clear(c.byAddr[:])
	keys := make([]keyInfo, 0, max(2*len(c.heap), 64))
	for _, s := range c.heap {
		e := s.e
		e.id = int32(len(keys))
		keys = append(keys, keyInfo{key: e.key, ent: e})
		c.ids[e.key] = e.id
	}
	c.keys, c.last = keys, -1
	if c.renumbered != nil {
		c.renumbered()
	}
}

// add counts n requests to the key numbered id, throttled or not.
func (c *keyCounter) add(id int32, throttled bool, n int64) {
	e := c.keys[id].ent
	if e == nil {
		e = c.insert(id)
	}
	c.heap[e.pos].n += n
	if throttled {
		e.thr += n
	}
	c.heap.down(int(e.pos))
}

// insert gives the key numbered id a counter: a new one while there are
// fewer than TrackedKeys, else the least counted key's, whose count it
// inherits as its error (for throttled requests too: any of them may have
// been).
func (c *keyCounter) insert(id int32) *keyEntry {
	k := &c.keys[id]
	if !k.hashed {
		k.hash, k.hashed = sketchHash(k.key), true
	}
	c.hll.InsertHash(k.hash)
	var e *keyEntry
	if len(c.heap) < TrackedKeys {
		e = &keyEntry{key: k.key, id: id, pos: int32(len(c.heap))}
		c.heap = append(c.heap, heapSlot{e: e}) // with no count yet, the least: the heap holds
		c.heap.up(int(e.pos))
	} else {
		c.evicted = true
		n := c.heap[0].n
		e = c.heap[0].e
		c.keys[e.id].ent = nil
		e.key, e.id, e.err, e.thr = k.key, id, n, n
	}
	k.ent = e
	return e
}

// record returns what the run keeps of its keys.
func (c *keyCounter) record() *Partitions {
	ents := slices.Clone(c.heap)
	slices.SortFunc(ents, func(a, b heapSlot) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return cmp.Compare(a.e.key, b.e.key)
	})
	p := &Partitions{Top: []KeyLoad{}}
	for i, e := range ents {
		if i == TopKeys {
			p.UnlistedMax = e.n
			break
		}
		p.Top = append(p.Top, KeyLoad{Key: e.e.key, Requests: e.n, Throttled: e.e.thr, Error: e.e.err})
	}
	if c.evicted {
		p.Distinct = int64(c.hll.Estimate())
	} else {
		p.Distinct, p.DistinctExact = int64(len(ents)), true
	}
	if !p.listsAll() {
		p.Sketch = encodeSketch(c.hll)
	}
	return p
}

// listsAll reports whether Top lists every key the run touched, exactly.
func (p *Partitions) listsAll() bool {
	if !p.DistinctExact || p.UnlistedMax > 0 {
		return false
	}
	for _, k := range p.Top {
		if k.Error > 0 {
			return false
		}
	}
	return true
}

func encodeSketch(sk *hyperloglog.Sketch) string {
	b, err := sk.MarshalBinary()
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// sketch returns the HyperLogLog of the keys: the stored one, or one made
// of Top when Top lists every key.
func (p *Partitions) sketch() (*hyperloglog.Sketch, error) {
	sk, _ := hyperloglog.NewSketch(sketchPrecision, true)
	if p.Sketch == "" {
		for _, k := range p.Top {
			sk.Insert([]byte(k.Key))
		}
		return sk, nil
	}
	b, err := base64.StdEncoding.DecodeString(p.Sketch)
	if err == nil {
		err = sk.UnmarshalBinary(b)
	}
	if err != nil {
		return nil, fmt.Errorf("partitions.sketch cannot be decoded: %w", err)
	}
	return sk, nil
}

// mergePartitions merges shards' key summaries. A key a shard does not
// list counts that shard's UnlistedMax, as requests, throttled requests
// and error alike: the merged counts still never understate, and each
// overstates by at most its Error. Where every shard lists every key, the
// merge is exact.
func mergePartitions(ps []*Partitions) (*Partitions, error) {
	exact := true
	var unlisted int64
	sums := map[string]*KeyLoad{}
	for _, p := range ps {
		exact = exact && p.listsAll()
		unlisted += p.UnlistedMax
		for _, k := range p.Top {
			if sums[k.Key] == nil {
				sums[k.Key] = &KeyLoad{Key: k.Key}
			}
		}
	}
	for _, p := range ps {
		listed := make(map[string]KeyLoad, len(p.Top))
		for _, k := range p.Top {
			listed[k.Key] = k
		}
		for key, s := range sums {
			k, ok := listed[key]
			if !ok {
				k = KeyLoad{Requests: p.UnlistedMax, Throttled: p.UnlistedMax, Error: p.UnlistedMax}
			}
			s.Requests += k.Requests
			s.Throttled += k.Throttled
			s.Error += k.Error
		}
	}
	all := make([]KeyLoad, 0, len(sums))
	for _, s := range sums {
		all = append(all, *s)
	}
	slices.SortFunc(all, func(a, b KeyLoad) int {
		if a.Requests != b.Requests {
			return cmp.Compare(b.Requests, a.Requests)
		}
		return cmp.Compare(a.Key, b.Key)
	})
	m := &Partitions{Top: all[:min(len(all), TopKeys)], UnlistedMax: unlisted}
	if len(all) > TopKeys {
		m.UnlistedMax = max(m.UnlistedMax, all[TopKeys].Requests)
	}
	if exact {
		m.Distinct, m.DistinctExact = int64(len(all)), true
		if len(all) > TopKeys {
			sk, _ := hyperloglog.NewSketch(sketchPrecision, true)
			for _, k := range all {
				sk.Insert([]byte(k.Key))
			}
			m.Sketch = encodeSketch(sk)
		}
		return m, nil
	}
	sk, _ := hyperloglog.NewSketch(sketchPrecision, true)
	for _, p := range ps {
		s, err := p.sketch()
		if err != nil {
			return nil, err
		}
		if err := sk.Merge(s); err != nil {
			return nil, fmt.Errorf("partitions.sketch: %w", err)
		}
	}
	m.Distinct, m.Sketch = int64(sk.Estimate()), encodeSketch(sk)
	return m, nil
}

// keyHeap is a min-heap of counters by count. A count only grows, so
// that a counter only moves down; its own methods spare the request path
// container/heap's interface calls.
type keyHeap []heapSlot

// heapSlot is a counter in the heap, and its count.
type heapSlot struct {
	n int64
	e *keyEntry
}

// down moves the counter at i below the counters it outgrew. Those move
// up a level each, and it is written once, where it stops: as swaps
// would leave them, with one write to each counter.
func (h keyHeap) down(i int) {
	x := h[i]
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].n < h[l].n {
			m = r
		}
		if x.n <= h[m].n {
			break
		}
		h[i] = h[m]
		h[i].e.pos = int32(i)
		i = m
	}
	h[i] = x
	x.e.pos = int32(i)
}

// up moves the counter at i above the counters it is below, as down does.
func (h keyHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].n <= x.n {
			break
		}
		h[i] = h[p]
		h[i].e.pos = int32(i)
		i = p
	}
	h[i] = x
	x.e.pos = int32(i)
}
