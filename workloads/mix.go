package workloads

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads/keyspace"
)

// MaxKeys is the most PartitionKeys a fixed key space may have: the run
// keeps two row counters for each.
const MaxKeys = 10_000_000

// fixedKeys is what this process knows of a fixed key space's rows: for
// each key, the rows it wrote are numbered, and those from low to high
// (excluded) exist, the oldest deleted first. Every thread of the process
// shares it; its counters are atomic, so that threads in wall time agree,
// and in virtual time, where one thread runs at a time, it changes in
// model-time order and a run repeats for its seed. Other processes that
// share the table (shards) number rows of their own, under their own
// RowKey prefix.
type fixedKeys struct {
	names     keyspace.Names
	count     int64
	low, high []atomic.Int32
	rowPrefix string
	// spelled holds the keys of items spelled so far, keyChunk at a time
	// in one string, for a key space of one bucket: a request then hands
	// the engine and the recorder the one string of its key, which their
	// maps find by its address, where a key spelled anew had to be hashed
	// and compared byte by byte against one stored elsewhere in memory, a
	// cache miss each. Every key is keyLen bytes long (keyspace's KeyLen),
	// so a key is found in its chunk without an index.
	spelled []atomic.Pointer[string]
	keyLen  int
}

// keyChunk is how many keys of items fixedKeys spells at once, into one
// string: a key space's first chunk costs some 40 KB.
const keyChunk = 1024

func newFixedKeys(s *Spec) *fixedKeys {
	k := &s.Keys
	prefix := s.JobID + "_"
	if s.Shards > 1 {
		prefix += "s" + strconv.Itoa(s.Shard) + "_"
	}
	names := keyspace.Names{Style: string(k.Names), Buckets: k.Buckets, BucketAt: string(k.BucketAt)}
	return &fixedKeys{
		names: names,
		count: int64(k.Count), low: make([]atomic.Int32, k.Count), high: make([]atomic.Int32, k.Count),
		rowPrefix: prefix,
		spelled:   make([]atomic.Pointer[string], (k.Count+keyChunk-1)/keyChunk),
		keyLen:    names.KeyLen(),
	}
}

// key returns the PartitionKey of item in bucket, names.Key(item, bucket):
// one string for each item, where the key space has one bucket.
func (f *fixedKeys) key(item int64, bucket int) string {
	if f.names.Buckets > 1 {
		return f.names.Key(item, bucket)
	}
	c := &f.spelled[item/keyChunk]
	keys := c.Load()
	if keys == nil {
		keys = f.spell(item / keyChunk * keyChunk)
		if !c.CompareAndSwap(nil, keys) { // another thread spelled them first: the same keys
			keys = c.Load()
		}
	}
	at := int(item%keyChunk) * f.keyLen
	return (*keys)[at : at+f.keyLen]
}

// spell spells the keys of the keyChunk items from first into one string.
func (f *fixedKeys) spell(first int64) *string {
	n := min(keyChunk, f.count-first)
	buf := make([]byte, 0, n*int64(f.keyLen))
	for i := range n {
		buf = f.names.AppendKey(buf, first+i, 0)
	}
	if int64(len(buf)) != n*int64(f.keyLen) {
		panic(fmt.Sprintf("workloads: keys %d to %d are not all %d bytes long", first, first+n-1, f.keyLen))
	}
	keys := string(buf)
	return &keys
}

// rowKey is the RowKey of a key's row number i: the prefix and i in ten
// digits, so that RowKey order is the order rows were written.
func (f *fixedKeys) rowKey(i int64) string {
	b := make([]byte, 0, len(f.rowPrefix)+10)
	b = append(b, f.rowPrefix...)
	return string(appendIndex(b, i))
}

// place returns the PartitionKey of a key's row: a key spread over buckets
// keeps each row in the bucket its RowKey hashes to.
func (f *fixedKeys) place(item int64, row string) string {
	return f.key(item, f.names.BucketOf(row))
}

// claim numbers n new rows of a key and returns the first.
func (f *fixedKeys) claim(item int64, n int) int64 {
	return int64(f.high[item].Add(int32(n))) - int64(n)
}

