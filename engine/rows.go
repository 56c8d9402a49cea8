package engine

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/google/btree"
	"github.com/tablebench/tablebench/tables"
)

// A range partition keeps its entities grouped by PartitionKey: a hash map
// finds a key's rows for point operations, an ordered tree of the keys
// serves scans, and each key's rows sit in a B+ tree by RowKey. Grouping
// compares only RowKeys inside a key, needs no second index of every
// entity, and lets a split move whole keys; the B+ tree appends a RowKey
// above every stored one without comparisons, which is how the harness and
// most applications write (ascending or time-based RowKeys).

// pkRows is one PartitionKey's rows.
type pkRows struct {
	pk   string
	rows rowTree
	// budget is the key's budget, once a request has found it here, or nil:
	// the partition's buckets[pk], as long as it is set. Both move together
	// when the partition splits, and the balancer clears it when it forgets
	// the budget.
	budget *bucket
	// own is where the key's budget is made when the key has rows already:
	// beside them, a request that uses both misses the cache once less.
	own bucket
}

func lessRows(a, b *pkRows) bool { return compareKeys(a.pk, b.pk) < 0 }

// partitionRows is a range partition's entities. The zero value holds none
// and makes its structures with its first key: most range partitions of a
// pre-split table stay empty.
type partitionRows struct {
	byKey map[string]*pkRows
	order *btree.BTreeG[*pkRows]
	gen   uint64 // moves on when a key's rows are forgotten: see keyCache
}

// init makes p's structures. The tree keeps no free list of its own: one
// holds 32 nodes for reuse after deletes and cost a range partition 300
// bytes before it held anything.
func (p *partitionRows) init() {
	if p.order == nil {
		p.byKey, p.order = map[string]*pkRows{}, btree.NewWithFreeListG(16, lessRows, btree.NewFreeListG[*pkRows](0))
	}
}

// rows returns pk's rows, nil if it has none.
func (p *partitionRows) rows(pk string) *pkRows { return p.byKey[pk] }

// rowsFor returns pk's rows, adding an empty set for a new key.
func (p *partitionRows) rowsFor(pk string) *pkRows {
	if g := p.byKey[pk]; g != nil {
		return g
	}
	p.init()
	g := &pkRows{pk: pk}
	p.byKey[pk] = g
	p.order.ReplaceOrInsert(g)
	return g
}

// drop forgets pk's rows once the last one is gone, so scans and splits
// do not walk keys that hold nothing.
func (p *partitionRows) drop(g *pkRows) {
	if g.rows.n == 0 {
		delete(p.byKey, g.pk)
		p.order.Delete(g)
		p.gen++
	}
}

// ascend calls fn on every record at or after (pk, rk) in key order, with
// its PartitionKey, until fn returns false.
func (p *partitionRows) ascend(pk, rk string, fn func(pk string, r *record) bool) {
	if p.order == nil {
		return
	}
	first := true
	var r record // each record in turn: fn gets it to read, not to keep
	p.order.AscendGreaterOrEqual(&pkRows{pk: pk}, func(g *pkRows) bool {
		from := ""
		if first && g.pk == pk {
			from = rk
		}
		first = false
		return g.rows.ascend(from, &r, func(r *record) bool { return fn(g.pk, r) })
	})
}

// each calls fn on every key's rows in key order.
func (p *partitionRows) each(fn func(*pkRows)) {
	if p.order == nil {
		return
	}
	p.order.Ascend(func(g *pkRows) bool { fn(g); return true })
}

// adopt takes g, a key's rows from another partition, as they are.
func (p *partitionRows) adopt(g *pkRows) {
	p.init()
	p.byKey[g.pk] = g
	p.order.ReplaceOrInsert(g)
}

// rowTree is a B+ tree of records by RowKey. Leaves are linked for scans.
// A leaf emptied by deletes is unlinked; an underfull one is left as it is,
// which keeps deletion simple at the price of some space after heavy
// deletes.
type rowTree struct {
	root *bnode
	// tail is the last leaf, where an appending writer's next RowKey goes:
	// it is found without reading the nodes above it, which a tree among
	// many, each written in turn, no longer has in the cache.
	tail *bnode
	n    int
}

// Node sizes: a leaf of 63 records is one cache-friendly binary search.
// Its arrays hold leafCap entries, one more than a leaf keeps, so the
// insert that overflows it needs no new array, and 64 slots or
// fingerprints are 1,024 and 512 bytes, allocation sizes with no slack: a
// full leaf costs about 26 bytes per record and its RowKey's bytes.
const (
	leafCap  = 64
	maxLeaf  = leafCap - 1
	maxInner = 64
	// runSplit is how many inserts in a row, each just after the one
	// before or one key past it, make a leaf split after the newest instead
	// of in the middle.
	// A writer whose keys ascend inside a range others hold (sequence
	// numbers without padding: r_10, r_100, r_101 before r_11) then leaves
	// full leaves behind it, as an appending writer does.
	runSplit = 4
	runMax   = 1 << 14 // a run counts up to here: only whether it reaches runSplit matters
)

