package keyspace

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var guidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestRandomKeysAreSpread(t *testing.T) {
	names := DefaultNames()
	const count = 1000
	keys := make([]string, count)
	firstDigits := map[byte]bool{}
	seen := map[string]bool{}
	for i := range int64(count) {
		k := names.Key(i, 0)
		if !guidRE.MatchString(k) {
			t.Fatalf("key of %d is %q, not GUID-shaped", i, k)
		}
		if k != names.Key(i, 0) {
			t.Fatalf("key of %d differs between calls", i)
		}
		if seen[k] {
			t.Fatalf("key %q repeated", k)
		}
		seen[k] = true
		keys[i] = k
		firstDigits[k[0]] = true
	}
	if len(firstDigits) != 16 {
		t.Errorf("keys of 0..%d start with %d of the 16 hex digits", count-1, len(firstDigits))
	}
	if slices.IsSorted(keys) {
		t.Error("random keys of consecutive items are in item order")
	}
	// Consecutive items are far apart: their keys' first 32 bits differ by
	// about a random amount, not by a small step.
	adjacent := 0
	for i := 1; i < count; i++ {
		var a, b uint64
		fmt.Sscanf(keys[i-1][:8], "%x", &a)
		fmt.Sscanf(keys[i][:8], "%x", &b)
		if max(a, b)-min(a, b) < 1<<24 { // within 1/256 of the key space
			adjacent++
		}
	}
	if adjacent > 20 { // about 2·count/256 expected
		t.Errorf("%d of %d consecutive items have keys within 1/256 of the key space", adjacent, count)
	}
	// The key is a bijection of i, so a billion items cannot collide; check
	// a large stretch and far items.
	hi := map[string]bool{}
	for i := int64(1 << 40); i < 1<<40+200_000; i++ {
		k := names.Key(i, 0)
		if hi[k] || seen[k] {
			t.Fatalf("key %q of %d repeated", k, i)
		}
		hi[k] = true
	}
	if p := (Names{Style: Random, Buckets: 1, BucketAt: BucketPrefix, Prefix: "t1_"}).Key(5, 0); p != "t1_"+names.Key(5, 0) {
		t.Errorf("prefixed key %q", p)
	}
}

func TestSequentialKeysSortInItemOrder(t *testing.T) {
	names := Names{Style: Sequential, Buckets: 1, BucketAt: BucketPrefix, Prefix: "p"}
	if k := names.Key(1, 0); k != "p0000000001" {
		t.Errorf("key of 1 is %q, want p0000000001", k)
	}
	if k := names.Key(9_999_999_999, 0); k != "p9999999999" {
		t.Errorf("key of 10^10-1 is %q", k)
	}
	items := []int64{0, 1, 2, 9, 10, 11, 99, 100, 12345, 999_999_999, 1_000_000_000, 9_999_999_999}
	var keys []string
	for _, i := range items {
		k := names.Key(i, 0)
		if len(k) != names.KeyLen() {
			t.Errorf("key %q is %d long, KeyLen says %d", k, len(k), names.KeyLen())
		}
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) {
		t.Errorf("sequential keys out of item order: %v", keys)
	}
}

// sortedItems returns the items and buckets of names' keys for items
// 0..items-1 in every bucket, in key order.
func sortedItems(names Names, items int) (item, bucket []int) {
	type kb struct {
		key  string
		i, b int
	}
	var all []kb
	for i := range items {
		for b := range names.Buckets {
			all = append(all, kb{names.Key(int64(i), b), i, b})
		}
	}
	sort.Slice(all, func(x, y int) bool { return all[x].key < all[y].key })
	for _, e := range all {
		item, bucket = append(item, e.i), append(bucket, e.b)
	}
	return item, bucket
}

