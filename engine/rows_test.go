package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/tablebench/tablebench/tables"
)

// check walks t and fails on any broken invariant: keys in order within and
// across leaves, separators bounding their kids, the leaf chain matching the
// tree, and the count.
func (t *rowTree) check(tb testing.TB) []string {
	tb.Helper()
	var leaves []*bnode
	var walk func(n *bnode, lo, hi *string, depth int) int
	leafDepth := -1
	walk = func(n *bnode, lo, hi *string, depth int) int {
		for i := range n.pfx {
			if n.pfx[i] >= 0x80 {
				tb.Fatalf("prefix %q is not ASCII", n.pfx)
			}
		}
		if want := (&bnode{}); true {
			want.setPrefix(n.pfx)
			if want.pw != n.pw {
				tb.Fatalf("prefix %q held as %x, want %x", n.pfx, n.pw, want.pw)
			}
		}
		if n.leaf() {
			if leafDepth >= 0 && depth != leafDepth {
				tb.Fatalf("leaves at depths %d and %d", leafDepth, depth)
			}
			leafDepth = depth
			if len(n.slots) == 0 && n != t.root {
				tb.Fatalf("an empty leaf below the root")
			}
			if len(n.fps) != len(n.slots) {
				tb.Fatalf("leaf with %d records and %d fingerprints", len(n.slots), len(n.fps))
			}
			if len(n.slots) > maxLeaf || cap(n.slots) > leafCap || cap(n.fps) > leafCap {
				tb.Fatalf("leaf of %d records in arrays of %d and %d, want at most %d in %d", len(n.slots), cap(n.slots), cap(n.fps), maxLeaf, leafCap)
			}
			if len(n.fps) > 0 && n.top != n.fps[len(n.fps)-1] {
				tb.Fatalf("leaf's top %x, its last fingerprint %x", n.top, n.fps[len(n.fps)-1])
			}
			if len(n.props) > maxProps {
				tb.Fatalf("leaf with %d Properties slices, want at most %d", len(n.props), maxProps)
			}
			for j := range min(len(n.props), len(n.paddr)) {
				if n.paddr[j] != uintptr(unsafe.Pointer(unsafe.SliceData(n.props[j]))) || int(n.plen[j]) != len(n.props[j]) {
					tb.Fatalf("Properties slice %d noted out of date", j)
				}
			}
			for i := range n.slots {
				if int(n.slots[i].pi) >= len(n.props) {
					tb.Fatalf("record %d's Properties at %d of %d", i, n.slots[i].pi, len(n.props))
				}
				if start, size := n.keySpan(i); int(start+size) > len(n.kb) {
					tb.Fatalf("record %d's RowKey at %d+%d of %d bytes", i, start, size, len(n.kb))
				}
				r := n.rec(i)
				if !strings.HasPrefix(r.rk, n.pfx) {
					tb.Fatalf("RowKey %q in a leaf with prefix %q", r.rk, n.pfx)
				}
				if n.fps[i] != n.fingerprint(r.rk) || n.fps[i] == noPrint && !n.mixed {
					tb.Fatalf("fingerprint of %q out of date", r.rk)
				}
				if lo != nil && compareKeys(r.rk, *lo) < 0 || hi != nil && compareKeys(r.rk, *hi) >= 0 {
					tb.Fatalf("RowKey %q outside its leaf's range", r.rk)
				}
				if i > 0 && compareKeys(n.key(i-1), r.rk) >= 0 {
					tb.Fatalf("leaf out of order at %q", r.rk)
				}
			}
			leaves = append(leaves, n)
			return len(n.slots)
		}
		if len(n.kids) == 0 || len(n.keys) != len(n.kids)-1 {
			tb.Fatalf("inner node with %d kids and %d keys", len(n.kids), len(n.keys))
		}
		for i, k := range n.keys {
			if !strings.HasPrefix(k, n.pfx) {
				tb.Fatalf("separator %q in a node with prefix %q", k, n.pfx)
			}
			if n.kfps[i] != n.kprint(k) {
				tb.Fatalf("fingerprint of separator %q out of date", k)
			}
		}
		total := 0
		for i, k := range n.kids {
			klo, khi := lo, hi
			if i > 0 {
				klo = &n.keys[i-1]
			}
			if i < len(n.keys) {
				khi = &n.keys[i]
			}
			total += walk(k, klo, khi, depth+1)
		}
		return total
	}
	if t.root == nil {
		if t.n != 0 || t.tail != nil {
			tb.Fatalf("no root but %d records, or a tail", t.n)
		}
		return nil
	}
	if got := walk(t.root, nil, nil, 0); got != t.n {
		tb.Fatalf("tree holds %d records, counts %d", got, t.n)
	}
	if t.tail != leaves[len(leaves)-1] {
		tb.Fatalf("tail is not the last leaf")
	}
	for i, l := range leaves {
		if i > 0 && l.prev != leaves[i-1] || i == 0 && l.prev != nil {
			tb.Fatalf("leaf %d: prev link broken", i)
		}
		if i+1 < len(leaves) && l.next != leaves[i+1] || i+1 == len(leaves) && l.next != nil {
			tb.Fatalf("leaf %d: next link broken", i)
		}
	}
	var keys []string
	t.ascend("", new(record), func(r *record) bool { keys = append(keys, r.rk); return true })
	return keys
}