// oldest takes a key's oldest existing row away for a delete; ok is false
// when the key has none.
func (f *fixedKeys) oldest(item int64) (int64, bool) {
	for {
		lo := f.low[item].Load()
		if lo >= f.high[item].Load() {
			return int64(lo), false
		}
		if f.low[item].CompareAndSwap(lo, lo+1) {
			return int64(lo), true
		}
	}
}

// appendIndex appends i in at least ten digits, zero padded.
func appendIndex(b []byte, i int64) []byte {
	if i >= 0 && i < 1e10 {
		b = append(b, "0000000000"...)
		for j := len(b) - 1; i > 0; j-- {
			b[j] = byte('0' + i%10)
			i /= 10
		}
		return b
	}
	return strconv.AppendInt(b, i, 10)
}

// chooser returns a Chooser of a spec's pick; the zero pick walks in
// order.
func chooser(p Pick) keyspace.Chooser {
	if p == (Pick{}) {
		p.Distribution = DistSequential
	}
	d := keyspace.DefaultDistribution(string(p.Distribution))
	if p.Theta != 0 {
		d.Theta = p.Theta
	}
	if p.HotData != 0 || p.HotOps != 0 {
		d.HotData, d.HotOps = p.HotData, p.HotOps
	}
	c, err := d.Chooser()
	if err != nil { // Validate refused it before any worker exists
		panic(fmt.Sprintf("workloads: %v", err))
	}
	return c
}

// mixer draws a thread's operations by their weights. A mix of one
// operation draws nothing, so that a spec of one operation uses its
// random numbers exactly as the case study's runs always have.
type mixer struct {
	ops []OpKind
	cum []float64 // cumulative weights
}

func newMixer(s *Spec) mixer {
	var m mixer
	sum := 0.0
	for _, o := range s.Ops() {
		if o.Weight > 0 {
			sum += o.Weight
			m.ops, m.cum = append(m.ops, o.Op), append(m.cum, sum)
		}
	}
	return m
}

// next draws the next operation.
func (m *mixer) next(rng *rand.Rand) OpKind {
	if len(m.ops) == 1 {
		return m.ops[0]
	}
	u := rng.Float64() * m.cum[len(m.cum)-1]
	for i, c := range m.cum {
		if u < c {
			return m.ops[i]
		}
	}
	return m.ops[len(m.ops)-1]
}

// row is a row an operation reads or writes, where it is.
type row struct {
	pk, rk string
	next   string // the RowKey after it, where known: a range ends before the row `span` on
	ok     bool   // it should exist (a read of a row that does not is a miss)
}

// pickItem picks the fixed key an operation goes to.
func (w *worker) pickItem() int64 { return w.keyPick.Pick(&w.rand, w.fixed.count) }

// existing picks a row that exists for a read, an update or a delete; span
// is how many rows on a range reads (the RowKey of the row after them is
// returned too, where it can be known).
func (w *worker) existing(span int) row {
	if f := w.fixed; f != nil {
		item := w.pickItem()
		lo, hi := int64(f.low[item].Load()), int64(f.high[item].Load())
		i := lo
		if hi > lo {
			i = lo + w.rowPick.Pick(&w.rand, hi-lo)
		}
		rk := f.rowKey(i)
		return row{pk: f.place(item, rk), rk: rk, next: f.rowKey(i + int64(span)), ok: hi > lo}
	}
	k := &w.ownKeys
	lo, hi := k.low, k.readable()
	i := lo
	if hi > lo {
		i = lo + int(w.rowPick.Pick(&w.rand, int64(hi-lo)))
	}
	return k.row(i, span, hi > lo)
}

// oldest takes the oldest existing row for a delete.
func (w *worker) oldest() row {
	if f := w.fixed; f != nil {
		item := w.pickItem()
		i, ok := f.oldest(item)
		rk := f.rowKey(i)
		return row{pk: f.place(item, rk), rk: rk, ok: ok}
	}
	k := &w.ownKeys
	ok := k.low < k.readable()
	r := k.row(k.low, 1, ok)
	if ok {
		k.low++
	}
	return r
}

