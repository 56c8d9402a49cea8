package results

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"
)

// spaceSaving is the Space-Saving summary as the paper states it, with a
// map from key to counter, a heap of pointers and a sketch of the keys: what
// keyCounter must count exactly as, whatever it does to be fast.
type spaceSaving struct {
	byKey map[string]*ssEntry
	heap  []*ssEntry
	hll   *hyperloglog.Sketch
}

type ssEntry struct {
	key         string
	n, thr, err int64
	pos         int
}

func (s *spaceSaving) add(key string, throttled bool, n int64) {
	e := s.byKey[key]
	if e == nil {
		s.hll.Insert([]byte(key))
		if len(s.heap) < TrackedKeys {
			e = &ssEntry{key: key, pos: len(s.heap)}
			s.heap = append(s.heap, e)
			for i := e.pos; i > 0; {
				p := (i - 1) / 2
				if s.heap[p].n <= s.heap[i].n {
					break
				}
				s.swap(i, p)
				i = p
			}
		} else {
			e = s.heap[0]
			delete(s.byKey, e.key)
			e.key, e.err, e.thr = key, e.n, e.n
		}
		s.byKey[key] = e
	}
	e.n += n
	if throttled {
		e.thr += n
	}
	for i := e.pos; ; {
		l := 2*i + 1
		if l >= len(s.heap) {
			break
		}
		m := l
		if r := l + 1; r < len(s.heap) && s.heap[r].n < s.heap[l].n {
			m = r
		}
		if s.heap[i].n <= s.heap[m].n {
			break
		}
		s.swap(i, m)
		i = m
	}
}

func (s *spaceSaving) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].pos, s.heap[j].pos = i, j
}

// top is every counter, most counted first.
func (s *spaceSaving) top() []KeyLoad {
	var all []KeyLoad
	for _, e := range s.heap {
		all = append(all, KeyLoad{Key: e.key, Requests: e.n, Throttled: e.thr, Error: e.err})
	}
	slices.SortFunc(all, func(a, b KeyLoad) int {
		if a.Requests != b.Requests {
			return cmp.Compare(b.Requests, a.Requests)
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return all
}

// TestKeyCounterIsSpaceSaving: however keyCounter finds a key's counter
// (by hint, by address, by its table renumbered past maxKeyIDs keys), it
// counts as the plain summary does, counter for counter; and the heat map
// row it keeps for a key is the one a search of the rows finds.
func TestKeyCounterIsSpaceSaving(t *testing.T) {
	for _, tc := range []struct {
		name       string
		keys, reqs int
		reuse      bool // hand the same string for a key each time, as a workload does
	}{
		{"few keys", 1000, 50000, true},
		{"evicting", 10000, 200000, true},
		{"renumbering", 3 * maxKeyIDs, 400000, true},
		{"fresh strings", 3 * maxKeyIDs, 300000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			names := make([]string, tc.keys)
			for i := range names {
				names[i] = fmt.Sprintf("k%08x", uint32(i)*2654435761)
			}
			c, ref := newKeyCounter(), &spaceSaving{byKey: map[string]*ssEntry{}}
			ref.hll, _ = hyperloglog.NewSketch(sketchPrecision, true)
			renumbered := 0
			c.renumbered = func() { renumbered++ }
			heat := newHeatBuilder(time.Minute)
			hint := int32(-1)
			seen := map[string]bool{}
			for range tc.reqs {
				// Half the requests to a few hot keys, the rest anywhere.
				i := rng.IntN(tc.keys)
				if rng.IntN(2) == 0 {
					i = rng.IntN(64)
				}
				key := names[i]
				if !tc.reuse {
					key = strings.Clone(key)
				}
				thr, n := rng.IntN(4) == 0, int64(1+rng.IntN(3))
				if rng.IntN(8) == 0 {
					hint = -1
				}
				id := c.id(key, hint)
				hint = id
				if got := c.keys[id].key; got != key {
					t.Fatalf("key %q: numbered %d, which is %q's", key, id, got)
				}
				if got, want := heat.rowOf(&c.keys[id]), heat.row(key); got != want {
					t.Fatalf("key %q: row %q..%q kept, row %q..%q holds it", key, got.lo, got.hi, want.lo, want.hi)
				}
				c.add(id, thr, n)
				ref.add(key, thr, n)
				seen[key] = true
			}
			if tc.keys > maxKeyIDs && renumbered == 0 {
				t.Errorf("%d keys: the table was never renumbered", tc.keys)
			}
			want := ref.top()
			var all []KeyLoad
			for _, s := range c.heap {
				all = append(all, KeyLoad{Key: s.e.key, Requests: s.n, Throttled: s.e.thr, Error: s.e.err})
			}
			slices.SortFunc(all, func(a, b KeyLoad) int {
				if a.Requests != b.Requests {
					return cmp.Compare(b.Requests, a.Requests)
				}
				return cmp.Compare(a.Key, b.Key)
			})
			if !reflect.DeepEqual(all, want) {
				t.Errorf("counters differ from the plain summary's")
			}
			if encodeSketch(c.hll) != encodeSketch(ref.hll) {
				t.Errorf("the sketch differs from the plain summary's")
			}
			p := c.record()
			got := append([]KeyLoad(nil), p.Top...)
			if len(want) > TopKeys {
				if p.UnlistedMax != want[TopKeys].Requests {
					t.Errorf("unlisted max %d, want %d", p.UnlistedMax, want[TopKeys].Requests)
				}
				want = want[:TopKeys]
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("top keys differ from the plain summary's:\ngot  %v\nwant %v", got, want)
			}
			if exact := len(seen) <= TrackedKeys; exact != p.DistinctExact {
				t.Errorf("distinct exact %v, want %v", p.DistinctExact, exact)
			}
		})
	}
}

// TestSketchHashIsInserts: the hash keyCounter keeps of a key is the one
// the sketch's Insert takes, so that InsertHash of it leaves the sketch as
// Insert would, byte for byte.
func TestSketchHashIsInserts(t *testing.T) {
	a, _ := hyperloglog.NewSketch(sketchPrecision, true)
	b, _ := hyperloglog.NewSketch(sketchPrecision, true)
	for i := range 20000 {
		key := fmt.Sprintf("%08x-%d", uint32(i)*2654435761, i)
		a.Insert([]byte(key))
		b.InsertHash(sketchHash(key))
		if i%997 == 0 || i == 19999 {
			if encodeSketch(a) != encodeSketch(b) {
				t.Fatalf("after %d keys the sketches differ", i+1)
			}
		}
	}
}