// TestRowTreeAgainstAMap runs random inserts, replaces, deletes and scans,
// ascending runs and random keys, against a map and a sorted slice.
func TestRowTreeAgainstAMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var tr rowTree
		ref := map[string]record{}
		same := func(a record, aok bool, b record, bok bool) bool {
			return aok == bok && a.rk == b.rk && a.ts == b.ts && len(a.props) == len(b.props) && unsafe.SliceData(a.props) == unsafe.SliceData(b.props)
		}
		payloads := [][]tables.Property{nil, {tables.String("A", "a")}, {tables.Int64("B", 2)}}
		prefix := []string{"", "job_1_7_", "tenant-42/2026-11-22T"}[seed%3] // keys sharing a prefix, as most workloads write
		var sorted []string                                                 // ref's keys in order
		index := func(k string) (int, bool) { return slices.BinarySearchFunc(sorted, k, compareKeys) }
		space := []int{50, 500, 5000}[seed%3]
		next := 0
		for step := range 20000 {
			var rk string
			switch rng.IntN(6 + 24*int(seed%2)) { // odd seeds keep the prefix most of the time
			case 0: // an ascending run, as the harness writes
				next++
				rk = fmt.Sprintf("z%08d", next)
			case 1: // batches of unpadded numbers, which fall among each other at the end (z1_10 before z1_2)
				next++
				rk = fmt.Sprintf("zz%d_%d", next/100, next%100)
			case 2: // a long shared prefix: fingerprints tie
				rk = fmt.Sprintf("shared_prefix_%d", rng.IntN(space))
			case 3: // not ASCII, where UTF-16 order is not byte order: U+FF21 sorts above U+1F600
				rk = fmt.Sprintf("%s%d", []string{"é", "\uFF21", "\U0001F600", "a\U0001F600"}[rng.IntN(4)], rng.IntN(space/10+1))
			case 4, 5:
				rk = fmt.Sprintf("k%05d", rng.IntN(space))
			default:
				rk = fmt.Sprintf("%s%08d", prefix, rng.IntN(space))
			}
			switch op := rng.IntN(10); {
			case op < 5:
				r := record{rk: rk, ts: int64(step), props: payloads[rng.IntN(len(payloads))]}
				if seed%4 == 3 { // every write its own properties, as from the wire
					r.props = []tables.Property{tables.Int64("C", int64(step))}
				}
				keep := rng.IntN(2) == 0
				want, had := ref[rk]
				old, found := tr.put(&r, keep)
				if !same(old, found, want, had) {
					t.Fatalf("seed %d step %d: put %q returned %v %v, want %v %v", seed, step, rk, old, found, want, had)
				}
				if !found {
					i, _ := index(rk)
					sorted = slices.Insert(sorted, i, rk)
				}
				if !found || !keep {
					ref[rk] = r
				}
			case op < 8:
				want, had := ref[rk]
				old, found := tr.remove(rk)
				if !same(old, found, want, had) {
					t.Fatalf("seed %d step %d: remove %q returned %v %v, want %v %v", seed, step, rk, old, found, want, had)
				}
				if i, ok := index(rk); ok {
					sorted = slices.Delete(sorted, i, i+1)
				}
				delete(ref, rk)
			default:
				want, had := ref[rk]
				if got, ok := tr.get(rk); !same(got, ok, want, had) {
					t.Fatalf("seed %d step %d: get %q = %v %v, want %v %v", seed, step, rk, got, ok, want, had)
				}
				var from []string
				tr.ascend(rk, new(record), func(r *record) bool { from = append(from, r.rk); return len(from) < 5 })
				i, _ := index(rk)
				wantKeys := sorted[i:min(i+5, len(sorted))]
				if !slices.Equal(from, wantKeys) {
					t.Fatalf("seed %d step %d: scan from %q = %v, want %v", seed, step, rk, from, wantKeys)
				}
			}
			if step%997 == 0 || step == 19999 {
				if keys := tr.check(t); !slices.Equal(keys, sorted) {
					t.Fatalf("seed %d step %d: tree holds %d keys, want %d", seed, step, len(keys), len(sorted))
				}
			}
		}
	}
}