func TestBuckets(t *testing.T) {
	for _, style := range []string{Random, Sequential} {
		for _, buckets := range []int{2, 10, 11, 101, MaxBuckets} {
			const items = 20
			name := fmt.Sprintf("%s/%d", style, buckets)
			pre := Names{Style: style, Buckets: buckets, BucketAt: BucketPrefix, Prefix: "p"}
			suf := Names{Style: style, Buckets: buckets, BucketAt: BucketSuffix, Prefix: "p"}
			b := 7 % buckets
			if k := pre.Key(3, b); !strings.HasPrefix(k, fmt.Sprintf("%0*d-p", bucketDigits(buckets), b)) || len(k) != pre.KeyLen() {
				t.Errorf("%s: prefix key %q", name, k)
			}
			if k := suf.Key(3, b); !strings.HasSuffix(k, fmt.Sprintf("-%0*d", bucketDigits(buckets), b)) || len(k) != suf.KeyLen() {
				t.Errorf("%s: suffix key %q", name, k)
			}
			if pre.Key(3, buckets+b) != pre.Key(3, b) || pre.Key(3, -1) != pre.Key(3, buckets-1) {
				t.Errorf("%s: a bucket outside [0, buckets) is not taken modulo buckets", name)
			}
			// Prefix: key order is bucket order, then item order within a
			// bucket, so an item's buckets are items keys apart.
			item, bucket := sortedItems(pre, items)
			for j := range item {
				if bucket[j] != j/items {
					t.Fatalf("%s: prefix key %d in key order is in bucket %d, want %d: buckets are not in numeric order", name, j, bucket[j], j/items)
				}
			}
			// Suffix: an item's buckets are adjacent, in numeric order.
			item, bucket = sortedItems(suf, items)
			for j := range item {
				if bucket[j] != j%buckets || item[j] != item[j-j%buckets] {
					t.Fatalf("%s: suffix key %d in key order is item %d bucket %d: an item's buckets are not adjacent", name, j, item[j], bucket[j])
				}
			}
		}
	}
	one := DefaultNames()
	if one.Key(5, 3) != one.Key(5, 0) || strings.Count(one.Key(5, 0), "-") != 4 {
		t.Errorf("one bucket: key %q has a bucket", one.Key(5, 3))
	}
}

func TestBucketChoice(t *testing.T) {
	names := Names{Style: Random, Buckets: 16, BucketAt: BucketPrefix}
	rng := newRNG(11)
	counts := make([]int, names.Buckets)
	for range 16000 {
		counts[names.Bucket(rng)]++
	}
	for b, c := range counts {
		if c < 800 || c > 1200 { // 1000 ± 6σ
			t.Errorf("bucket %d drawn %d times of 16000", b, c)
		}
	}
	rows := make([]int, names.Buckets)
	for i := range 16000 {
		row := fmt.Sprintf("job_0_1_%010d", i)
		b := names.BucketOf(row)
		if b != names.BucketOf(row) {
			t.Fatal("BucketOf differs between calls")
		}
		rows[b]++
	}
	for b, c := range rows {
		if c < 800 || c > 1200 {
			t.Errorf("bucket %d holds %d of 16000 rows", b, c)
		}
	}
	one, before, after := DefaultNames(), newRNG(12), newRNG(12)
	if one.Bucket(before) != 0 || one.BucketOf("x") != 0 || before.Uint64() != after.Uint64() {
		t.Error("one bucket: Bucket is not 0 or drew from rng")
	}
}

