package engine_test

import (
	"slices"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// TestQueryWithinKeyRange pages through a table, one entity a page, limited
// to a key range across range partitions: every page and every continuation
// stays inside it, partition boundaries included, and a continuation from
// before it starts at its low bound.
func TestQueryWithinKeyRange(t *testing.T) {
	e := newRaw(t, func(c *engine.Config) { c.PreSplit = 16 })
	for _, pk := range []string{"0a", "3a", "3b", "5a", "5b", "8a", "fa"} {
		e.Client(nil).Insert(ctx, "people", ent(pk, "r"))
	}
	from, to, toRK := "3a", "5a", "r"
	w := &tables.KeyRange{StartPK: &from, EndPK: &to, EndRK: &toRK}
	for _, start := range []*tables.Continuation{nil, {PartitionKey: "0a", RowKey: "r"}} {
		q := tables.Query{Top: 1, Within: w, Continuation: start}
		var found []string
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("the query does not end")
			}
			p, err := e.Client(nil).QueryEntities(ctx, "people", q)
			wantCode(t, err, 0, "")
			found = append(found, keys(p.Entities)...)
			c := p.Continuation
			if c == nil {
				break
			}
			if !w.Has(c.PartitionKey, c.RowKey) {
				t.Fatalf("a continuation names %q/%q, outside the range", c.PartitionKey, c.RowKey)
			}
			q.Continuation = c
		}
		if !slices.Equal(found, []string{"3a/r", "3b/r", "5a/r"}) {
			t.Fatalf("from %v: found %v", start, found)
		}
	}
}