// TestRowTreeAppendsFillNodes checks that writers whose keys ascend leave
// full leaves, the memory per entity depends on it: one writer appending,
// and 30 writers sharing a PartitionKey, each appending inside the range of
// keys the others hold. A pattern with no order must still leave leaves at
// least half full on average.
func TestRowTreeAppendsFillNodes(t *testing.T) {
	const n = 100_000
	rand := rand.New(rand.NewPCG(1, 2))
	perm := rand.Perm(n)
	for _, tc := range []struct {
		name     string
		key      func(i int) string
		wantFill float64
	}{
		{"one writer", func(i int) string { return fmt.Sprintf("r%07d", i) }, 0.95},
		{"30 writers", func(i int) string { return fmt.Sprintf("tb_1_%d_%010d", i%30, i/30) }, 0.95},
		{"no order", func(i int) string { return fmt.Sprintf("r%07d", perm[i]) }, 0.5},
	} {
		var tr rowTree
		for i := range n {
			tr.put(&record{rk: tc.key(i)}, true)
		}
		tr.check(t)
		leaves := 0
		tr.eachLeaf(func(*bnode) { leaves++ })
		if fill := float64(n) / float64(leaves*maxLeaf); fill < tc.wantFill {
			t.Fatalf("%s: leaves filled to %.0f%%, want at least %.0f%%", tc.name, 100*fill, 100*tc.wantFill)
		}
		for i := n - 1; i >= 0; i-- { // and deleting everything leaves an empty tree
			if _, ok := tr.remove(tc.key(i)); !ok {
				t.Fatalf("%s: %s missing", tc.name, tc.key(i))
			}
		}
		tr.check(t)
		if tr.n != 0 || tr.root != nil && (!tr.root.leaf() || len(tr.root.slots) != 0) {
			t.Fatalf("%s: after deleting all: %d records", tc.name, tr.n)
		}
	}
}

// TestRowTreeNodePrefixes stores many keys with one prefix, then keys
// that share less of it, and checks that every lookup finds its key and
// that a node's prefix is as long as its keys allow: fingerprints are then
// taken where keys differ, and a lookup reads no record to tell them apart.
func TestRowTreeNodePrefixes(t *testing.T) {
	var tr rowTree
	var keys []string
	add := func(k string) {
		keys = append(keys, k)
		tr.put(&record{rk: k}, true)
	}
	for i := range 3000 {
		add(fmt.Sprintf("job_1_7_%010d", i))
	}
	for i := range 30_000 { // 30 writers sharing one PartitionKey
		add(fmt.Sprintf("job_2_%d_%010d", i%30, i/30))
	}
	add("job_1_8_0000000000")
	add("a")
	add("\U0001F600")
	add("job_\u00e9") // a prefix stops before a character that is not ASCII
	tr.check(t)
	for _, k := range keys {
		if r, ok := tr.get(k); !ok || r.rk != k {
			t.Fatalf("get %q = %v", k, r)
		}
	}
	// Leaves of one writer's keys share all but the last digits.
	short := 0
	tr.eachLeaf(func(l *bnode) {
		first, last := l.key(0), l.key(len(l.slots)-1)
		if len(l.pfx) != asciiLCP(first, last) && len(l.pfx)+8 < len(last) {
			short++
		}
	})
	if short > 10 {
		t.Fatalf("%d leaves with prefixes shorter than their keys share and fingerprints that do not reach the end", short)
	}
}

