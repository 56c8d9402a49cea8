package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The distributions' names, as a workload file spells them.
const (
	Uniform    = "uniform"
	Zipfian    = "zipfian"
	Hotspot    = "hotspot"
	Latest     = "latest"
	Sequential = "sequential"
)

// Distributions returns the distributions' names in the order the docs
// list them.
func Distributions() []string {
	return []string{Uniform, Zipfian, Hotspot, Latest, Sequential}
}

// MaxTheta is the largest zipfian skew accepted. Sampling is exact for any
// θ > 0; past 10 the top item already takes more than 99.9% of the
// operations, so a larger θ only hides a typo.
const MaxTheta = 10

// Distribution is a request distribution: which of n items an operation
// picks. Only the fields of the named distribution are read; the others
// are ignored, so that a sweep over distributions can keep them set.
type Distribution struct {
	// Name is one of uniform, zipfian, hotspot, latest and sequential.
	Name string
	// Theta is the zipfian and latest skew θ, 0 < θ <= MaxTheta: the item
	// of rank r is picked in proportion to (r+1)^-θ.
	Theta float64
	// HotData is the hotspot's share of the items that are hot, 0 < HotData < 1.
	HotData float64
	// HotOps is the hotspot's share of the operations that go to hot items,
	// 0 < HotOps < 1.
	HotOps float64
	// Scramble maps zipfian ranks onto items by a fixed permutation
	// (Scramble), so the popular items lie scattered over the key range;
	// without it rank r is item r and the hot items are the first keys.
	// DefaultDistribution sets it for zipfian; latest ignores it, since
	// its ranks are recency.
	Scramble bool
}

// DefaultDistribution returns the named distribution with YCSB's defaults:
// θ = 0.99 for zipfian (scrambled) and latest, 20% of the items taking 80%
// of the operations for hotspot.
func DefaultDistribution(name string) Distribution {
	d := Distribution{Name: name}
	switch name {
	case Zipfian:
		d.Theta, d.Scramble = 0.99, true
	case Latest:
		d.Theta = 0.99
	case Hotspot:
		d.HotData, d.HotOps = 0.2, 0.8
	}
	return d
}

// Validate returns an error naming the first field that is wrong and the
// values it accepts, or nil.
func (d Distribution) Validate() error {
	switch d.Name {
	case Uniform, Sequential:
	case Zipfian, Latest:
		if !(d.Theta > 0 && d.Theta <= MaxTheta) { // also refuses NaN
			return fmt.Errorf("theta %v is out of range: use 0 < theta <= %d (0.99 is YCSB's default)", d.Theta, MaxTheta)
		}
	case Hotspot:
		if !(d.HotData > 0 && d.HotData < 1) {
			return fmt.Errorf("hot_data %v is out of range: use 0 < hot_data < 1, the share of the items that are hot", d.HotData)
		}
		if !(d.HotOps > 0 && d.HotOps < 1) {
			return fmt.Errorf("hot_ops %v is out of range: use 0 < hot_ops < 1, the share of the operations that go to hot items", d.HotOps)
		}
	default:
		return fmt.Errorf("distribution %q is unknown: use uniform, zipfian, hotspot, latest or sequential", d.Name)
	}
	return nil
}

// A Chooser picks the index in [0, n) of the item one operation touches.
// n may grow between calls as a run inserts items; for latest, index n-1 is
// the newest item. Pick returns -1 when n < 1: there is no item to pick.
// A Chooser keeps state (cached constants, a position) and is not safe for
// concurrent use: make one per thread.
type Chooser interface {
	Pick(rng *rand.Rand, n int64) int64
}

// Chooser returns a new Chooser that draws from d, or d's Validate error.
func (d Distribution) Chooser() (Chooser, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	switch d.Name {
	case Uniform:
		return uniform{}, nil
	case Zipfian:
		z := newZipf(d.Theta)
		z.scramble = d.Scramble
		return z, nil
	case Latest:
		z := newZipf(d.Theta)
		z.latest = true
		return z, nil
	case Hotspot:
		return &hotspotChooser{hotData: d.HotData, hotOps: d.HotOps}, nil
	default:
		return &sequentialChooser{}, nil
	}
}

// Prob returns the probability that an operation picks index i among n
// items: the exact law the Chooser follows (for sequential, the share of
// a full walk). For zipfian, i is a rank: with Scramble the item picked is
// Scramble(i, n). Prob returns 0 for an index outside [0, n) and for an
// invalid d.
func (d Distribution) Prob(i, n int64) float64 {
	if i < 0 || i >= n {
		return 0
	}
	return d.ProbRange(i, i+1, n)
}

// ProbRange returns the probability that an operation picks an index in
// [lo, hi) among n items (ranks for zipfian, as Prob). It costs O(1) for
// any n, so tests and docs can bin the tail of a law over a billion items.
func (d Distribution) ProbRange(lo, hi, n int64) float64 {
	lo, hi = max(lo, 0), min(hi, n)
	if lo >= hi || d.Validate() != nil {
		return 0
	}
	switch d.Name {
	case Zipfian:
		return zipfSum(lo+1, hi, d.Theta) / zipfSum(1, n, d.Theta)
	case Latest: // index i is rank n-1-i
		return zipfSum(n-hi+1, n-lo, d.Theta) / zipfSum(1, n, d.Theta)
	case Hotspot:
		h := hotItems(d.HotData, n)
		if h == n {
			return float64(hi-lo) / float64(n)
		}
		hot := max(0, min(hi, h)-lo)
		cold := max(0, hi-max(lo, h))
		return d.HotOps*float64(hot)/float64(h) + (1-d.HotOps)*float64(cold)/float64(n-h)
	default:
		return float64(hi-lo) / float64(n)
	}
}

// Harmonic returns the generalised harmonic number H(n,θ) = Σ_{k=1..n} k^-θ,
// the zipfian law's normalisation: the top item's share is 1/H(n,θ). It
// sums the first thousand terms and the rest by Euler-Maclaurin, within
// 1e-12 relative of the term-by-term sum, in O(1) time for any n.
func Harmonic(n int64, theta float64) float64 {
	if n < 1 {
		return 0
	}
	return zipfSum(1, n, theta)
}

// hotItems returns how many of n items are hot, ceil(hotData·n) within 1
// and n. A product a rounding error above a whole number counts as that
// number, so that 0.2 of 5,000 items is 1,000, not 1,001.
func hotItems(hotData float64, n int64) int64 {
	x := hotData * float64(n)
	h := math.Ceil(x)
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*x {
		h = r
	}
	return min(max(int64(h), 1), n)
}

type uniform struct{}

func (uniform) Pick(rng *rand.Rand, n int64) int64 {
	if n < 1 {
		return -1
	}
	return rng.Int64N(n)
}

type hotspotChooser struct {
	hotData, hotOps float64
	n, h            int64 // the hot items among n
}

func (c *hotspotChooser) Pick(rng *rand.Rand, n int64) int64 {
	if n < 1 {
		return -1
	}
	if n != c.n {
		c.n, c.h = n, hotItems(c.hotData, n)
	}
	if c.h == n { // no cold items
		return rng.Int64N(n)
	}
	if rng.Float64() < c.hotOps {
		return rng.Int64N(c.h)
	}
	return c.h + rng.Int64N(n-c.h)
}

type sequentialChooser struct{ next int64 }

func (c *sequentialChooser) Pick(_ *rand.Rand, n int64) int64 {
	if n < 1 {
		return -1
	}
	if c.next >= n {
		c.next = 0
	}
	i := c.next
	c.next++
	return i
}
