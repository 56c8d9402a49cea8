package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// draws is how many picks each statistical test makes: enough that a law
// off by 0.01 in θ fails by a wide margin, as TestChiSquareHasPower shows.
const draws = 1_000_000

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7ab1eb0c)) }

// binEdges returns bin edges over [0, n): one bin per index up to 64, then
// bins growing by 5%, so the tail of a law over a billion items still gets
// a few hundred bins.
func binEdges(n int64) []int64 {
	edges := []int64{0}
	for e := int64(1); e < n; {
		edges = append(edges, e)
		if e < 64 {
			e++
		} else {
			e = max(e+1, int64(float64(e)*1.05))
		}
	}
	return append(edges, n)
}

// chiSquare draws from c and returns Pearson's statistic against d's law
// over the bins, merged until each expects at least 20 draws, and its
// degrees of freedom. toIndex maps a pick to the index d's law speaks of
// (identity, or an inverse permutation).
func chiSquare(t *testing.T, d Distribution, c Chooser, n int64, edges []int64, seed uint64) (float64, int) {
	t.Helper()
	rng := newRNG(seed)
	counts := make([]float64, len(edges)-1)
	for range draws {
		i := c.Pick(rng, n)
		if i < 0 || i >= n {
			t.Fatalf("Pick(%d) = %d, outside [0, %d)", n, i, n)
		}
		j := sort.Search(len(edges), func(j int) bool { return edges[j] > i }) - 1
		counts[j]++
	}
	var obs, exp []float64
	var o, p, total float64
	for j := range counts {
		pj := d.ProbRange(edges[j], edges[j+1], n)
		total += pj
		o, p = o+counts[j], p+pj
		if p*draws >= 20 {
			obs, exp = append(obs, o), append(exp, p*draws)
			o, p = 0, 0
		}
	}
	if len(exp) == 0 {
		t.Fatalf("no bin expects 20 draws")
	}
	obs[len(obs)-1] += o
	exp[len(exp)-1] += p * draws
	if math.Abs(total-1) > 1e-9 {
		t.Fatalf("%+v over %d: ProbRange over all bins sums to %v, not 1", d, n, total)
	}
	var stat float64
	for j := range obs {
		stat += (obs[j] - exp[j]) * (obs[j] - exp[j]) / exp[j]
	}
	return stat, len(obs) - 1
}

// critical returns the chi-square quantile for df degrees of freedom at a
// one in a million false alarm rate (Wilson-Hilferty): with a fixed seed the
// tests are deterministic, and a wrong law exceeds it many times over.
func critical(df int) float64 {
	const z = 4.75
	k := float64(df)
	v := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * v * v * v
}

func TestZipfianFollowsZipfLaw(t *testing.T) {
	for _, theta := range []float64{0.1, 0.5, 0.99, 1, 1.2, 3} {
		for _, n := range []int64{10, 1000, 1_000_000, 1_000_000_000} {
			t.Run(fmt.Sprintf("theta=%v/n=%d", theta, n), func(t *testing.T) {
				d := Distribution{Name: Zipfian, Theta: theta}
				c, err := d.Chooser()
				if err != nil {
					t.Fatal(err)
				}
				stat, df := chiSquare(t, d, c, n, binEdges(n), uint64(n)+uint64(theta*100))
				if stat > critical(df) {
					t.Errorf("chi-square %.1f over %d degrees of freedom, above %.1f: the draws do not follow (i+1)^-θ/H(n,θ)", stat, df, critical(df))
				}
			})
		}
	}
}

// TestChiSquareHasPower shows that the goodness-of-fit test above would
// catch a sampler whose θ is off by 0.01, or YCSB's approximation.
func TestChiSquareHasPower(t *testing.T) {
	const n = 1000
	want := Distribution{Name: Zipfian, Theta: 0.99}
	for name, c := range map[string]Chooser{
		"theta 1.0":    newZipf(1.0),
		"theta 0.98":   newZipf(0.98),
		"ycsb approx.": newYCSBZipf(n, 0.99),
	} {
		stat, df := chiSquare(t, want, c, n, binEdges(n), 1)
		if stat < 2*critical(df) {
			t.Errorf("%s: chi-square %.1f over %d degrees of freedom, not far above %.1f: the test cannot tell a wrong law", name, stat, df, critical(df))
		}
	}
}

// ycsbZipf is YCSB's ZipfianGenerator (Gray et al. 1994), which
// approximates the law.
type ycsbZipf struct{ alpha, zetan, eta, theta float64 }

