package keyspace

import (
	"fmt"
	"testing"
)

// BenchmarkPick times one draw of each distribution, over a million and
// over a billion items.
func BenchmarkPick(b *testing.B) {
	dists := []Distribution{
		DefaultDistribution(Uniform),
		{Name: Zipfian, Theta: 0.99},
		DefaultDistribution(Zipfian), // scrambled
		{Name: Zipfian, Theta: 0.5},
		{Name: Zipfian, Theta: 1.2},
		DefaultDistribution(Hotspot),
		DefaultDistribution(Latest),
		DefaultDistribution(Sequential),
	}
	for _, d := range dists {
		for _, n := range []int64{1_000_000, 1_000_000_000} {
			name := d.Name
			if d.Name == Zipfian {
				name = fmt.Sprintf("%s-%v", d.Name, d.Theta)
				if d.Scramble {
					name += "-scrambled"
				}
			}
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				c, err := d.Chooser()
				if err != nil {
					b.Fatal(err)
				}
				rng := newRNG(1)
				var sink int64
				for b.Loop() {
					sink += c.Pick(rng, n)
				}
				_ = sink
			})
		}
	}
	// Inserts grow n on every draw: the constants that depend on n are
	// recomputed each time.
	b.Run("latest-growing", func(b *testing.B) {
		c, _ := DefaultDistribution(Latest).Chooser()
		rng := newRNG(1)
		n := int64(1_000_000)
		for b.Loop() {
			c.Pick(rng, n)
			n++
		}
	})
}

// BenchmarkKey times spelling a key into a reused buffer.
func BenchmarkKey(b *testing.B) {
	for _, names := range []Names{
		DefaultNames(),
		{Style: Sequential, Buckets: 1, BucketAt: BucketPrefix, Prefix: "p"},
		{Style: Random, Buckets: 100, BucketAt: BucketSuffix},
	} {
		b.Run(fmt.Sprintf("%s/%d-%s", names.Style, names.Buckets, names.BucketAt), func(b *testing.B) {
			buf := make([]byte, 0, 64)
			i := int64(0)
			for b.Loop() {
				buf = names.AppendKey(buf[:0], i, int(i))
				i++
			}
		})
	}
}