func TestNamesValidate(t *testing.T) {
	ok := DefaultNames()
	with := func(f func(*Names)) Names { n := ok; f(&n); return n }
	for _, tc := range []struct {
		n    Names
		want string
	}{
		{ok, ""},
		{with(func(n *Names) { n.Style, n.Prefix = Sequential, "p" }), ""},
		{with(func(n *Names) { n.Buckets, n.BucketAt = MaxBuckets, BucketSuffix }), ""},
		{with(func(n *Names) { n.Style = "guid" }), `names "guid" is unknown: use random or sequential`},
		{Names{}, `names "" is unknown`},
		{with(func(n *Names) { n.Buckets = 0 }), "buckets 0 is out of range: use 1 to 10000"},
		{with(func(n *Names) { n.Buckets = 10001 }), "buckets 10001 is out of range"},
		{with(func(n *Names) { n.BucketAt = "middle" }), `bucket_at "middle" is unknown: use prefix or suffix`},
		{with(func(n *Names) { n.Prefix = "a/b" }), `prefix "a/b" holds '/', which a table key cannot: remove it`},
		{with(func(n *Names) { n.Prefix = "a#" }), `prefix "a#" holds '#'`},
		{with(func(n *Names) { n.Prefix = "a\tb" }), `prefix "a\tb" holds '\t'`},
		{with(func(n *Names) { n.Prefix = strings.Repeat("x", MaxPrefix+1) }), "prefix is 257 bytes long: use at most 256"},
		{with(func(n *Names) { n.Prefix = "\xff" }), `prefix "\xff" is not valid UTF-8`},
	} {
		err := tc.n.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tc.n, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.n, err, tc.want)
		}
	}
}

// TestTimeKeySpellsTheAppendAndPrependKeys holds TimeKey to the append and
// prepend schemes' spelling, fmt's %019d of nanos and of MaxInt64 - nanos,
// byte for byte.
func TestTimeKeySpellsTheAppendAndPrependKeys(t *testing.T) {
	for _, nanos := range []int64{0, 1, 9, 10, 123456789, 1_764_151_200_123_456_789, math.MaxInt64, -1, -123, math.MinInt64 + 1} {
		if got, want := TimeKey(nanos, 0, false), fmt.Sprintf("%019d", nanos); got != want {
			t.Errorf("TimeKey(%d, ascending) = %q, want %q", nanos, got, want)
		}
		if got, want := TimeKey(nanos, 1, true), fmt.Sprintf("%019d", math.MaxInt64-nanos); got != want {
			t.Errorf("TimeKey(%d, descending) = %q, want %q", nanos, got, want)
		}
	}
	const t0 = 1_764_151_200_123_456_789
	if got, want := TimeKey(t0, time.Second, false), "1764151200000000000"; got != want {
		t.Errorf("TimeKey to the second = %q, want %q", got, want)
	}
	if got, want := TimeKey(-1, time.Second, false), fmt.Sprintf("%019d", -1_000_000_000); got != want {
		t.Errorf("TimeKey(-1ns) to the second = %q, want %q (floor)", got, want)
	}
	if a, b := TimeKey(t0, time.Minute, true), TimeKey(t0+time.Minute.Nanoseconds(), time.Minute, true); a <= b {
		t.Errorf("descending keys %q then %q: the later does not sort first", a, b)
	}
	if a, b := TimeKey(t0, 0, false), TimeKey(t0+1, 0, false); a >= b {
		t.Errorf("ascending keys %q then %q out of order", a, b)
	}
}

// TestSpread: a key that is not an item's is spread over buckets as an
// item's key is: the bucket first (prefix) or last (suffix), zero padded,
// and one bucket leaves the key as it is.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		n      Names
		bucket int
		want   string
	}{
		{Names{Buckets: 16, BucketAt: BucketPrefix}, 7, "07-00012"},
		{Names{Buckets: 16, BucketAt: BucketSuffix}, 7, "00012-07"},
		{Names{Buckets: 16}, 23, "07-00012"}, // modulo the buckets; prefix when unsaid
		{Names{Buckets: 1000, BucketAt: BucketPrefix}, 7, "007-00012"},
		{Names{Buckets: 1}, 5, "00012"},
	} {
		if got := c.n.Spread("00012", c.bucket); got != c.want {
			t.Errorf("%+v: Spread(00012, %d) = %q, want %q", c.n, c.bucket, got, c.want)
		}
	}
}