// bnode is a leaf (slots) or an inner node (keys, kids): kids[i] holds the
// RowKeys below keys[i], and the last kid those at or above the last key.
//
// A leaf holds its records in arrays of its own, none of them pointers to
// a record: a slot places its RowKey in the leaf's key bytes and its
// Properties in the leaf's table of them, which the writers of one
// workload share. Millions of stored entities are then a few objects per
// leaf, for the collector to mark, instead of two or more per entity, and
// the leaf's bytes, which it never scans.
//
// Every key a node holds starts with its pfx, and its fingerprints are
// taken after pfx, where its keys differ. Keys in a node are close in
// order, so they share far more than the keys of the whole tree do:
// writers sharing a PartitionKey (tb_1_VM_Worker_Index) differ only in the
// last digits inside a node. A key that does not share pfx shortens it.
type bnode struct {
	pfx   string         // ASCII
	pw    [pwords]uint64 // pfx's first bytes, little-endian and zero-padded: see hasPrefix
	slots []slot         // leaves only: the records, in RowKey order
	fps   []uint64       // leaves only: fingerprint of key(i), searched before any key is read
	top   uint64         // leaves only: the last of fps, which an append reads without the array
	// kb is a leaf's RowKeys' bytes, appended to and never written over:
	// the RowKeys of records read from the leaf point into it, and stay as
	// they are after the leaf changes.
	kb    []byte
	props [][]tables.Property // leaves only: the records' Properties, each slice once
	mixed bool                // leaves only: some fingerprint is noPrint
	// last is where the latest insert went, or -1, and run how many
	// inserts in a row each went at most two places after the one
	// before, up to runMax (leaves only): beside mixed and pnext they
	// share a word, which keeps a node in the 320-byte size class.
	last, run int16
	// pnext is where in paddr a write's slice is looked for first: the
	// one after the last found, as a writer that takes its shared slices
	// in turn writes the next.
	pnext uint8
	// paddr and plen are the address and length of each of the first
	// slices in props: a write finds its slice there, in the node, without
	// reading the table, far from it in memory. While the table holds a
	// slice, no other can have its address.
	paddr      [8]uintptr
	plen       [8]uint16
	keys       []string
	kfps       []kprint // fingerprint of keys[i]
	kids       []*bnode
	prev, next *bnode // leaves only
}

// leafHead is the part of a leaf that a write appended to it reads:
// what an inner node and a split read, after it, is left unwarmed.
const leafHead = unsafe.Offsetof(bnode{}.keys)

// slot is a record as a leaf holds it, with no pointer in it.
type slot struct {
	ts  int64  // Unix nanoseconds, a multiple of 100
	off uint32 // where the RowKey starts in the leaf's kb
	kl  uint16 // the RowKey's length in bytes, or longKey
	pi  uint16 // the record's Properties: the leaf's props[pi]
}

// longKey as a slot's kl says its RowKey is longer: its length is in the
// four bytes before it, little-endian. Keys that long take a MaxKeyLength
// far above the service's.
const longKey = 1<<16 - 1

// maxProps is how many Properties slices a leaf's table holds before it
// drops those no record uses any more: more than a leaf's records, so that
// writers whose every entity has properties of its own drop them in bulk.
const maxProps = leafCap + leafCap/2

// newLeaf returns an empty leaf whose arrays hold c entries.
func newLeaf(c int) *bnode {
	return &bnode{slots: make([]slot, 0, c), fps: make([]uint64, 0, c), last: -1}
}

// key returns the RowKey of leaf n's record i. It points into n's key
// bytes, which are never written over.
func (n *bnode) key(i int) string {
	s := &n.slots[i]
	l := int(s.kl)
	switch l {
	case 0:
		return ""
	case longKey:
		l = int(binary.LittleEndian.Uint32(n.kb[s.off-4:]))
	}
	return unsafe.String(&n.kb[s.off], l)
}

// keySpan returns where the bytes of leaf n's record i's RowKey start in
// n.kb, its length header included, and how many there are.
func (n *bnode) keySpan(i int) (start, size uint32) {
	s := &n.slots[i]
	if s.kl == longKey {
		return s.off - 4, 4 + binary.LittleEndian.Uint32(n.kb[s.off-4:])
	}
	return s.off, uint32(s.kl)
}

