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