// prepare fills the worker's Op with its next request, of kind op. An
// update's first request is the get it modifies (see prepareWrite).
func (w *worker) prepare(clock clock.Clock, kind OpKind) {
	s := &w.r.spec
	op := &w.op
	op.Kind = kind
	op.Merge, op.IfMatch, op.ETag = false, "", ""
	switch kind {
	case OpInsert, OpUpsert:
		if f := w.fixed; f != nil {
			if kind == OpUpsert { // a blind update of a row that exists (YCSB's update), or a new row
				if r := w.existing(1); r.ok {
					op.Entity = tables.Entity{PartitionKey: r.pk, RowKey: r.rk, Properties: w.props()}
					op.Merge = true
					return
				}
			}
			item := w.pickItem()
			rk := f.rowKey(f.claim(item, 1))
			op.Entity = tables.Entity{PartitionKey: f.place(item, rk), RowKey: rk, Properties: w.props()}
			return
		}
		pk := w.ownKeys.partitionKeyNow(clock)
		op.Entity = tables.Entity{PartitionKey: pk, RowKey: w.ownKeys.rowKey(), Properties: w.props()}
		if s.TxnID {
			w.txn = fmt.Sprintf("%016x", w.rand.Uint64())
			op.Entity.Properties = append(op.Entity.Properties[:len(op.Entity.Properties):len(op.Entity.Properties)], tables.String(TxnProperty, w.txn))
		}
	case OpBatch:
		var pk string
		w.batch, w.rks = w.batch[:0], w.rks[:0]
		if f := w.fixed; f != nil { // one bucket (Validate): every row in the key's one partition
			item := w.pickItem()
			first := f.claim(item, s.BatchSize)
			for i := range int64(s.BatchSize) {
				w.rks = append(w.rks, f.rowKey(first+i))
			}
			pk = f.key(item, 0)
		} else {
			pk = w.ownKeys.partitionKeyNow(clock)
			w.rks = w.ownKeys.rowKeys(w.rks, s.BatchSize)
		}
		for _, rk := range w.rks {
			w.batch = append(w.batch, tables.BatchOp{Kind: tables.BatchInsert, Entity: tables.Entity{PartitionKey: pk, RowKey: rk, Properties: w.props()}})
		}
		op.Batch = w.batch
	case OpGet, OpUpdate:
		r := w.existing(1)
		op.Kind, op.PartitionKey, op.RowKey = OpGet, r.pk, r.rk
	case OpDelete:
		r := w.oldest()
		op.PartitionKey, op.RowKey, op.IfMatch = r.pk, r.rk, "*"
	case OpQuery:
		r := w.existing(s.BatchSize)
		op.PartitionKey = r.pk
		op.Query = tables.Query{Filter: "PartitionKey eq " + quote(r.pk) + " and RowKey ge " + quote(r.rk), Top: s.BatchSize}
	case OpRange: // YCSB's short range: a length uniform in 1 to batch size
		span := 1 + w.rand.IntN(s.BatchSize)
		r := w.existing(span)
		op.PartitionKey = r.pk
		f := "PartitionKey eq " + quote(r.pk) + " and RowKey ge " + quote(r.rk)
		if r.next != "" {
			f += " and RowKey lt " + quote(r.next)
		}
		op.Query = tables.Query{Filter: f, Top: span}
	case OpScan:
		r := w.existing(s.BatchSize)
		op.PartitionKey = r.pk
		op.Query = tables.Query{Filter: "PartitionKey ge " + quote(r.pk), Top: s.BatchSize}
	}
}

// prepareWrite turns an update's get, which succeeded, into its write: a
// merge of new properties that requires the version the get read.
func (w *worker) prepareWrite() {
	op := &w.op
	op.Entity = tables.Entity{PartitionKey: op.PartitionKey, RowKey: op.RowKey, Properties: w.props()}
	op.Kind, op.IfMatch, op.Merge = OpUpdate, op.ETag, false
}

// quote quotes a key for a filter.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
