package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
	"unicode/utf8"
)

// Random is the naming style of keys spread over the key space like GUIDs;
// Sequential, the distribution's name, is also the style of keys adjacent
// in key order.
const Random = "random"

// Where a bucket goes in a key.
const (
	BucketPrefix = "prefix"
	BucketSuffix = "suffix"
)

// MaxBuckets is the most buckets a key can be spread over: the bucket is
// spelled with at most four digits.
const MaxBuckets = 10_000

// MaxPrefix is the longest Prefix, in bytes, well inside a key's 1 KiB.
const MaxPrefix = 256

// sequentialDigits is how many digits a sequential key's index has: lexical
// order is numeric order for the first 10^10 items, more than a run writes.
const sequentialDigits = 10

// Names spells the keys of items: item i, and for a key spread over buckets
// (the synthetic-key fix for a hot key), item i's key in one bucket.
type Names struct {
	// Style is random (a GUID-shaped key hashed from i, so consecutive
	// items lie all over the key space, and item i always has the same
	// key) or sequential (Prefix and i in ten digits, so key order is item
	// order and consecutive items share a range partition).
	Style string
	// Buckets, 1 to MaxBuckets, is how many keys each item is spread over;
	// 1 spells keys with no bucket.
	Buckets int
	// BucketAt is prefix ("07-" + key: the buckets of one item lie far
	// apart in key order, in different range partitions once the service
	// splits) or suffix (key + "-07": they lie next to each other, in one
	// range partition until it splits between them).
	BucketAt string
	// Prefix starts every key after its bucket prefix, if any: a run's own
	// part of a table, or a readable "p" before sequential numbers.
	Prefix string
}

// DefaultNames returns random names with no buckets.
func DefaultNames() Names {
	return Names{Style: Random, Buckets: 1, BucketAt: BucketPrefix}
}

// Validate returns an error naming the first field that is wrong and the
// values it accepts, or nil.
func (n Names) Validate() error {
	if n.Style != Random && n.Style != Sequential {
		return fmt.Errorf("names %q is unknown: use random or sequential", n.Style)
	}
	if n.Buckets < 1 || n.Buckets > MaxBuckets {
		return fmt.Errorf("buckets %d is out of range: use 1 to %d (1 for no synthetic-key buckets)", n.Buckets, MaxBuckets)
	}
	if n.BucketAt != BucketPrefix && n.BucketAt != BucketSuffix {
		return fmt.Errorf("bucket_at %q is unknown: use prefix or suffix", n.BucketAt)
	}
	if len(n.Prefix) > MaxPrefix {
		return fmt.Errorf("prefix is %d bytes long: use at most %d", len(n.Prefix), MaxPrefix)
	}
	if !utf8.ValidString(n.Prefix) {
		return fmt.Errorf("prefix %q is not valid UTF-8: use text", n.Prefix)
	}
	for _, r := range n.Prefix {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return fmt.Errorf("prefix %q holds %q, which a table key cannot: remove it", n.Prefix, r)
		}
	}
	return nil
}

// Key returns the key of item i (i >= 0) in bucket (0 <= bucket < Buckets;
// others are taken modulo Buckets).
func (n Names) Key(i int64, bucket int) string {
	return string(n.AppendKey(make([]byte, 0, n.KeyLen()), i, bucket))
}

// AppendKey appends Key(i, bucket) to dst, for callers that reuse a buffer.
func (n Names) AppendKey(dst []byte, i int64, bucket int) []byte {
	bucketed := n.Buckets > 1
	if bucketed {
		bucket %= n.Buckets
		if bucket < 0 {
			bucket += n.Buckets
		}
	}
	if bucketed && n.BucketAt != BucketSuffix {
		dst = append(n.appendBucket(dst, bucket), '-')
	}
	dst = append(dst, n.Prefix...)
	if n.Style == Sequential {
		dst = appendPadded(dst, i, sequentialDigits)
	} else {
		dst = appendGUID(dst, i)
	}
	if bucketed && n.BucketAt == BucketSuffix {
		dst = n.appendBucket(append(dst, '-'), bucket)
	}
	return dst
}

// Spread returns key in bucket, the bucket placed as AppendKey places it:
// "07-" + key at BucketPrefix, key + "-07" at BucketSuffix. It spreads a key
// that is not an item's (a shared key, a time-ordered one) over Buckets
// partitions; with one bucket it is key.
func (n Names) Spread(key string, bucket int) string {
	if n.Buckets <= 1 {
		return key
	}
	bucket %= n.Buckets
	if bucket < 0 {
		bucket += n.Buckets
	}
	b := make([]byte, 0, len(key)+bucketDigits(n.Buckets)+1)
	if n.BucketAt == BucketSuffix {
		return string(n.appendBucket(append(append(b, key...), '-'), bucket))
	}
	return string(append(append(n.appendBucket(b, bucket), '-'), key...))
}

