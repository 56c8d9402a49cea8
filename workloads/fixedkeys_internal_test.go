package workloads

import (
	"testing"
	"unsafe"

	"github.com/tablebench/tablebench/workloads/keyspace"
)

// TestFixedKeysSpelled checks that the keys a fixed key space keeps spelled
// are the keys its names spell, across chunks and in a last, short one.
func TestFixedKeysSpelled(t *testing.T) {
	for _, names := range []keyspace.Names{
		{Style: keyspace.Random, Buckets: 1, BucketAt: keyspace.BucketPrefix},
		{Style: keyspace.Sequential, Buckets: 1, BucketAt: keyspace.BucketPrefix, Prefix: "p"},
		{Style: keyspace.Random, Buckets: 3, BucketAt: keyspace.BucketSuffix},
	} {
		s := DefaultSpec()
		s.Partition = PartitionFixed
		s.Keys = KeySpace{Count: 2*keyChunk + 5, Names: NameStyle(names.Style), Buckets: names.Buckets, BucketAt: BucketPlace(names.BucketAt)}
		f := newFixedKeys(&s)
		f.names.Prefix, f.keyLen = names.Prefix, names.KeyLen()
		for _, item := range []int64{0, 1, keyChunk - 1, keyChunk, 2*keyChunk + 4, 7} {
			for b := range names.Buckets {
				if got, want := f.key(item, b), names.Key(item, b); got != want {
					t.Errorf("%+v: key(%d, %d) = %q, want %q", names, item, b, got, want)
				}
			}
		}
		if names.Buckets == 1 {
			if a, b := f.key(9, 0), f.key(9, 0); unsafe.StringData(a) != unsafe.StringData(b) {
				t.Errorf("key(9) is spelled anew each time: %q", a)
			}
		}
	}
}
