package rest

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unsafe"

	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// The entity resources: insert, point operations and queries.

func decodeObject(body []byte) (map[string]any, *tables.Error) {
	var m map[string]any
	if err := jsonUnmarshal(body, &m); err != nil {
		return nil, tables.BadRequest(tables.CodeInvalidInput, "The request body is not a valid JSON object.")
	}
	return m, nil
}

// readEntity reads and decodes a request's entity, answering the request
// itself when it cannot. keys, when not nil, are the URL's keys, which a body
// without keys takes.
func (s *Server) readEntity(q *request, keys *[2]string) (tables.Entity, bool) {
	body, ok := s.readBody(q)
	if !ok {
		return tables.Entity{}, false
	}
	ent, err := odata.DecodeEntity(body, keys)
	if err != nil {
		s.fail(q, err)
		return tables.Entity{}, false
	}
	return ent, true
}

func (s *Server) insert(q *request, g *grant, table string) {
	ent, ok := s.readEntity(q, nil)
	if !ok {
		return
	}
	if err := g.authorize(actInsert, table, ent.PartitionKey, ent.RowKey); err != nil {
		s.fail(q, err)
		return
	}
	if s.point(q, faults.OpInsert, table, ent.PartitionKey) {
		return
	}
	stored, err := s.e.Client(q.call).Insert(q.r.Context(), table, ent)
	if err != nil {
		s.failErr(q, err)
		return
	}
	h := q.w.Header()
	setInserted(h, &stored, q.base, table)
	if noContent(q.r) {
		h.Set("Preference-Applied", "return-no-content")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	if preferContent(q.r) {
		h.Set("Preference-Applied", "return-content")
	}
	s.writeEntity(q, http.StatusCreated, &stored, table, nil)
}

// writeEntity answers with ent, limited to sel when it is not nil, in a
// pooled buffer: growing a new one to an entity's size was a good part of
// a point request's allocation.
func (s *Server) writeEntity(q *request, status int, ent *tables.Entity, table string, sel []string) {
	b := bodies.Get().(*bytes.Buffer)
	b.Reset()
	odata.WriteEntity(b, ent, q.meta, q.base, s.cfg.Account, table, true, sel)
	s.writeJSON(q, status, b.Bytes())
	if b.Cap() <= maxPooledBody { // written: response writers copy what they are given
		bodies.Put(b)
	}
}

// setInserted sets the ETag, Location and DataServiceId of the answer to
// an insert of ent: their strings in one allocation and their values in
// another, where they were five.
func setInserted(h http.Header, ent *tables.Entity, base, table string) {
	rk := urlKey(ent.RowKey)
	const etagLen = len(`W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'"`)
	// Room for keys that need no escapes; one that does grows b, and the
	// strings are cut from b only once it is whole.
	b := make([]byte, 0, etagLen+len(base)+len(table)+len("/(PartitionKey='',RowKey='')")+len(ent.PartitionKey)+len(rk))
	b = tables.AppendETag(b, ent.Timestamp)
	etag := len(b)
	b = append(append(appendEntityURLPrefix(b, base, table, ent.PartitionKey), rk...), "')"...)
	all := unsafe.String(unsafe.SliceData(b), len(b))
	vals := []string{all[:etag], all[etag:]}
	h["Etag"] = vals[0:1:1]
	h["Location"], h["Dataserviceid"] = vals[1:2:2], vals[1:2:2]
}

// entityURLPrefix is the start of the URLs of the entities with
// PartitionKey pk, up to the quoted RowKey.
func entityURLPrefix(base, table, pk string) string {
	var buf [256]byte
	return string(appendEntityURLPrefix(buf[:0], base, table, pk))
}

// appendEntityURLPrefix appends entityURLPrefix(base, table, pk) to b.
func appendEntityURLPrefix(b []byte, base, table, pk string) []byte {
	b = append(append(append(b, base...), '/'), table...)
	return append(append(append(b, "(PartitionKey='"...), urlKey(pk)...), "',RowKey='"...)
}

// urlKey is a key as an entity's URL holds it: single quotes doubled, then
// percent-encoded.
func urlKey(k string) string { return url.PathEscape(odata.QuoteKey(k)) }

// entity serves GET, PUT, PATCH, MERGE and DELETE on one entity.
func (s *Server) entity(q *request, g *grant, table, pk, rk string) {
	ctx := q.r.Context()
	ifMatch := header(q.r, "If-Match")
	if header(q.r, "If-None-Match") != "" && q.r.Method != http.MethodGet {
		s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "If-None-Match is not supported on writes."))
		return
	}
	switch q.r.Method {
	case http.MethodGet:
		if err := g.authorize(actRead, table, pk, rk); err != nil {
			s.fail(q, err)
			return
		}
		if s.point(q, faults.OpGet, table, pk) {
			return
		}
		sel := selectList(q.vals.Get("$select"))
		ent, err := s.e.Client(q.call).Get(ctx, table, pk, rk, sel)
		if err != nil {
			s.failErr(q, err)
			return
		}
		q.w.Header()["Etag"] = []string{ent.ETag()}
		s.writeEntity(q, http.StatusOK, &ent, table, sel)
	case http.MethodPut, http.MethodPatch, "MERGE":
		act := actUpdate
		if ifMatch == "" {
			act = actUpsert
		}
		if err := g.authorize(act, table, pk, rk); err != nil {
			s.fail(q, err)
			return
		}
		// Keys parsed from the URL are slices of it; a stored entity keeps its own.
		ent, ok := s.readEntity(q, &[2]string{strings.Clone(pk), strings.Clone(rk)})
		if !ok {
			return
		}
		if ent.PartitionKey != pk || ent.RowKey != rk {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The keys in the body do not match the keys in the URL."))
			return
		}
		if s.point(q, faults.OpUpdate, table, pk) {
			return
		}
		mode := tables.Merge
		if q.r.Method == http.MethodPut {
			mode = tables.Replace
		}
		var stored tables.Entity
		var err error
		if ifMatch == "" {
			stored, err = s.e.Client(q.call).Upsert(ctx, table, ent, mode)
		} else {
			stored, err = s.e.Client(q.call).Update(ctx, table, ent, mode, ifMatch)
		}
		if err != nil {
			s.failErr(q, err)
			return
		}
		q.w.Header().Set("ETag", stored.ETag())
		q.w.WriteHeader(http.StatusNoContent)
	case http.MethodDelete:
		if err := g.authorize(actDelete, table, pk, rk); err != nil {
			s.fail(q, err)
			return
		}
		if ifMatch == "" {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "A delete needs If-Match: \"*\" or the entity's ETag."))
			return
		}
		if s.point(q, faults.OpDelete, table, pk) {
			return
		}
		s.respondErr(q, s.e.Client(q.call).Delete(ctx, table, pk, rk, ifMatch), http.StatusNoContent)
	default:
		s.notAllowed(q)
	}
}

