package workloads

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// TestRowKeys checks the RowKeys a thread writes: zero padded to ten
// digits so that their order is the order written, the same one by one and
// in batches, and still distinct past ten digits.
func TestRowKeys(t *testing.T) {
	one := &keys{prefix: "tb_1_2_"}
	many := &keys{prefix: "tb_1_2_"}
	var got []string
	for len(got) < 1000 {
		got = many.rowKeys(got, 7)
	}
	for i, rk := range got {
		want := fmt.Sprintf("tb_1_2_%010d", i)
		if rk != want || one.rowKey() != want {
			t.Fatalf("key %d: %q, want %q", i, rk, want)
		}
	}
	if !slices.IsSorted(got) {
		t.Fatal("keys out of order")
	}
	far := &keys{prefix: "p_", index: 9_999_999_999}
	if a, b := far.rowKey(), far.rowKey(); a != "p_9999999999" || b != "p_10000000000" {
		t.Fatalf("past ten digits: %q, %q", a, b)
	}
}

// TestRowKeysInTurn: keys taken one by one, spelled ahead, and in batches,
// in any order, are the thread's keys in order, up to ten digits and past
// them, for prefixes short and long.
func TestRowKeysInTurn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, prefix := range []string{"", "p_", "tb_1_2_", strings.Repeat("x", 600)} {
		for _, start := range []int{0, 95, 9_999_999_000, 9_999_999_990} {
			k := &keys{prefix: prefix, index: start}
			var got []string
			for len(got) < 2000 {
				if r.IntN(10) == 0 {
					got = k.rowKeys(got, 1+r.IntN(40))
				} else {
					got = append(got, k.rowKey())
				}
			}
			for i, rk := range got {
				if want := fmt.Sprintf("%s%010d", prefix, start+i); rk != want {
					t.Fatalf("prefix %.10q from %d: key %d is %q, want %q", prefix, start, i, rk, want)
				}
			}
			if k.index != start+len(got) {
				t.Fatalf("prefix %.10q from %d: index %d after %d keys", prefix, start, k.index, len(got))
			}
		}
	}
}

// TestPayloadSizes: entities with a thread's payloads weigh the size asked
// for by the service's formula (a byte less where it is odd), with no string
// longer than a property may hold, and the engine stores them.
func TestPayloadSizes(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None() // no latency model: a wall-clock test
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTable(t.Context(), "sizes"); err != nil {
		t.Fatal(err)
	}
	pk := uuid.NewString()
	const rk = "tb_1_7_0000000001"
	for _, size := range []int{minEntitySize, 1023, 1024, 65_536, 65_600, 65_700, 131_200, 200_001, 1 << 20} {
		p := newPayloads(rand.New(rand.NewPCG(1, 2)), size, 0, len(pk), len(rk))
		for range 3 {
			ent := tables.Entity{PartitionKey: pk, RowKey: rk, Properties: p.nextProps()}
			if got := ent.Size(); got != size && got != size-1 {
				t.Errorf("size %d: the entity weighs %d bytes", size, got)
			}
			for _, prop := range ent.Properties {
				if n := len(prop.Value.(string)); n > tables.MaxStringUnits {
					t.Errorf("size %d: %s holds %d characters", size, prop.Name, n)
				}
			}
			if _, err := e.Client(nil).Upsert(t.Context(), "sizes", ent, tables.Replace); err != nil {
				t.Errorf("size %d: %v", size, err)
			}
		}
	}
}

// TestPayloadsShared: threads whose keys are as long share one run's
// payloads rather than holding copies of their own, and each thread's
// random source is left where making its own would have left it, so that
// what it draws next (its session's seed) is the same.
func TestPayloadsShared(t *testing.T) {
	spec := DefaultSpec()
	spec.VMs, spec.Threads = 2, 3
	r, err := NewCoordinator(spec, wallTarget{})
	if err != nil {
		t.Fatal(err)
	}
	workers, _ := r.buildWorkers("t")
	first := unsafe.StringData(workers[0].pay.props[0][0].Value.(string))
	for _, w := range workers[1:] {
		if got := unsafe.StringData(w.pay.props[0][0].Value.(string)); got != first {
			t.Errorf("thread %d of VM %d holds payloads of its own", w.id, w.vmID)
		}
	}
	sharedPK := guidFrom(rand.New(rand.NewPCG(spec.Seed, 0)))
	for _, w := range workers {
		own := rand.New(rand.NewPCG(spec.Seed, uint64(w.vmID)<<32|uint64(w.id)))
		k := newKeys(&spec, sharedPK, w.vmID, w.id, own)
		newPayloads(own, spec.EntitySize, 0, len(k.pk), len(k.prefix)+10)
		if got, want := w.rand.Uint64(), own.Uint64(); got != want {
			t.Errorf("thread %d of VM %d draws %d next, want %d as with payloads of its own", w.id, w.vmID, got, want)
		}
	}
}