// BenchmarkRowTreeGet reports point lookups in one PartitionKey's rows:
// one writer's keys, and 30 writers sharing the key, whose RowKeys agree
// on more than the eight bytes after what all of them share.
func BenchmarkRowTreeGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		key  func(i int) string
	}{
		{"one writer", func(i int) string { return fmt.Sprintf("tb_1_1_1_%010d", i) }},
		{"30 writers", func(i int) string { return fmt.Sprintf("tb_1_%d_%d_%010d", i%3+1, i%10, i/30) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 90_000
			var tr rowTree
			keys := make([]string, n)
			for i := range n {
				keys[i] = bc.key(i)
				tr.put(&record{rk: keys[i]}, true)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for range b.N {
				if _, ok := tr.get(keys[rng.IntN(n)]); !ok {
					b.Fatal("missing")
				}
			}
		})
	}
}

// TestHasPrefix checks the word-at-a-time prefix test against
// strings.HasPrefix for prefixes and keys of every length around the
// words the node holds.
func TestHasPrefix(t *testing.T) {
	base := "tb_1_3_7_0000012345_abcdefghijklmnopqrstuvwxyz"
	for p := 0; p <= len(base); p++ {
		var n bnode
		n.setPrefix(base[:p])
		for k := 0; k <= len(base); k++ {
			for _, key := range []string{base[:k], base[:k] + "x", strings.ToUpper(base[:k])} {
				if got, want := n.hasPrefix(key), strings.HasPrefix(key, base[:p]); got != want {
					t.Fatalf("prefix %q, key %q: %v, want %v", base[:p], key, got, want)
				}
			}
			if k < p { // one byte changed inside the prefix, of a key as long or longer
				key := []byte(base)
				key[k] ^= 1
				for _, l := range []int{p, p + 1, p + 7, p + 8, len(base)} {
					if l <= len(key) && n.hasPrefix(string(key[:l])) {
						t.Fatalf("prefix %q matched %q", base[:p], key[:l])
					}
				}
			}
		}
	}
}

// TestPrefixWords checks the words a node holds of its prefix against
// the byte loop, for prefixes of every length up to the words and past
// them.
func TestPrefixWords(t *testing.T) {
	base := "tb_1_3_7_0000012345_abcdefghijklmnopq\x7f"
	for l := 0; l <= len(base); l++ {
		var want [pwords]uint64
		for i := 0; i < l && i < 8*pwords; i++ {
			want[i/8] |= uint64(base[i]) << (8 * (i % 8))
		}
		if got := prefixWords(base[:l]); got != want {
			t.Fatalf("prefix %q: %x, want %x", base[:l], got, want)
		}
	}
}

// TestShortenAgreesWithSetPrefix: a leaf whose prefix shortens takes the
// fingerprints, the top and the mixed mark that taking them anew from its
// keys gives, for keys as long as the prefix, a few bytes or many longer,
// and with bytes beyond ASCII near the prefix or far from it.
func TestShortenAgreesWithSetPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const pfx = "tb_1_3_7_000001234567890123456789"
	tails := []string{"", "0", "05", "0123456789", "0\xe9", "01234567\xe9", "\xc3\xa9tail", "9999999"}
	for round := range 2000 {
		p := r.IntN(len(pfx) + 1)
		n := newLeaf(leafCap)
		for range 1 + r.IntN(maxLeaf) {
			k := pfx[:p] + tails[r.IntN(len(tails))]
			if r.IntN(2) == 0 {
				k = pfx[:p] + pfx[p:][:r.IntN(len(pfx)-p+1)]
			}
			off, kl := n.addKey(k)
			n.slots, n.fps = append(n.slots, slot{off: off, kl: kl}), append(n.fps, 0)
		}
		n.setPrefix(n.key(0)[:p])
		want := *n
		want.fps = slices.Clone(n.fps)
		l := r.IntN(p + 1)
		n.shorten(l)
		want.setPrefix(want.pfx[:l])
		if n.pfx != want.pfx || n.pw != want.pw || !slices.Equal(n.fps, want.fps) || n.top != want.top || n.mixed != want.mixed {
			t.Fatalf("round %d, prefix %q shortened to %d: fingerprints %x, top %x, mixed %v; anew %x, %x, %v",
				round, pfx[:p], l, n.fps, n.top, n.mixed, want.fps, want.top, want.mixed)
		}
	}
}

