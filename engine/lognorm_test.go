package engine

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestLognormKeptLogs: a draw whose mean's logarithm was taken ahead is the
// draw the logarithm taken at the time gives, bit for bit, and both are
// the lognormal of that mean and CV.
func TestLognormKeptLogs(t *testing.T) {
	for _, p := range []Profile{WA2010(), Modern(), Cosmos()} {
		means := []time.Duration{p.FEWrite + scaleDur(p.FEWriteUnit, 1), p.FERead, p.PostWrite + p.PostUnit, p.PostRead, 3 * time.Millisecond}
		kept, plain := newLognorm(p.CV, means...), newLognorm(p.CV)
		r1, r2, r3 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		for i := range 1000 {
			m := means[i%len(means)]
			a, b := kept.draw(r1, m), plain.draw(r2, m)
			s2 := math.Log(1 + p.CV*p.CV)
			want := time.Duration(math.Exp(math.Log(float64(m)) - s2/2 + math.Sqrt(s2)*r3.NormFloat64()))
			if a != b || a != want {
				t.Fatalf("%s: mean %v: drew %v with the kept logarithm, %v without, want %v", p.Name, m, a, b, want)
			}
		}
	}
}

// TestLognormDrawKept: a draw by a kept mean's index is the draw of that
// mean, bit for bit, for the engine's own draws and for a CV of zero.
func TestLognormDrawKept(t *testing.T) {
	for _, p := range []Profile{WA2010(), Modern(), Cosmos(), None()} {
		e, err := New(Config{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		for _, d := range []*lognorm{&e.stage, &e.laneDist} {
			r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
			for i := range 1000 {
				k := i % len(d.means)
				if a, b := d.drawKept(r1, k), d.draw(r2, d.means[k]); a != b {
					t.Fatalf("%s: kept mean %d (%v): drew %v by its index, %v by its value", p.Name, k, d.means[k], a, b)
				}
			}
		}
	}
}