// rec returns leaf n's record i.
func (n *bnode) rec(i int) record {
	s := &n.slots[i]
	return record{rk: n.key(i), ts: s.ts, props: n.props[s.pi]}
}

// addKey copies k to the end of leaf n's key bytes and returns its place
// and length as a slot holds them.
func (n *bnode) addKey(k string) (off uint32, kl uint16) {
	need := len(k)
	if len(k) >= longKey {
		need += 4
	}
	if cap(n.kb)-len(n.kb) < need {
		n.growKeys(need)
	}
	kl = uint16(len(k))
	if len(k) >= longKey {
		n.kb, kl = binary.LittleEndian.AppendUint32(n.kb, uint32(len(k))), longKey
	}
	off = uint32(len(n.kb))
	n.kb = append(n.kb, k...)
	return off, kl
}

// growKeys moves leaf n's RowKeys to new key bytes with room for need more,
// leaving behind those of records that are gone. The room grows as a
// slice's does, to what a full leaf of keys this long takes at most.
func (n *bnode) growKeys(need int) {
	live := need
	for i := range n.slots {
		_, size := n.keySpan(i)
		live += int(size)
	}
	room := 2
	if len(n.slots) == 0 {
		room = 1 // a new tree's first leaf starts with room for one, as its slots do
	}
	c := max(live, min(room*live, (live/(len(n.slots)+1)+1)*leafCap))
	kb := make([]byte, 0, c)
	for i := range n.slots {
		start, size := n.keySpan(i)
		s := &n.slots[i]
		s.off = s.off - start + uint32(len(kb))
		kb = append(kb, n.kb[start:start+size]...)
	}
	n.kb = kb
	if len(n.slots) > 0 { // the prefix is cut from a key: it need not keep the old bytes
		n.pfx = n.key(0)[:len(n.pfx)]
	}
}

// propsIndex returns the place of p in leaf n's table of Properties,
// adding it there if it is not among the latest: writers of a workload
// most often share a few slices of properties.
func (n *bnode) propsIndex(p []tables.Property) uint16 {
	d := unsafe.SliceData(p)
	addr, l := uintptr(unsafe.Pointer(d)), uint16(len(p))
	tagged := min(len(n.props), len(n.paddr))
	if j := int(n.pnext); j < tagged && n.paddr[j] == addr && n.plen[j] == l && int(l) == len(p) {
		n.pnext++
		return uint16(j)
	}
	for j := range tagged {
		if n.paddr[j] == addr && n.plen[j] == l && int(l) == len(p) {
			n.pnext = uint8(j + 1) // past the end, a miss: the loop looks from the start
			return uint16(j)
		}
	}
	for j := len(n.props) - 1; j >= len(n.paddr) && j >= len(n.props)-8; j-- {
		if q := n.props[j]; unsafe.SliceData(q) == d && len(q) == len(p) {
			return uint16(j)
		}
	}
	if len(n.props) >= maxProps {
		n.compactProps()
	}
	if len(n.props) == cap(n.props) { // grown as a slice would, but not past maxProps
		n.props = slices.Grow(n.props, min(max(1, len(n.props)), maxProps-len(n.props)))
	}
	n.addProps(p)
	return uint16(len(n.props) - 1)
}

// nextProps is propsIndex where p is the slice after the last found, as
// a writer that takes its shared slices in turn writes it: it is inlined.
func (n *bnode) nextProps(p []tables.Property) (uint16, bool) {
	if j := int(n.pnext); j < min(len(n.props), len(n.paddr)) && n.paddr[j] == uintptr(unsafe.Pointer(unsafe.SliceData(p))) && int(n.plen[j]) == len(p) {
		n.pnext++
		return uint16(j), true
	}
	return 0, false
}

// addProps appends p to leaf n's table of Properties.
func (n *bnode) addProps(p []tables.Property) {
	n.tagProps(len(n.props), p)
	n.props = append(n.props, p)
}

// tagProps notes p as props[j] in leaf n's paddr and plen, if j is among
// the first.
func (n *bnode) tagProps(j int, p []tables.Property) {
	if j < len(n.paddr) {
		n.paddr[j], n.plen[j] = uintptr(unsafe.Pointer(unsafe.SliceData(p))), uint16(len(p))
	}
}

// compactProps drops the Properties no record of leaf n holds any more.
func (n *bnode) compactProps() {
	var old [maxProps][]tables.Property
	copy(old[:], n.props)
	var at [maxProps]uint16 // 1 + an old entry's new place, or 0
	k := 0
	for i := range n.slots {
		s := &n.slots[i]
		if at[s.pi] == 0 {
			n.props[k] = old[s.pi]
			n.tagProps(k, old[s.pi])
			k++
			at[s.pi] = uint16(k)
		}
		s.pi = at[s.pi] - 1
	}
	clear(n.props[k:])
	n.props = n.props[:k]
}