// eachLeaf calls fn on every leaf, left to right, along the leaf chain.
func (t *rowTree) eachLeaf(fn func(*bnode)) {
	l := t.root
	for l != nil && !l.leaf() {
		l = l.kids[0]
	}
	for ; l != nil; l = l.next {
		fn(l)
	}
}

// engineWithTable returns an engine of profile none, closed at the end of
// the test, that holds the table name.
func engineWithTable(t *testing.T, name string) (*Engine, context.Context) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Profile = None()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	if err := e.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	return e, ctx
}

// TestBatchForgetsEmptyKeys checks that a batch which leaves a
// PartitionKey without rows, by failing on a new key or by deleting a
// key's last rows, leaves no empty set of rows behind for scans and splits
// to walk.
func TestBatchForgetsEmptyKeys(t *testing.T) {
	e, ctx := engineWithTable(t, "keys")
	ins := func(pk, rk string) tables.BatchOp {
		return tables.BatchOp{Kind: tables.BatchInsert, Entity: tables.Entity{PartitionKey: pk, RowKey: rk}}
	}
	del := func(pk, rk string) tables.BatchOp {
		return tables.BatchOp{Kind: tables.BatchDelete, Entity: tables.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: "*"}
	}
	if _, err := e.Client(nil).Batch(ctx, "keys", []tables.BatchOp{ins("fresh", "a"), del("fresh", "missing")}); err == nil {
		t.Fatal("a delete of a missing entity succeeded")
	}
	if _, err := e.Client(nil).Batch(ctx, "keys", []tables.BatchOp{ins("solo", "a"), ins("solo", "b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client(nil).Batch(ctx, "keys", []tables.BatchOp{del("solo", "a"), del("solo", "b")}); err != nil {
		t.Fatal(err)
	}
	tb, _ := e.table("keys")
	m := tb.parts.Load()
	for i := range m.parts {
		rp := m.parts[i].Load()
		if rp == nil {
			continue
		}
		rp.mu.RLock()
		n, ordered := len(rp.data.byKey), 0
		if rp.data.order != nil {
			ordered = rp.data.order.Len()
		}
		rp.mu.RUnlock()
		if n != 0 || ordered != 0 {
			t.Fatalf("range partition %d keeps %d keys (%d in order) with no rows", rp.id, n, ordered)
		}
	}
}

// newPartitionMap returns the map of parts, made already.
func newPartitionMap(parts []*rangePartition) *partitionMap {
	m := &partitionMap{parts: make([]atomic.Pointer[rangePartition], len(parts)), lo: make([]uint64, len(parts)), los: make([]string, len(parts))}
	for i, rp := range parts {
		m.parts[i].Store(rp)
		m.lo[i] = fingerprintAt(rp.lo, 0)
		m.los[i] = rp.lo
	}
	return m
}

// TestLocate checks the fingerprint search for a key's range partition
// against a scan of the low keys, with the low keys splits make: hex
// bounds, a key and the key just above it (top+"\x00"), shared prefixes
// longer than a fingerprint, and keys that are not ASCII.
func TestLocate(t *testing.T) {
	los := []string{"", "1", "4", "4abcdefgh", "4abcdefgh\x00", "4abcdefghz", "8", "8\x00", "a", "é", "éa", "\U0001F600"}
	parts := make([]*rangePartition, len(los))
	for i, lo := range los {
		parts[i] = &rangePartition{lo: lo}
	}
	tb := &table{}
	tb.parts.Store(newPartitionMap(parts))
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"0", "1", "4", "8", "a", "abcdefgh", "z", "\x00", "é", "\U0001F600", "-"}
	keys := slices.Clone(los)
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		keys = append(keys, b.String())
	}
	for _, k := range keys {
		want := parts[0]
		for _, rp := range parts {
			if compareKeys(rp.lo, k) <= 0 {
				want = rp
			}
		}
		if got := tb.locate(k); got != want {
			t.Fatalf("locate(%q) = partition from %q, want from %q", k, got.lo, want.lo)
		}
	}
}

