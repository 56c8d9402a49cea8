package keyspace

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// zipfChooser draws zipfian ranks by rejection-inversion (Hörmann and
// Derflinger 1996, as Apache Commons RNG's RejectionInversionZipfSampler
// does, with the integral of the hat function shifted so that it holds for
// every θ > 0, θ < 1 and θ = 1 included). It draws k in 1..n with
// P(k) ∝ k^-θ and returns rank k-1. A draw is exact and costs a
// logarithm and an exponential or, for the most popular ranks, a look-up
// in a small table of θ; a proposal is accepted 98% of the time or more
// (θ from 0.01 to 10, n from 2 to 10^9). Nothing in it grows with n.
type zipfChooser struct {
	theta            float64
	scramble, latest bool
	hX1, s           float64 // constants of θ
	head             *[headRanks]zipfCell
	guide            *[headGuide]uint8 // guide[g]: the first cell reaching hX1 + g/guideScale
	guideScale       float64
	n                int64 // the n hN and perm are for
	hN               float64
	perm             feistel
}

func newZipf(theta float64) *zipfChooser {
	z := &zipfChooser{theta: theta}
	z.hX1 = z.hIntegral(1.5) - 1
	z.s = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	z.head = new([headRanks]zipfCell)
	for j := range z.head {
		k := float64(j + 1)
		end := z.hIntegral(k + 0.5)
		z.head[j] = zipfCell{end, end - z.h(k)}
	}
	z.guide = new([headGuide]uint8)
	z.guideScale = headGuide / (z.head[headRanks-1].end - z.hX1)
	j := 0
	for g := range z.guide {
		for j < headRanks-1 && z.head[j].end < z.hX1+float64(g)/z.guideScale {
			j++
		}
		z.guide[g] = uint8(j)
	}
	return z
}

// headRanks is how many of the most popular ranks a zipfChooser finds by a
// table of their cells rather than by hIntegralInverse: with θ near 1 a
// third of the draws or more land there, and a table look-up costs no
// logarithm. The table depends on θ only, so a growing n leaves it be.
const headRanks = 64

// headGuide is how many entries the guide table into the head's cells has,
// so that finding u's cell takes a step or two.
const headGuide = 256

// zipfCell is rank k's cell of u, (the previous cell's end, end], and the
// least u accepted in it, hIntegral(k+0.5) - h(k): the same test as the
// general path's, made of constants.
type zipfCell struct{ end, accept float64 }

func (z *zipfChooser) Pick(rng *rand.Rand, n int64) int64 {
	if n < 1 {
		return -1
	}
	if n != z.n { // inserts grow n: recompute only what depends on it
		z.n, z.hN = n, z.hIntegral(float64(n)+0.5)
		if z.scramble {
			z.perm = newFeistel(n)
		}
	}
	r := z.rank(rng)
	switch {
	case z.latest:
		return n - 1 - r
	case z.scramble:
		return z.perm.walk(r)
	}
	return r
}

// rank draws one rank among z.n.
func (z *zipfChooser) rank(rng *rand.Rand) int64 {
	for {
		// u is uniform in (hX1, hN]; the hat's inverse maps it onto k's cell.
		u := z.hN + rng.Float64()*(z.hX1-z.hN)
		if u <= z.head[headRanks-1].end {
			j := int(z.guide[min(int((u-z.hX1)*z.guideScale), headGuide-1)])
			for u > z.head[j].end { // a step or two
				j++
			}
			if u >= z.head[j].accept {
				return int64(j)
			}
			continue
		}
		x := z.hIntegralInverse(u)
		k := int64(x + 0.5)
		k = min(max(k, 1), z.n) // rounding can step outside
		// k - x <= s is a shortcut implying the second test (the paper's
		// Theorem 2, which holds for every θ > 0); k = 1 always passes.
		if float64(k)-x <= z.s || u >= z.hIntegral(float64(k)+0.5)-z.h(float64(k)) {
			return k - 1
		}
	}
}

// h is the hat function, x^-θ.
func (z *zipfChooser) h(x float64) float64 { return math.Exp(-z.theta * math.Log(x)) }