// KeyLen returns the length in bytes of every key of items below 10^10,
// which an entity's size depends on.
func (n Names) KeyLen() int {
	l := len(n.Prefix) + 36
	if n.Style == Sequential {
		l = len(n.Prefix) + sequentialDigits
	}
	if n.Buckets > 1 {
		l += bucketDigits(n.Buckets) + 1
	}
	return l
}

// Bucket draws the bucket of a write uniformly, for a workload that does
// not read its writes back; with one bucket it draws nothing from rng.
func (n Names) Bucket(rng *rand.Rand) int {
	if n.Buckets <= 1 {
		return 0
	}
	return rng.IntN(n.Buckets)
}

// BucketOf returns the bucket of the entity whose RowKey is row: a hash
// (FNV-1a) of it, as a synthetic key is made, so that a reader that knows
// the row finds it in the same bucket its writer put it in.
func (n Names) BucketOf(row string) int {
	if n.Buckets <= 1 {
		return 0
	}
	h := uint64(14695981039346656037)
	for i := range len(row) {
		h ^= uint64(row[i])
		h *= 1099511628211
	}
	return int(h % uint64(n.Buckets))
}

// bucketDigits is the width of a bucket number: every bucket has as many
// digits as the largest, at least two, so lexical order is numeric order.
func bucketDigits(buckets int) int {
	return max(2, len(strconv.Itoa(buckets-1)))
}

func (n Names) appendBucket(dst []byte, bucket int) []byte {
	return appendPadded(dst, int64(bucket), bucketDigits(n.Buckets))
}

// appendPadded appends v, zero padded to width digits; v < 0 is appended
// as it is.
func appendPadded(dst []byte, v int64, width int) []byte {
	if v < 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	start := len(dst)
	dst = strconv.AppendInt(dst, v, 10)
	if pad := width - (len(dst) - start); pad > 0 {
		dst = append(dst, "0000000000000000000"[:pad]...)
		copy(dst[start+pad:], dst[start:len(dst)-pad])
		copy(dst[start:start+pad], "0000000000000000000")
	}
	return dst
}

// appendGUID appends a GUID-shaped key (version 4, variant 1) hashed from
// i. Its first 48 bits and bits 80-95 hold h = mix64(i + γ), a bijection
// of i, so distinct items have distinct keys; key order is h's order,
// which scatters consecutive items over the key space.
func appendGUID(dst []byte, i int64) []byte {
	h := mix64(uint64(i) + 0x9e3779b97f4a7c15)
	g := mix64(h ^ 0x5851f42d4c957f2d)
	var u [16]byte
	for j := range 6 {
		u[j] = byte(h >> (56 - 8*j))
	}
	u[6], u[7] = byte(g>>56)&0x0f|0x40, byte(g>>48)
	u[8], u[9] = byte(g>>40)&0x3f|0x80, byte(g>>32)
	u[10], u[11] = byte(h>>8), byte(h)
	for j := range 4 {
		u[12+j] = byte(g >> (24 - 8*j))
	}
	const hex = "0123456789abcdef"
	for j, b := range u {
		if j == 4 || j == 6 || j == 8 || j == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[b>>4], hex[b&0x0f])
	}
	return dst
}

// TimeKey returns the time-ordered key of a write at nanos (ns since the
// epoch, or model time), truncated to granularity (0 or 1 ns for none):
// nanos in 19 digits, so key order is time order and every write appends at
// the end of the key range (the append scheme), or descending,
// math.MaxInt64 - nanos, so every write goes to its start and the newest
// key sorts first (the prepend scheme, a log table's usual key). Writers
// at the same instant share a key: append a writer's own suffix to tell
// them apart. The spelling is fmt's %019d.
func TimeKey(nanos int64, granularity time.Duration, descending bool) string {
	if g := int64(granularity); g > 1 {
		r := nanos % g
		if r < 0 {
			r += g
		}
		nanos -= r
	}
	if descending {
		nanos = math.MaxInt64 - nanos
	}
	if nanos < 0 {
		return fmt.Sprintf("%019d", nanos)
	}
	return string(appendPadded(make([]byte, 0, 19), nanos, 19))
}