// noteTop notes leaf n's last fingerprint, if it has one, as its top.
func (n *bnode) noteTop() {
	if len(n.fps) > 0 {
		n.top = n.fps[len(n.fps)-1]
	}
}

// insertAt stores r as record i of leaf n, whose prefix r's RowKey has
// (see admit), with fp its fingerprint.
func (n *bnode) insertAt(i int, r *record, fp uint64) {
	var off uint32
	var kl uint16
	if k, l := r.rk, len(n.kb); len(k) < longKey && cap(n.kb)-l >= len(k) { // addKey, as most take it, without the call
		off, kl = uint32(l), uint16(len(k))
		n.kb = append(n.kb, k...)
	} else {
		off, kl = n.addKey(k)
	}
	pi, ok := n.nextProps(r.props)
	if !ok {
		pi = n.propsIndex(r.props)
	}
	s := slot{ts: r.ts, off: off, kl: kl, pi: pi}
	if i == len(n.slots) { // an append, as most are
		// One statement each: an append within capacity then writes just
		// the length, with no write barrier for the array.
		n.slots = append(n.slots, s)
		n.fps = append(n.fps, fp)
		n.top = fp
	} else {
		n.slots, n.fps = slices.Insert(n.slots, i, s), slices.Insert(n.fps, i, fp)
	}
	n.mixed = n.mixed || fp == noPrint
	if len(n.slots) == 1 { // an empty leaf took its prefix from r's key
		n.pfx = n.key(0)[:len(n.pfx)]
	}
}

// take moves leaf from's records from place at on to n, a new leaf, with
// their keys and properties: n's key bytes have room for a full leaf's.
func (n *bnode) take(from *bnode, at int) {
	var size uint32
	for i := at; i < len(from.slots); i++ {
		_, sz := from.keySpan(i)
		size += sz
	}
	moved := uint32(len(from.slots) - at)
	n.kb = make([]byte, 0, max(size, (size+moved-1)/moved*leafCap))
	if len(from.props) >= len(from.slots) { // properties of their own, most likely: as many as records
		n.props = make([][]tables.Property, 0, leafCap)
	}
	var pi [maxProps]uint16 // 1 + an entry's place in n.props, or 0
	for i := at; i < len(from.slots); i++ {
		s := from.slots[i]
		start, sz := from.keySpan(i)
		s.off = s.off - start + uint32(len(n.kb))
		n.kb = append(n.kb, from.kb[start:start+sz]...)
		if pi[s.pi] == 0 {
			n.addProps(from.props[s.pi])
			pi[s.pi] = uint16(len(n.props))
		}
		s.pi = pi[s.pi] - 1
		n.slots = append(n.slots, s)
	}
	n.fps = append(n.fps, from.fps[at:]...)
}

func (n *bnode) leaf() bool { return n.kids == nil }