// hIntegral is H(x) = (x^(1-θ) - 1)/(1-θ), log x at θ = 1, an integral of h
// that is continuous in θ.
func (z *zipfChooser) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.theta)*logX) * logX
}

// hIntegralInverse is the inverse of hIntegral.
func (z *zipfChooser) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.theta), -1) // -1 is the limit; rounding can pass it
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, accurate near 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (e^x - 1)/x, accurate near 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// directTerms is how many leading terms zipfSum adds one by one; past them
// the Euler-Maclaurin remainder is below 1e-40 of the sum for any valid θ.
const directTerms = 1000

// zipfSum returns Σ_{k=a..b} k^-θ, exactly summed up to directTerms and by
// Euler-Maclaurin beyond, so that it costs O(1) for any b.
func zipfSum(a, b int64, theta float64) float64 {
	if a < 1 {
		a = 1
	}
	if a > b {
		return 0
	}
	var s float64
	for k := min(b, directTerms); k >= a; k-- { // smallest terms first
		s += math.Pow(float64(k), -theta)
	}
	if b > directTerms {
		s += eulerMaclaurin(float64(max(a, directTerms+1)), float64(b), theta)
	}
	return s
}

// eulerMaclaurin returns Σ_{k=a..b} k^-θ for a large enough that the
// derivatives of x^-θ past the fifth no longer matter:
// ∫_a^b f + (f(a)+f(b))/2 + Σ_{j=1..3} B_2j/(2j)! (f^(2j-1)(b) - f^(2j-1)(a)).
func eulerMaclaurin(a, b, theta float64) float64 {
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	l := math.Log(b / a)
	integral := math.Pow(a, 1-theta) * l * expm1Over((1-theta)*l)
	// f'(x) = -θ x^(-θ-1), f'''(x) = -θ(θ+1)(θ+2) x^(-θ-3), f^(5) likewise.
	d1 := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	d3 := func(x float64) float64 { return -theta * (theta + 1) * (theta + 2) * math.Pow(x, -theta-3) }
	d5 := func(x float64) float64 {
		return -theta * (theta + 1) * (theta + 2) * (theta + 3) * (theta + 4) * math.Pow(x, -theta-5)
	}
	return integral + (f(a)+f(b))/2 +
		(d1(b)-d1(a))/12 - (d3(b)-d3(a))/720 + (d5(b)-d5(a))/30240
}

// Scramble returns the item that zipfian rank r stands for among n items
// when Distribution.Scramble is set: a fixed pseudo-random permutation of
// 0..n-1, the same on every thread and machine, so that the popular ranks
// are items scattered over the key range. It returns -1 for r outside
// [0, n). The permutation is a Feistel network over the smallest power of
// two that holds n, cycle-walked into [0, n): as n grows below that power
// of two, few ranks change items.
func Scramble(r, n int64) int64 {
	if r < 0 || r >= n {
		return -1
	}
	return newFeistel(n).walk(r)
}

// feistel is a keyed permutation of the integers below 2^(a+b), the high a
// bits and the low b bits swapping roles each round.
type feistel struct {
	n    uint64
	a, b uint
}

// feistelKeys are the rounds' keys: fixed, so every process agrees on the
// permutation.
var feistelKeys = [...]uint64{0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89}

func newFeistel(n int64) feistel {
	k := uint(bits.Len64(uint64(n - 1)))
	return feistel{n: uint64(n), a: k - k/2, b: k / 2}
}

// walk maps r < n to its item: the permutation applied until the result
// falls below n, which takes fewer than two steps on average since n is
// more than half the domain. Restricted this way it is still a permutation
// of 0..n-1.
func (f feistel) walk(r int64) int64 {
	x := uint64(r)
	for {
		x = f.permute(x)
		if x < f.n {
			return int64(x)
		}
	}
}

func (f feistel) permute(x uint64) uint64 {
	wl, wr := f.a, f.b
	l, r := x>>wr, x&(1<<wr-1)
	for _, key := range feistelKeys {
		l, r = r, l^(mix64(r^key)&(1<<wl-1))
		wl, wr = wr, wl
	}
	return l<<wr | r
}

// mix64 is splitmix64's finalizer: a bijection of uint64 whose output bits
// each depend on every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