func newYCSBZipf(n int64, theta float64) *ycsbZipf {
	zetan, zeta2 := Harmonic(n, theta), Harmonic(2, theta)
	return &ycsbZipf{
		alpha: 1 / (1 - theta), zetan: zetan, theta: theta,
		eta: (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
	}
}

func (z *ycsbZipf) Pick(rng *rand.Rand, n int64) int64 {
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return 1
	}
	return int64(float64(n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
}

func TestZipfianTopShareIsOneOverHarmonic(t *testing.T) {
	for _, theta := range []float64{0.5, 0.99, 1.2} {
		for _, n := range []int64{10, 5000, 1_000_000_000} {
			for _, scramble := range []bool{false, true} {
				c, _ := Distribution{Name: Zipfian, Theta: theta, Scramble: scramble}.Chooser()
				top := int64(0)
				if scramble {
					top = Scramble(0, n)
				}
				rng := newRNG(7)
				hits := 0
				for range draws {
					if c.Pick(rng, n) == top {
						hits++
					}
				}
				p := 1 / Harmonic(n, theta)
				sigma := math.Sqrt(p * (1 - p) / draws)
				if got := float64(hits) / draws; math.Abs(got-p) > 5*sigma {
					t.Errorf("θ=%v n=%d scramble=%v: top item share %.5f, want 1/H(n,θ) = %.5f ± %.5f", theta, n, scramble, got, p, 5*sigma)
				}
			}
		}
	}
}

func TestHarmonic(t *testing.T) {
	brute := func(n int64, theta float64) float64 {
		var s float64
		for k := n; k >= 1; k-- {
			s += math.Pow(float64(k), -theta)
		}
		return s
	}
	for _, theta := range []float64{0.01, 0.5, 0.99, 1, 1.2, 3, 10} {
		for _, n := range []int64{1, 2, 999, 1000, 1001, 1002, 12345, 2_000_000} {
			if got, want := Harmonic(n, theta), brute(n, theta); math.Abs(got-want) > 1e-12*want {
				t.Errorf("H(%d, %v) = %.15g, want %.15g", n, theta, got, want)
			}
		}
	}
	// Known values: H(n,1) = ln n + γ + 1/2n - 1/12n² + ..., H(∞,2) = π²/6.
	const gamma = 0.57721566490153286
	if got, want := Harmonic(1e9, 1), math.Log(1e9)+gamma+0.5e-9; math.Abs(got-want) > 1e-13*want {
		t.Errorf("H(1e9, 1) = %.16g, want %.16g", got, want)
	}
	if got, want := Harmonic(1e9, 2), math.Pi*math.Pi/6-1e-9+0.5e-18; math.Abs(got-want) > 1e-14 {
		t.Errorf("H(1e9, 2) = %.16g, want %.16g", got, want)
	}
}

func TestLatestFavoursTheNewest(t *testing.T) {
	for _, n := range []int64{10, 1000, 1_000_000} {
		d := Distribution{Name: Latest, Theta: 0.99}
		c, _ := d.Chooser()
		stat, df := chiSquare(t, d, c, n, latestEdges(n), 3)
		if stat > critical(df) {
			t.Errorf("n=%d: chi-square %.1f over %d degrees of freedom, above %.1f", n, stat, df, critical(df))
		}
		z := Distribution{Name: Zipfian, Theta: 0.99}
		for _, i := range []int64{0, 1, n / 2, n - 2, n - 1} {
			if got, want := d.Prob(i, n), z.Prob(n-1-i, n); got != want {
				t.Errorf("n=%d: latest P(%d) = %v, want zipfian P(rank %d) = %v", n, i, got, n-1-i, want)
			}
		}
		if d.Prob(n-1, n) <= d.Prob(n-2, n) || d.Prob(n-2, n) <= d.Prob(0, n) {
			t.Errorf("n=%d: the newest item is not the most popular", n)
		}
	}
	// As inserts grow n, the newest item stays the favourite: its share is
	// the mean of 1/H(n,θ) over the draws' n.
	c, _ := Distribution{Name: Latest, Theta: 0.99}.Chooser()
	rng := newRNG(4)
	const grow = 100_000
	newest, want := 0, 0.0
	for j := range grow {
		n := int64(1000 + j/10)
		if c.Pick(rng, n) == n-1 {
			newest++
		}
		if j%10 == 0 {
			want += 10 / Harmonic(n, 0.99) / grow
		}
	}
	sigma := math.Sqrt(want * (1 - want) / grow)
	if got := float64(newest) / grow; math.Abs(got-want) > 5*sigma {
		t.Errorf("newest item share %.4f with n growing, want the mean of 1/H(n,θ), %.4f ± %.4f", got, want, 5*sigma)
	}
}

// latestEdges mirrors binEdges: fine bins near the newest item.
func latestEdges(n int64) []int64 {
	e := binEdges(n)
	out := make([]int64, len(e))
	for j, x := range e {
		out[len(e)-1-j] = n - x
	}
	return out
}

func TestHotspotGivesHotItemsTheirShare(t *testing.T) {
	for _, tc := range []struct {
		hotData, hotOps float64
		n, hot          int64
	}{
		{0.2, 0.8, 10, 2},
		{0.2, 0.8, 5000, 1000},
		{0.01, 0.9, 1_000_000, 10_000},
		{0.3, 0.1, 7, 3}, // ceil(2.1); a cold spot
		{0.5, 0.5, 1, 1}, // no cold items: uniform
	} {
		t.Run(fmt.Sprintf("%v/%v/n=%d", tc.hotData, tc.hotOps, tc.n), func(t *testing.T) {
			d := Distribution{Name: Hotspot, HotData: tc.hotData, HotOps: tc.hotOps}
			if got := hotItems(tc.hotData, tc.n); got != tc.hot {
				t.Fatalf("hot items = %d, want %d", got, tc.hot)
			}
			c, _ := d.Chooser()
			// Bins: twenty over the hot items and twenty over the cold ones.
			var edges []int64
			for j := range int64(20) {
				edges = append(edges, j*tc.hot/20)
			}
			for j := range int64(20) {
				edges = append(edges, tc.hot+j*(tc.n-tc.hot)/20)
			}
			edges = slices.Compact(append(edges, tc.n))
			stat, df := chiSquare(t, d, c, tc.n, edges, 5)
			if df > 0 && stat > critical(df) {
				t.Errorf("chi-square %.1f over %d degrees of freedom, above %.1f", stat, df, critical(df))
			}
			rng := newRNG(6)
			hot := 0
			for range draws {
				if c.Pick(rng, tc.n) < tc.hot {
					hot++
				}
			}
			want := tc.hotOps
			if tc.hot == tc.n {
				want = 1
			}
			sigma := math.Sqrt(want * (1 - want) / draws)
			if got := float64(hot) / draws; math.Abs(got-want) > 5*sigma {
				t.Errorf("hot items took %.4f of the operations, want hot_ops = %v", got, want)
			}
		})
	}
}

func TestUniform(t *testing.T) {
	for _, n := range []int64{1, 10, 1000, 1_000_000_000} {
		d := Distribution{Name: Uniform}
		c, _ := d.Chooser()
		var edges []int64
		for j := range int64(100) {
			edges = append(edges, j*n/100)
		}
		edges = slices.Compact(append(edges, n))
		stat, df := chiSquare(t, d, c, n, edges, 8)
		if df > 0 && stat > critical(df) {
			t.Errorf("n=%d: chi-square %.1f over %d degrees of freedom, above %.1f", n, stat, df, critical(df))
		}
	}
}

func TestSequentialWalksInOrder(t *testing.T) {
	d := Distribution{Name: Sequential}
	a, _ := d.Chooser()
	b, _ := d.Chooser()
	var got []int64
	for range 7 {
		got = append(got, a.Pick(nil, 3))
	}
	b.Pick(nil, 3)
	got = append(got, b.Pick(nil, 3)) // each chooser walks on its own
	for range 3 {
		got = append(got, a.Pick(nil, 5)) // n grew: the walk goes on into the new items
	}
	got = append(got, a.Pick(nil, 2)) // n shrank below the position: wrap
	if want := []int64{0, 1, 2, 0, 1, 2, 0, 1, 1, 2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("picks %v, want %v", got, want)
	}
	if p := d.Prob(2, 4); p != 0.25 {
		t.Errorf("P(2 of 4) = %v, want 0.25", p)
	}
}

func TestScrambleIsAPermutation(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 10, 64, 65, 1000, 4097} {
		seen := make([]bool, n)
		for r := range n {
			i := Scramble(r, n)
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("n=%d: Scramble(%d) = %d, out of range or repeated", n, r, i)
			}
			seen[i] = true
		}
	}
	if Scramble(-1, 10) != -1 || Scramble(10, 10) != -1 {
		t.Error("Scramble of a rank outside [0, n) is not -1")
	}
	// The ten most popular items of a million lie all over the key range.
	const n = 1_000_000
	var top []int64
	for r := range int64(10) {
		top = append(top, Scramble(r, n))
	}
	slices.Sort(top)
	for j := 1; j < len(top); j++ {
		if top[j]-top[j-1] < 1000 {
			t.Errorf("top items %v: two within 1000 of each other", top)
		}
	}
	if top[0] > n/4 || top[len(top)-1] < 3*n/4 {
		t.Errorf("top items %v do not span the range", top)
	}
}