// childIndex returns the kid of inner node n whose range holds rk.
func (n *bnode) childIndex(rk string) int {
	if !n.hasPrefix(rk) { // below or above every separator
		if compareKeys(rk, n.pfx) < 0 {
			return 0
		}
		return len(n.keys)
	}
	fp := n.kprint(rk)
	lo, hi := 0, len(n.keys)
	for lo < hi { // the first separator above rk
		m := int(uint(lo+hi) >> 1)
		f := n.kfps[m]
		var atOrBelow bool
		switch {
		case f[0] != fp[0] && f[0] != noPrint && fp[0] != noPrint:
			atOrBelow = f[0] < fp[0]
		case f[0] == fp[0] && fp[0] != noPrint && f[1] != fp[1] && f[1] != noPrint && fp[1] != noPrint:
			atOrBelow = f[1] < fp[1]
		default:
			atOrBelow = compareKeys(n.keys[m], rk) <= 0
		}
		if atOrBelow {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// search returns where rk is, or would be, in leaf n. Most steps compare
// fingerprints, which sit together in memory; a record is read only when
// two fingerprints cannot tell the keys apart.
func (n *bnode) search(rk string) (int, bool) {
	if !n.hasPrefix(rk) { // below or above every record
		if compareKeys(rk, n.pfx) < 0 {
			return 0, false
		}
		return len(n.slots), false
	}
	fp := n.fingerprint(rk)
	// Keys hold no NUL, so a stored key with the fingerprint of a key whose
	// rest is shorter than eight bytes is that key: it need not be read.
	whole := len(rk)-len(n.pfx) < 8
	if fp != noPrint && !n.mixed {
		// Every fingerprint orders: find the first at or above fp without
		// branches, then step over the keys that share its eight bytes.
		fps := n.fps
		base, size := 0, len(fps)
		for size > 1 {
			half := size / 2
			if fps[base+half-1] < fp {
				base += half
			}
			size -= half
		}
		i := base
		if size == 1 && fps[i] < fp {
			i++
		}
		if whole && i < len(fps) && fps[i] == fp { // the same key: no need to read it
			return i, true
		}
		j := i
		for j < len(fps) && fps[j] == fp { // keys that share these eight bytes
			j++
		}
		for i < j { // told apart by reading them, as few as a binary search needs
			m := int(uint(i+j) >> 1)
			if compareKeys(n.key(m), rk) < 0 {
				i = m + 1
			} else {
				j = m
			}
		}
		return i, i < len(fps) && fps[i] == fp && n.key(i) == rk
	}
	lo, hi := 0, len(n.slots)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		f := n.fps[m]
		var below bool
		if f != fp && f != noPrint && fp != noPrint {
			below = f < fp
		} else {
			below = compareKeys(n.key(m), rk) < 0
		}
		if below {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.slots) && n.fps[lo] == fp && n.key(lo) == rk
}

// noPrint marks a key whose first eight bytes are not all ASCII: UTF-16
// order is not byte order there, so such keys are always compared whole.
const noPrint = ^uint64(0)

// fingerprint returns key's fingerprint in n, whose prefix it has.
func (n *bnode) fingerprint(key string) uint64 { return fingerprintAt(key, len(n.pfx)) }

// admit makes n's prefix one that key shares, taking n's fingerprints
// anew when it shortens, and returns key's fingerprint in n. An empty node
// takes key's ASCII start.
func (n *bnode) admit(key string) uint64 {
	switch {
	case len(n.slots) == 0 && len(n.keys) == 0:
		n.setPrefix(key[:asciiLCP(key, key)])
	case !n.hasPrefix(key):
		n.shorten(asciiLCP(n.pfx, key))
	}
	return n.fingerprint(key)
}

// shorten makes the first l bytes of n's prefix its prefix. A leaf's
// fingerprints are then the bytes cut from the prefix, which every key
// has, followed by their own first bytes: they are taken from them, not
// from the keys, each in a record elsewhere in memory. An appending
// writer's leaf shortens its prefix each time a carry reaches a digit it
// held.
func (n *bnode) shorten(l int) {
	if !n.leaf() {
		n.setPrefix(n.pfx[:l])
		return
	}
	cut := n.pfx[l:] // ASCII, as the whole prefix
	var head uint64  // its first eight bytes, big-endian, from the top
	for i := 0; i < len(cut) && i < 8; i++ {
		head |= uint64(cut[i]) << (56 - 8*i)
	}
	n.pfx, n.pw = n.pfx[:l], prefixWords(n.pfx[:l])
	n.mixed = false
	for i, f := range n.fps {
		switch {
		case f == noPrint: // a byte beyond ASCII, which may be past the new fingerprint's end
			f = n.fingerprint(n.key(i))
		case len(cut) >= 8:
			f = head
		default:
			f = head | f>>(8*len(cut))
		}
		n.fps[i] = f
		n.mixed = n.mixed || f == noPrint
	}
	n.noteTop()
}

// prefixWords returns the first bytes of p, as a node holds them (pw).
func prefixWords(p string) [pwords]uint64 {
	var pw [pwords]uint64
	for w := range pw {
		if len(p) >= 8 {
			pw[w], p = binary.LittleEndian.Uint64([]byte(p[:8])), p[8:]
			continue
		}
		for i := len(p) - 1; i >= 0; i-- { // the last bytes, zero-padded
			pw[w] = pw[w]<<8 | uint64(p[i])
		}
		break
	}
	return pw
}

// setPrefix makes p n's prefix, which every key of n must start with, and
// takes n's fingerprints after it.
func (n *bnode) setPrefix(p string) {
	pw := prefixWords(p)
	// A split most often leaves a node the prefix it had: then its
	// fingerprints hold, and are not taken again from every key, each
	// read from a record elsewhere in memory. The words the node holds
	// tell without reading the old prefix, in as much as they hold.
	same := len(p) == len(n.pfx) && pw == n.pw && (len(p) <= 8*pwords || p == n.pfx)
	n.pfx, n.pw = p, pw
	if n.leaf() {
		if same { // none is noPrint where none was (search depends on it)
			n.mixed = n.mixed && slices.Contains(n.fps, noPrint)
			n.noteTop()
			return
		}
		n.mixed = false
		for i := range n.slots {
			n.fps[i] = n.fingerprint(n.key(i))
			n.mixed = n.mixed || n.fps[i] == noPrint
		}
		n.noteTop()
		return
	}
	if same {
		return
	}
	for i, k := range n.keys {
		n.kfps[i] = n.kprint(k)
	}
}

// pwords is how many words of a node's prefix the node holds itself.
const pwords = 3

// hasPrefix reports whether key starts with n's prefix. It compares words of
// the key with the words the node holds instead of reading the prefix,
// which is cut from some key stored elsewhere in memory: a lookup reads
// every node's prefix on its way down, and those reads missed the cache.
func (n *bnode) hasPrefix(key string) bool {
	p := len(n.pfx)
	if len(key) < p {
		return false
	}
	d := unsafe.Pointer(unsafe.StringData(key))
	at := func(i int) uint64 { // the eight bytes from i, all key's: no bounds to check
		return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(d, i))[:])
	}
	full := p / 8 // the prefix's whole words
	if full >= pwords {
		for w := range pwords {
			if at(8*w) != n.pw[w] {
				return false
			}
		}
		return key[8*pwords:p] == n.pfx[8*pwords:]
	}
	var differ uint64
	for w := range full {
		differ |= at(8*w) ^ n.pw[w]
	}
	if r := p % 8; r > 0 { // fewer than eight bytes left: one load of eight, masked
		i, mask := 8*full, uint64(1)<<(8*r)-1
		var x uint64
		switch {
		case i+8 <= len(key):
			x = at(i) & mask
		case len(key) >= 8: // the key's last eight bytes, moved down to start at i
			x = at(len(key)-8) >> (8 * (i + 8 - len(key)) & 63) & mask
		default:
			for j := i; j < p; j++ {
				x |= uint64(key[j]) << (8 * (j - i) & 63)
			}
		}
		differ |= x ^ n.pw[full]
	}
	return differ == 0
}

// asciiLCP returns the length of the longest prefix a and b share that is
// ASCII: a prefix never ends inside a character, and every fingerprint
// after it is of whole characters.
func asciiLCP(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] && a[i] < 0x80 {
		i++
	}
	return i
}

