package engine

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Query selects entities of a table. Filter is an OData $filter of the
// service's subset; Select limits the returned properties (nil returns all);
// Top caps the page size (0: the service's 1,000). A page that is not the
// last carries a Continuation to pass back in the next Query.
type Query struct {
	Filter       string
	Select       []string
	Top          int
	Continuation *Continuation
}

// Continuation is where a query goes on: the next PartitionKey and RowKey to
// look at. On the wire each travels as a token (EncodeToken).
type Continuation struct {
	PartitionKey string
	RowKey       string
}

// Page is one page of a query's results. Continuation is nil on the last
// page. A page may be empty and still have a continuation, as the service's
// can when a scan ends at a partition boundary.
type Page struct {
	Entities     []Entity
	Continuation *Continuation
	Scanned      int // entities examined; they count toward the targets
}

// EncodeToken encodes a continuation key in the service's form,
// 1!<length>!<base64 with '=' as '-'>.
func EncodeToken(key string) string {
	b := strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(key)), "=", "-")
	return "1!" + strconv.Itoa(len(b)) + "!" + b
}

// DecodeToken decodes a token made by EncodeToken.
func DecodeToken(tok string) (string, error) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", badRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	n, b, ok := strings.Cut(rest, "!")
	l, err := strconv.Atoi(n)
	if !ok || err != nil || l != len(b) {
		return "", badRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b, "-", "="))
	if err != nil {
		return "", badRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	return string(raw), nil
}

// QueryEntities runs one page of a query. Every entity the page examines
// counts toward the partition's and the account's targets.
func (cl Client) QueryEntities(ctx context.Context, tableName string, q Query) (Page, error) {
	e := cl.e
	t, terr := e.table(tableName)
	if terr != nil {
		return Page{}, terr
	}
	if q.Top < 0 || q.Top > MaxPageSize {
		return Page{}, badRequest(CodeInvalidQueryParameterValue, "The value of $top must be between 1 and 1000.")
	}
	f, err := ParseFilter(q.Filter)
	if err != nil {
		return Page{}, err
	}
	limit := q.Top
	if limit == 0 {
		limit = MaxPageSize
	}
	rng := f.keyRange()
	start := rng.start()
	if c := q.Continuation; c != nil && compareRecordKeys(c.PartitionKey, c.RowKey, start.pk, start.rk) > 0 {
		start = &record{pk: c.PartitionKey, rk: c.RowKey}
	}
	var page Page
	budget := -1
	if p := e.cfg.Profile; p.Model && p.Scan > 0 {
		budget = int(p.ScanLimit / p.Scan)
	}
	qerr := e.do(ctx, cl.c, t, start.pk, opQuery, 0, 1, func(rp *rangePartition, now time.Time) (int, *Error) {
		var next *Continuation
		rp.tree.AscendGreaterOrEqual(start, func(r *record) bool {
			if rng.past(r) {
				return false
			}
			if len(page.Entities) == limit || page.Scanned == budget {
				next = &Continuation{r.pk, r.rk}
				return false
			}
			page.Scanned++
			if f.match(r) {
				page.Entities = append(page.Entities, r.view(q.Select))
			}
			return true
		})
		if next == nil && rp.hi != "" && !rng.past(&record{pk: rp.hi}) {
			next = &Continuation{PartitionKey: rp.hi} // the scan goes on in the next range partition
		}
		page.Continuation = next
		return page.Scanned, nil
	})
	if qerr != nil {
		return Page{}, qerr
	}
	return page, nil
}

func compareRecordKeys(pk1, rk1, pk2, rk2 string) int {
	if c := compareKeys(pk1, pk2); c != 0 {
		return c
	}
	return compareKeys(rk1, rk2)
}