// TestRowKeySet checks the batch's set of RowKeys against a map: 100
// distinct keys are all new, and a key that repeats is found at its
// second place, whatever the keys share.
func TestRowKeySet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		ops := make([]tables.BatchOp, 100)
		seen := map[string]int{}
		want := -1
		for i := range ops {
			k := fmt.Sprintf("tb_1_7_%010d", rng.IntN(40+round*10))
			if round%2 == 0 { // distinct keys
				k = fmt.Sprintf("k%d", i)
			}
			ops[i].Entity.RowKey = k
			if _, dup := seen[k]; dup && want < 0 {
				want = i
			}
			seen[k] = i
		}
		var s rowKeySet
		got := -1
		for i := range ops {
			if !s.add(ops, i) {
				got = i
				break
			}
		}
		if got != want {
			t.Fatalf("round %d: first repeat at %d, want %d", round, got, want)
		}
	}
}

// TestFailedInsertBatchLeavesNothing checks that a batch of inserts that
// fails on its last entity, after the others split leaves, takes them all
// out again and leaves a sound tree.
func TestFailedInsertBatchLeavesNothing(t *testing.T) {
	e, ctx := engineWithTable(t, "undo")
	if _, err := e.Client(nil).Insert(ctx, "undo", tables.Entity{PartitionKey: "p", RowKey: "r099"}); err != nil {
		t.Fatal(err)
	}
	ops := make([]tables.BatchOp, 100)
	for i := range ops {
		ops[i] = tables.BatchOp{Kind: tables.BatchInsert, Entity: tables.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i)}}
	}
	// ops[99], r099, is there already
	_, err := e.Client(nil).Batch(ctx, "undo", ops)
	var te *tables.Error
	if !errors.As(err, &te) || te.Code != tables.CodeEntityAlreadyExists || te.Index != 99 {
		t.Fatalf("got %v, want EntityAlreadyExists at 99", err)
	}
	tb, _ := e.table("undo")
	rp := tb.locate("p")
	rp.mu.RLock()
	defer rp.mu.RUnlock()
	if keys := rp.data.rows("p").rows.check(t); !slices.Equal(keys, []string{"r099"}) {
		t.Fatalf("after the failed batch the key holds %v, want [r099]", keys)
	}
}

// BenchmarkRowTreeBatchKeys inserts batches of 100 RowKeys numbered
// without padding, as the SDK benchmark and many applications write them
// (b_10 sorts before b_2), into a key's tree of a million: per insert.
func BenchmarkRowTreeBatchKeys(b *testing.B) {
	const stored = 1_000_000
	recs := make([]record, stored+b.N)
	for n := range recs {
		recs[n].rk = fmt.Sprintf("%08d_%d", n/100, n%100)
	}
	var tr rowTree
	for n := range stored {
		tr.put(&recs[n], true)
	}
	b.ResetTimer()
	for n := stored; n < len(recs); n++ {
		tr.put(&recs[n], true)
	}
}

// TestRowTreeKeyLengths stores empty RowKeys and RowKeys too long for a
// slot to hold their length, among others, and reads them back.
func TestRowTreeKeyLengths(t *testing.T) {
	var tr rowTree
	keys := []string{"", "a", strings.Repeat("b", longKey-1), strings.Repeat("b", longKey), strings.Repeat("c", longKey+70_000)}
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("m%04d", i))
	}
	for _, i := range rand.New(rand.NewPCG(1, 1)).Perm(len(keys)) {
		if _, found := tr.put(&record{rk: keys[i], ts: int64(i)}, true); found {
			t.Fatalf("%d: put found a record", i)
		}
	}
	got := tr.check(t)
	slices.SortFunc(keys, compareKeys)
	if !slices.Equal(got, keys) {
		t.Fatalf("tree holds %d keys, want %d", len(got), len(keys))
	}
	for _, k := range keys {
		if r, ok := tr.get(k); !ok || r.rk != k {
			t.Fatalf("get of a key of %d bytes: %v, %d bytes", len(k), ok, len(r.rk))
		}
	}
	for _, k := range keys[:5] {
		if r, ok := tr.remove(k); !ok || r.rk != k {
			t.Fatalf("remove of a key of %d bytes: %v", len(k), ok)
		}
	}
	tr.check(t)
}