// fingerprintAt returns the eight bytes of an ASCII key from at,
// big-endian and zero-padded, so that fingerprints that differ order as the
// keys do. Keys hold no control characters, so padding sorts below every
// real byte, as a prefix sorts below a longer key.
func fingerprintAt(rk string, at int) uint64 {
	if at >= len(rk) {
		return 0
	}
	if len(rk) >= 8 { // one load: every lookup takes three or four of these
		// The eight bytes from at, or the key's last eight, those before
		// at shifted out and zeros in.
		from := min(at, len(rk)-8)
		w := binary.BigEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(rk)), from))[:]) << (8 * (at - from) & 63)
		if w&0x8080808080808080 != 0 {
			return noPrint
		}
		return w
	}
	rk = rk[at:]
	var f uint64
	for i := range 8 {
		f <<= 8
		if i < len(rk) {
			if rk[i] >= 0x80 {
				return noPrint
			}
			f |= uint64(rk[i])
		}
	}
	return f
}

// kprint is a separator's fingerprint: sixteen bytes after its node's
// prefix, in two fingerprints. An inner node's separators span more of the
// key space than a leaf's keys, so they share a shorter prefix; with
// writers sharing a PartitionKey, eight bytes after it tell writers apart
// but not one writer's keys.
type kprint [2]uint64

// kprint returns key's separator fingerprint in n, whose prefix it has.
func (n *bnode) kprint(key string) kprint {
	f := kprint{fingerprintAt(key, len(n.pfx)), fingerprintAt(key, len(n.pfx)+8)}
	if f[0] == noPrint {
		f[1] = noPrint
	}
	return f
}

// maxDepth bounds the tree's height: 64^10 records is more than any
// memory holds.
const maxDepth = 12

type step struct {
	n *bnode
	i int
}

// find descends to the leaf where rk is or would be, recording the way down
// in path when it is not nil, and returns the leaf, the path's depth, rk's
// place in the leaf and whether it is there. The tree must have a root.
func (t *rowTree) find(rk string, path *[maxDepth]step) (n *bnode, depth, i int, found bool) {
	n = t.root
	for !n.leaf() {
		i := n.childIndex(rk)
		if path != nil {
			path[depth] = step{n, i}
		}
		depth++
		n = n.kids[i]
	}
	i, found = n.search(rk)
	return n, depth, i, found
}

// get returns the record with RowKey rk, and whether there is one.
func (t *rowTree) get(rk string) (record, bool) {
	if t.root == nil {
		return record{}, false
	}
	if n, _, i, ok := t.find(rk, nil); ok {
		return n.rec(i), true
	}
	return record{}, false
}

