package engine

import (
	"context"
	"github.com/tablebench/tablebench/tables"
)

// QueryEntities runs one page of a query. Every entity the page examines
// counts toward the partition's and the account's targets.
func (cl Client) QueryEntities(ctx context.Context, tableName string, q tables.Query) (tables.Page, error) {
	e := cl.e
	t, terr := e.table(tableName)
	if terr != nil {
		return tables.Page{}, terr
	}
	if q.Top < 0 || q.Top > tables.MaxPageSize {
		return tables.Page{}, tables.BadRequest(tables.CodeInvalidQueryParameterValue, "The value of $top must be between 1 and 1000.")
	}
	f, err := ParseFilter(q.Filter)
	if err != nil {
		return tables.Page{}, err
	}
	limit := q.Top
	if limit == 0 {
		limit = tables.MaxPageSize
	}
	rng := f.keyRange()
	startPK, startRK := rng.start()
	if c := q.Continuation; c != nil && compareRecordKeys(c.PartitionKey, c.RowKey, startPK, startRK) > 0 {
		startPK, startRK = c.PartitionKey, c.RowKey
	}
	if w := q.Within; w.Before(startPK, startRK) {
		startPK, startRK = *w.StartPK, ""
		if w.StartRK != nil {
			startRK = *w.StartRK
		}
	}
	var page tables.Page
	budget := -1
	if p := e.cfg.Profile; p.Model && p.Scan > 0 {
		budget = int(p.ScanLimit / p.Scan)
	}
	qerr := e.do(ctx, cl.c, t, startPK, opQuery, 0, 1, func(rp *rangePartition, now int64) (int, *tables.Error) {
		var next *tables.Continuation
		rp.data.ascend(startPK, startRK, func(pk string, r *record) bool {
			if rng.past(pk, r.rk) || q.Within.Past(pk, r.rk) {
				return false
			}
			if len(page.Entities) == limit || page.Scanned == budget {
				next = &tables.Continuation{PartitionKey: pk, RowKey: r.rk}
				return false
			}
			page.Scanned++
			if f.match(pk, r) {
				page.Entities = append(page.Entities, r.view(pk, q.Select))
			}
			return true
		})
		if next == nil && rp.hi != "" && !rng.past(rp.hi, "") && !q.Within.Past(rp.hi, "") {
			next = &tables.Continuation{PartitionKey: rp.hi} // the scan goes on in the next range partition
		}
		page.Continuation = next
		return page.Scanned, nil
	})
	if qerr != nil {
		return tables.Page{}, qerr
	}
	if e.cfg.Profile.UnsortedQueries {
		unsorted(page.Entities)
	}
	return page, nil
}

func compareRecordKeys(pk1, rk1, pk2, rk2 string) int {
	if c := compareKeys(pk1, pk2); c != 0 {
		return c
	}
	return compareKeys(rk1, rk2)
}