// selectList splits $select; nil means every property, as does "*".
func selectList(v string) []string {
	if v == "" {
		return nil
	}
	var sel []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "*" {
			return nil
		} else if f != "" {
			sel = append(sel, f)
		}
	}
	return sel
}

// queryPage runs one page of a query from the request's parameters.
func (s *Server) queryPage(q *request, g *grant, table string, vals url.Values) (tables.Page, []string, *tables.Error) {
	qu := tables.Query{Filter: vals.Get("$filter"), Within: g.within()}
	top, terr := parseTop(vals.Get("$top"))
	if terr != nil {
		return tables.Page{}, nil, terr
	}
	qu.Top = top
	sel := selectList(vals.Get("$select"))
	if sel != nil {
		for _, name := range sel {
			if name != "PartitionKey" && name != "RowKey" && name != "Timestamp" {
				qu.Select = append(qu.Select, name)
			}
		}
		if qu.Select == nil {
			qu.Select = []string{}
		}
	}
	npk, nrk := vals.Get("NextPartitionKey"), vals.Get("NextRowKey")
	if npk != "" || nrk != "" {
		c := &tables.Continuation{}
		var err error
		if npk != "" {
			if c.PartitionKey, err = tables.DecodeToken(npk); err != nil {
				return tables.Page{}, nil, serviceError(err)
			}
		}
		if nrk != "" {
			if c.RowKey, err = tables.DecodeToken(nrk); err != nil {
				return tables.Page{}, nil, serviceError(err)
			}
		}
		qu.Continuation = c
	}
	page, err := s.e.Client(q.call).QueryEntities(q.r.Context(), table, qu)
	if err != nil {
		return tables.Page{}, nil, serviceError(err)
	}
	return page, sel, nil
}

// query answers GET table() with $filter, $select, $top and continuation.
// Under a SAS with a key range only the entities inside it are returned.
func (s *Server) query(q *request, g *grant, table string) {
	if err := g.authorize(actQuery, table, "", ""); err != nil {
		s.fail(q, err)
		return
	}
	if s.point(q, faults.OpQuery, table, filterPK(q.vals.Get("$filter"))) {
		return
	}
	page, sel, err := s.queryPage(q, g, table, q.vals)
	if err != nil {
		s.fail(q, err)
		return
	}
	body := s.pageJSON(q, g, table, page, sel)
	if c := page.Continuation; c != nil {
		q.w.Header().Set("x-ms-continuation-NextPartitionKey", tables.EncodeToken(c.PartitionKey))
		if c.RowKey != "" {
			q.w.Header().Set("x-ms-continuation-NextRowKey", tables.EncodeToken(c.RowKey))
		}
	}
	s.writeJSON(q, http.StatusOK, body)
}

func (s *Server) pageJSON(q *request, g *grant, table string, page tables.Page, sel []string) []byte {
	var b bytes.Buffer
	openObject(&b, q, "/$metadata#"+table)
	b.WriteString(`"value":[`)
	n := 0
	for i := range page.Entities {
		e := &page.Entities[i]
		if g.ranged() && !g.inRange(e.PartitionKey, e.RowKey) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		odata.WriteEntity(&b, e, q.meta, q.base, s.cfg.Account, table, false, sel)
	}
	b.WriteString("]}")
	return b.Bytes()
}

var leadingPK = regexp.MustCompile(`^\s*\(?\s*PartitionKey\s+eq\s+'((?:[^']|'')*)'`)

// filterPK returns the PartitionKey a query's filter starts by pinning
// (PartitionKey eq '...'), for fault rules on a key; "" if it pins none.
func filterPK(filter string) string {
	if m := leadingPK.FindStringSubmatch(filter); m != nil {
		return strings.ReplaceAll(m[1], "''", "'")
	}
	return ""
}