// put stores a copy of r, replacing and returning any record with its
// RowKey, and reports whether there was one; when keep is true an existing
// record stays and is returned instead.
func (t *rowTree) put(r *record, keep bool) (old record, found bool) {
	if t.root == nil {
		// Room for one: many keys keep one entity (append and prepend
		// keys, one key a request), and the leaf grows as a slice does,
		// to leafCap at most, for those that keep more.
		t.root = newLeaf(1)
		t.tail = t.root
	}
	if n := t.tail; len(n.slots) > 0 && len(n.slots) < maxLeaf {
		// Above every stored RowKey, in a leaf with room: what the way
		// down the rightmost path below would do, without it.
		fp, ok := n.printAbove(r.rk)
		if !ok && n.above(r.rk) {
			fp, ok = n.admit(r.rk), true
		}
		if ok {
			n.insertAt(len(n.slots), r, fp)
			t.n++
			return record{}, false
		}
	}
	var path [maxDepth]step
	depth := 0
	n := t.root
	for !n.leaf() { // the rightmost path first: most writers append
		path[depth] = step{n, len(n.kids) - 1}
		depth++
		n = n.kids[len(n.kids)-1]
	}
	if len(n.slots) > 0 && n.above(r.rk) {
		// Above every stored RowKey: no comparisons on the way down.
		n.insertAt(len(n.slots), r, n.admit(r.rk))
		t.n++
		t.splitUp(n, path[:depth], true)
		return record{}, false
	}
	var i int
	if len(n.slots) > 0 && compareKeys(r.rk, n.key(0)) >= 0 {
		// At or above the last leaf's first RowKey: it is the leaf, and the
		// way down is the one just taken. A batch's RowKeys most often fall
		// among each other at the tree's end (1_10 before 1_2).
		i, found = n.search(r.rk)
	} else {
		n, depth, i, found = t.find(r.rk, &path)
	}
	if found {
		old = n.rec(i)
		if !keep { // the same RowKey: its bytes stay
			pi := n.propsIndex(r.props)
			n.slots[i].ts, n.slots[i].pi = r.ts, pi
		}
		return old, true
	}
	n.insertAt(i, r, n.admit(r.rk))
	if n.last >= 0 && i > int(n.last) && i <= int(n.last)+2 { // just after it, or one key further on
		n.run = min(n.run+1, runMax)
	} else {
		n.run = 0
	}
	n.last = int16(i)
	t.n++
	t.splitUp(n, path[:depth], false)
	return record{}, false
}

// printAbove returns rk's fingerprint in leaf n, which holds some RowKeys,
// and true when rk has n's prefix and its fingerprint alone places it above
// them all, as an appending writer's keys most often are: it is then what
// admit would return, and admit need not test the prefix again.
func (n *bnode) printAbove(rk string) (uint64, bool) {
	last := n.top
	if last == noPrint || !n.hasPrefix(rk) {
		return 0, false
	}
	fp := n.fingerprint(rk)
	return fp, fp != noPrint && fp > last
}

// above reports whether rk is above every RowKey of leaf n, which holds
// some. Their fingerprints most often tell, and then the last record, far
// from n in memory, and its key, further still, need not be read: with
// writers spread over many PartitionKeys, each append lands in a tree
// whose leaf is no longer in the cache.
func (n *bnode) above(rk string) bool {
	last := n.fps[len(n.fps)-1]
	if last != noPrint && n.hasPrefix(rk) {
		if fp := n.fingerprint(rk); fp != last && fp != noPrint {
			return fp > last
		}
	}
	return compareKeys(n.key(len(n.slots)-1), rk) < 0
}

