package clock

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// TestSubIsTimeSub: Sub is time.Time's Sub, for times with and without
// monotonic readings, near and centuries apart.
func TestSubIsTimeSub(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	epoch := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
	wall := time.Now()
	bases := []time.Time{epoch, wall, wall.Round(0), epoch.In(time.FixedZone("x", 3600)), {}, time.Date(1, 1, 1, 0, 0, 0, 5, time.UTC)}
	spans := []time.Duration{time.Nanosecond, time.Second, time.Hour, 100 * 365 * 24 * time.Hour, 1 << 62}
	for range 20000 {
		a, b := bases[rng.IntN(len(bases))], bases[rng.IntN(len(bases))]
		a = a.Add(time.Duration(rng.Int64N(int64(spans[rng.IntN(len(spans))]))))
		b = b.Add(-time.Duration(rng.Int64N(int64(spans[rng.IntN(len(spans))]))))
		for _, p := range [][2]time.Time{{a, b}, {b, a}, {a, a}} {
			if got, want := Sub(p[0], p[1]), p[0].Sub(p[1]); got != want {
				t.Fatalf("Sub(%v, %v) = %v, want %v", p[0], p[1], got, want)
			}
		}
	}
}

// TestVirtualNowIsStartAdd: a Virtual clock's Now is start.Add of its
// offset, the same Time value, whatever start's location and reading.
func TestVirtualNowIsStartAdd(t *testing.T) {
	for _, start := range []time.Time{
		time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2010, 11, 1, 0, 0, 0, 999_999_999, time.FixedZone("x", -7200)),
		time.Date(2010, 11, 1, 0, 0, 0, 1, time.Local),
		time.Now(),
	} {
		c := NewVirtual(start)
		for _, d := range []time.Duration{0, 1, 999_999_999, time.Second, 90*time.Minute + 7, 200 * 365 * 24 * time.Hour} {
			c.now.Store(int64(d))
			if got, want := c.Now(), start.Add(d); got != want {
				t.Fatalf("start %v offset %v: Now is %#v, want %#v", start, d, got, want)
			}
		}
	}
}

// TestVirtualSinceIsSub: the offset of a wake-up from a Virtual clock's
// start is t.Sub(start), whatever t's monotonic reading.
func TestVirtualSinceIsSub(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, start := range []time.Time{time.Date(2010, 11, 1, 0, 0, 0, 7, time.UTC), time.Now()} {
		c := NewVirtual(start)
		for _, base := range []time.Time{start, time.Now(), time.Now().Round(0), {}} {
			for range 2000 {
				at := base.Add(time.Duration(rng.Int64()) >> rng.IntN(64))
				if got, want := c.since(at), at.Sub(start); got != want {
					t.Fatalf("start %v: since(%v) = %v, want %v", start, at, got, want)
				}
			}
		}
	}
}

// TestMonotonicIsRound: monotonic reads a Time's monotonic reading as
// Round(0) strips it, for times with and without one.
func TestMonotonicIsRound(t *testing.T) {
	now := time.Now()
	for _, tm := range []time.Time{now, now.Add(time.Hour), now.Round(0), now.In(time.UTC), {}, time.Date(2010, 11, 1, 0, 0, 0, 7, time.UTC), time.Unix(1<<40, 0)} {
		if got, want := monotonic(&tm), tm != tm.Round(0); got != want {
			t.Fatalf("monotonic(%#v) = %v, want %v", tm, got, want)
		}
	}
}

// TestTimeWords: words is time.Time's layout, as Sub, since and Now
// read and write it: a time without a monotonic reading has its
// nanoseconds alone in wall and its seconds, Unix's plus a constant, in
// ext; one with a reading has the top bit of wall set.
func TestTimeWords(t *testing.T) {
	if unsafe.Sizeof(words{}) != unsafe.Sizeof(time.Time{}) {
		t.Fatalf("words is %d bytes, time.Time %d", unsafe.Sizeof(words{}), unsafe.Sizeof(time.Time{}))
	}
	zero := time.Time{}
	offset := wordsOf(&zero).ext - zero.Unix()
	now := time.Now()
	for _, tm := range []time.Time{now.Round(0), now.In(time.UTC), {}, time.Date(2010, 11, 1, 0, 0, 0, 999_999_999, time.FixedZone("x", 3600)), time.Unix(1<<40, 7), time.Unix(-1<<40, 7)} {
		w := wordsOf(&tm)
		if w.wall != uint64(tm.Nanosecond()) || w.ext-offset != tm.Unix() || w.loc != tm.Location() && !(w.loc == nil && tm.Location() == time.UTC) {
			t.Fatalf("%#v: words %+v, want nanoseconds %d and Unix seconds %d", tm, *w, tm.Nanosecond(), tm.Unix())
		}
	}
	if w := wordsOf(&now); w.wall>>63 == 0 {
		t.Fatalf("%#v: words %+v, want a monotonic reading's bit", now, *w)
	}
}