func TestScrambledZipfianPicksScrambledRanks(t *testing.T) {
	plain, _ := Distribution{Name: Zipfian, Theta: 0.99}.Chooser()
	scrambled, _ := DefaultDistribution(Zipfian).Chooser()
	r1, r2 := newRNG(9), newRNG(9)
	for j := range 10000 {
		n := int64(5000 + j/100) // n grows as inserts would
		if got, want := scrambled.Pick(r2, n), Scramble(plain.Pick(r1, n), n); got != want {
			t.Fatalf("draw %d: scrambled pick %d, want Scramble(rank) = %d", j, got, want)
		}
	}
}

func TestPickAllocatesNothingForABillionItems(t *testing.T) {
	for _, name := range Distributions() {
		c, err := DefaultDistribution(name).Chooser()
		if err != nil {
			t.Fatal(err)
		}
		rng := newRNG(10)
		n := int64(1_000_000_000)
		allocs := testing.AllocsPerRun(1000, func() {
			n++ // a new n each draw: constants recomputed, still nothing allocated
			if i := c.Pick(rng, n); i < 0 || i >= n {
				t.Fatalf("%s: Pick(%d) = %d", name, n, i)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per draw, want 0", name, allocs)
		}
	}
}

func TestPickOfNoItems(t *testing.T) {
	for _, name := range Distributions() {
		c, _ := DefaultDistribution(name).Chooser()
		if got := c.Pick(newRNG(1), 0); got != -1 {
			t.Errorf("%s: Pick(0) = %d, want -1", name, got)
		}
	}
}

func TestDistributionValidate(t *testing.T) {
	for _, tc := range []struct {
		d    Distribution
		want string // "" for valid
	}{
		{DefaultDistribution(Uniform), ""},
		{DefaultDistribution(Zipfian), ""},
		{DefaultDistribution(Hotspot), ""},
		{DefaultDistribution(Latest), ""},
		{DefaultDistribution(Sequential), ""},
		{Distribution{Name: Zipfian, Theta: 0.5}, ""},
		{Distribution{Name: Zipfian, Theta: MaxTheta}, ""},
		{Distribution{Name: Uniform, Theta: 99}, ""}, // ignored
		{Distribution{Name: "zipf"}, `distribution "zipf" is unknown: use uniform, zipfian, hotspot, latest or sequential`},
		{Distribution{}, `distribution "" is unknown`},
		{Distribution{Name: Zipfian}, "theta 0 is out of range: use 0 < theta <= 10"},
		{Distribution{Name: Zipfian, Theta: -1}, "theta -1 is out of range"},
		{Distribution{Name: Zipfian, Theta: 10.5}, "theta 10.5 is out of range"},
		{Distribution{Name: Latest, Theta: math.NaN()}, "theta NaN is out of range"},
		{Distribution{Name: Latest, Theta: math.Inf(1)}, "theta +Inf is out of range"},
		{Distribution{Name: Hotspot, HotData: 0, HotOps: 0.8}, "hot_data 0 is out of range: use 0 < hot_data < 1"},
		{Distribution{Name: Hotspot, HotData: 1, HotOps: 0.8}, "hot_data 1 is out of range"},
		{Distribution{Name: Hotspot, HotData: 0.2, HotOps: 1.5}, "hot_ops 1.5 is out of range: use 0 < hot_ops < 1"},
		{Distribution{Name: Hotspot, HotData: 0.2, HotOps: -0.1}, "hot_ops -0.1 is out of range"},
	} {
		err := tc.d.Validate()
		_, cerr := tc.d.Chooser()
		switch {
		case tc.want == "" && (err != nil || cerr != nil):
			t.Errorf("%+v: %v, %v; want valid", tc.d, err, cerr)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want) || cerr == nil):
			t.Errorf("%+v: %v; want %q", tc.d, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%+v: error of more than one line: %q", tc.d, err)
		}
		if tc.want != "" && tc.d.Prob(0, 10) != 0 {
			t.Errorf("%+v: Prob of an invalid distribution is not 0", tc.d)
		}
	}
}

// TestScrambleIsStableAsItemsGrow: inserts grow n one at a time, and the
// hot items must not all move each time, or a zipfian load over a growing
// table would have no hot items at all.
func TestScrambleIsStableAsItemsGrow(t *testing.T) {
	moved := 0
	const from, to, top = 600_000, 610_000, 100
	for n := int64(from); n < to; n++ {
		for r := range int64(top) {
			if Scramble(r, n) != Scramble(r, n+1) {
				moved++
			}
		}
	}
	// An item moves only when its walk passes through the new item: about
	// one rank in n per insert.
	if moved > top {
		t.Errorf("over %d inserts, the top %d ranks changed items %d times", to-from, top, moved)
	}
}