// splitUp splits n, and then its ancestors, while they are over size. A
// node that grew by an append splits off just its last entry, so ascending
// writes leave full nodes behind instead of half-empty ones.
func (t *rowTree) splitUp(n *bnode, path []step, appended bool) {
	for {
		var right *bnode
		var sep string
		switch {
		case n.leaf() && len(n.slots) > maxLeaf:
			at := len(n.slots) / 2
			switch {
			case appended:
				at = len(n.slots) - 1
			case n.run >= runSplit && int(n.last) == len(n.slots)-1:
				at = int(n.last) // the run goes on in a leaf of its own
			case n.run >= runSplit:
				at = int(n.last) + 1 // the run goes on at this leaf's end
			}
			right = newLeaf(leafCap)
			right.pfx, right.pw, right.mixed = n.pfx, n.pw, n.mixed // its fingerprints are n's until setPrefix
			right.take(n, at)
			n.slots, n.fps = n.slots[:at], n.fps[:at] // the arrays stay for later inserts; the moved keys' bytes, until they grow
			if len(n.props) > at {                    // the moved records' properties may be theirs alone
				n.compactProps()
			}
			if int(n.last) >= at {
				right.last, right.run = n.last-int16(at), n.run
				n.last, n.run = -1, 0
			}
			right.prev, right.next = n, n.next
			if n.next != nil {
				n.next.prev = right
			} else {
				t.tail = right
			}
			n.next = right
			// The separator is the inner nodes' own: one cut from the
			// leaf's key bytes would keep them after the leaf moves on.
			sep = strings.Clone(right.key(0))
			// Each half's keys share more than the whole did. A leaf of one
			// key, where a run goes on, takes what it shares with the key
			// before it: the keys the run will add share that too.
			first, last := n.key(0), n.key(at-1)
			n.setPrefix(first[:asciiLCP(first, last)])
			if first, last = right.key(0), right.key(len(right.slots)-1); len(right.slots) == 1 {
				first = n.key(at - 1)
			}
			right.setPrefix(last[:asciiLCP(first, last)])
		case !n.leaf() && len(n.kids) > maxInner:
			at := len(n.kids) / 2
			if appended {
				at = len(n.kids) - 1
			}
			sep = n.keys[at-1]
			right = &bnode{pfx: n.pfx, pw: n.pw, keys: slices.Clone(n.keys[at:]), kfps: slices.Clone(n.kfps[at:]), kids: slices.Clone(n.kids[at:])}
			clear(n.kids[at:])
			clear(n.keys[at-1:])
			n.keys, n.kfps, n.kids = n.keys[:at-1:at-1], n.kfps[:at-1:at-1], n.kids[:at:at]
			for _, h := range []*bnode{n, right} {
				if len(h.keys) > 0 {
					first, last := h.keys[0], h.keys[len(h.keys)-1]
					h.setPrefix(first[:asciiLCP(first, last)])
				}
			}
		default:
			return
		}
		if len(path) == 0 { // a new root above the split
			t.root = &bnode{kids: []*bnode{n, right}}
			t.root.admit(sep)
			t.root.keys, t.root.kfps = []string{sep}, []kprint{t.root.kprint(sep)}
			return
		}
		p := path[len(path)-1]
		path = path[:len(path)-1]
		p.n.admit(sep)
		p.n.keys, p.n.kfps = slices.Insert(p.n.keys, p.i, sep), slices.Insert(p.n.kfps, p.i, p.n.kprint(sep))
		p.n.kids = slices.Insert(p.n.kids, p.i+1, right)
		n = p.n
	}
}

// remove deletes the record with RowKey rk and returns it, and reports
// whether there was one.
func (t *rowTree) remove(rk string) (record, bool) {
	if t.root == nil {
		return record{}, false
	}
	var path [maxDepth]step
	n, depth, i, found := t.find(rk, &path)
	if !found {
		return record{}, false
	}
	old := n.rec(i)
	n.slots, n.fps = slices.Delete(n.slots, i, i+1), slices.Delete(n.fps, i, i+1)
	n.noteTop()
	t.n--
	if len(n.slots) == 0 { // the bytes of keys read from it stay theirs
		n.kb, n.props = nil, nil
	}
	if len(n.slots) > 0 || depth == 0 {
		return old, true
	}
	// Unlink the empty leaf, then drop it and any ancestor it empties.
	if n.prev != nil {
		n.prev.next = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		t.tail = n.prev
	}
	for d := depth - 1; d >= 0; d-- {
		p := path[d]
		p.n.kids = slices.Delete(p.n.kids, p.i, p.i+1)
		if len(p.n.keys) > 0 {
			k := max(p.i-1, 0) // the separator between the dropped kid and its neighbour
			p.n.keys, p.n.kfps = slices.Delete(p.n.keys, k, k+1), slices.Delete(p.n.kfps, k, k+1)
		}
		if len(p.n.kids) > 0 {
			break
		}
	}
	for !t.root.leaf() && len(t.root.kids) == 1 {
		t.root = t.root.kids[0]
	}
	if !t.root.leaf() && len(t.root.kids) == 0 {
		t.root, t.tail = nil, nil
	}
	return old, true
}

// ascend calls fn on the records at or after rk in order until fn returns
// false, and reports whether it ran to the end. Each record is copied to r
// for fn, which must not keep r.
func (t *rowTree) ascend(rk string, r *record, fn func(*record) bool) bool {
	if t.root == nil {
		return true
	}
	n, _, i, _ := t.find(rk, nil)
	for ; n != nil; n, i = n.next, 0 {
		for ; i < len(n.slots); i++ {
			*r = n.rec(i)
			if !fn(r) {
				return false
			}
		}
	}
	return true
}