// TestSkip: skipping n draws of a random source leaves it where n draws
// would.
func TestSkip(t *testing.T) {
	for _, n := range []uint64{0, 1, 2, 3, 64, 1000, 3617, 28_936} {
		drawn, skipped := rand.NewPCG(7, uint64(n)), rand.NewPCG(7, uint64(n))
		for range n {
			drawn.Uint64()
		}
		skip(skipped, n)
		if a, b := drawn.Uint64(), skipped.Uint64(); a != b {
			t.Errorf("after %d draws: %d next, after skipping them: %d", n, a, b)
		}
	}
}

// TestSpreadKeys: with buckets, a time-ordered or shared key is spread over
// them in turn, the bucket where bucket_at says; with one bucket the keys
// are the case study's, unchanged.
func TestSpreadKeys(t *testing.T) {
	for _, c := range []struct {
		scheme PartitionScheme
		at     BucketPlace
		want   *regexp.Regexp
	}{
		{PartitionAppend, BucketPrefix, regexp.MustCompile(`^(0[0-3])-0*[0-9]+-1-2$`)},
		{PartitionAppend, BucketSuffix, regexp.MustCompile(`^0*[0-9]+-1-2-(0[0-3])$`)},
		{PartitionShared, BucketPrefix, regexp.MustCompile(`^(0[0-3])-shared$`)},
	} {
		spec := DefaultSpec()
		spec.Partition, spec.Keys.Buckets, spec.Keys.BucketAt = c.scheme, 4, c.at
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		k := newKeys(&spec, "shared", 1, 2, rand.New(rand.NewPCG(1, 2)))
		seen := map[string]bool{}
		for i := range 8 {
			pk := k.partitionKey(int64(1000 + i))
			m := c.want.FindStringSubmatch(pk)
			if m == nil {
				t.Fatalf("%s at %s: key %q", c.scheme, c.at, pk)
			}
			seen[m[1]] = true
		}
		if len(seen) != 4 {
			t.Errorf("%s at %s: 8 keys in buckets %v, want all 4 in turn", c.scheme, c.at, seen)
		}
	}
	spec := DefaultSpec()
	spec.Partition = PartitionAppend
	k := newKeys(&spec, "shared", 1, 2, rand.New(rand.NewPCG(1, 2)))
	if pk := k.partitionKey(1000); pk != "0000000000000001000-1-2" {
		t.Errorf("one bucket: key %q, want the case study's", pk)
	}
}

// TestPartitionKeyNow: the PartitionKey a request takes without a call,
// its thread's own or the shared one in one bucket, is the one the
// scheme's every key follows, for every scheme, in one bucket or several.
func TestPartitionKeyNow(t *testing.T) {
	c := clock.NewVirtual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, scheme := range []PartitionScheme{PartitionGUID, PartitionShared, PartitionAppend, PartitionPrepend} {
		for _, buckets := range []int{1, 4} {
			spec := DefaultSpec()
			spec.Partition, spec.Keys.Buckets = scheme, buckets
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			k := newKeys(&spec, "shared", 1, 2, rand.New(rand.NewPCG(1, 2)))
			slow := newKeys(&spec, "shared", 1, 2, rand.New(rand.NewPCG(1, 2)))
			if k.fixedPK != ((scheme == PartitionGUID || scheme == PartitionShared) && buckets == 1) {
				t.Errorf("%s in %d buckets: fixed %v", scheme, buckets, k.fixedPK)
			}
			for range 6 {
				if got, want := k.partitionKeyNow(c), slow.partitionKeyAt(c); got != want {
					t.Fatalf("%s in %d buckets: %q, want %q", scheme, buckets, got, want)
				}
			}
		}
	}
}
