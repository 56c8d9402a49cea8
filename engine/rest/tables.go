package rest

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// The table resources: create, list (with $filter, $top and paging), get
// one, delete.

func (s *Server) createTable(q *request, g *grant) {
	if err := g.authorize(actCreateTable, "", "", ""); err != nil {
		s.fail(q, err)
		return
	}
	body, ok := s.readBody(q)
	if !ok {
		return
	}
	var name string
	if e, err := decodeObject(body); err != nil {
		s.fail(q, err)
		return
	} else if n, isStr := e["TableName"].(string); !isStr {
		s.fail(q, tables.BadRequest(tables.CodePropertiesNeedValue, "The TableName property is required."))
		return
	} else {
		name = n
	}
	if s.point(q, faults.OpTable, name, "") {
		return
	}
	if err := s.e.CreateTable(q.r.Context(), name); err != nil {
		s.failErr(q, err)
		return
	}
	s.mu.Lock()
	delete(s.acls, strings.ToLower(name))
	s.mu.Unlock()
	q.w.Header().Set("Location", q.base+"/Tables('"+name+"')")
	if noContent(q.r) {
		q.w.Header().Set("Preference-Applied", "return-no-content")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	if preferContent(q.r) {
		q.w.Header().Set("Preference-Applied", "return-content")
	}
	var b bytes.Buffer
	s.tableJSON(&b, q, name, true)
	s.writeJSON(q, http.StatusCreated, b.Bytes())
}

// tableJSON writes one table in the response's metadata form.
func (s *Server) tableJSON(b *bytes.Buffer, q *request, name string, element bool) {
	if element {
		openObject(b, q, "/$metadata#Tables/@Element")
	} else {
		b.WriteByte('{')
	}
	if q.meta == odata.FullMetadata {
		b.WriteString(`"odata.type":`)
		odata.WriteString(b, s.cfg.Account+".Tables")
		b.WriteString(`,"odata.id":`)
		odata.WriteString(b, q.base+"/Tables('"+name+"')")
		b.WriteString(`,"odata.editLink":`)
		odata.WriteString(b, "Tables('"+name+"')")
		b.WriteByte(',')
	}
	b.WriteString(`"TableName":`)
	odata.WriteString(b, name)
	b.WriteByte('}')
}

func errNoSuchResource() *tables.Error {
	return tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist.")
}

func (s *Server) getTable(q *request, g *grant, name string) {
	if err := g.authorize(actListTables, "", "", ""); err != nil {
		s.fail(q, err)
		return
	}
	if s.point(q, faults.OpTable, name, "") {
		return
	}
	stored, ok := s.e.TableName(name)
	if !ok {
		s.fail(q, errNoSuchResource())
		return
	}
	var b bytes.Buffer
	s.tableJSON(&b, q, stored, true)
	s.writeJSON(q, http.StatusOK, b.Bytes())
}

func (s *Server) deleteTable(q *request, g *grant, name string) {
	if err := g.authorize(actDeleteTable, "", "", ""); err != nil {
		s.fail(q, err)
		return
	}
	if s.point(q, faults.OpTable, name, "") {
		return
	}
	if err := s.e.DeleteTable(q.r.Context(), name); err != nil {
		if tables.IsCode(err, tables.CodeTableNotFound) {
			s.fail(q, errNoSuchResource()) // the service's code on this path
			return
		}
		s.failErr(q, err)
		return
	}
	s.mu.Lock()
	delete(s.acls, strings.ToLower(name))
	s.mu.Unlock()
	q.w.WriteHeader(http.StatusNoContent)
}

// listTables answers a query of the Tables resource: $filter over
// TableName, $top, and paging with NextTableName.
func (s *Server) listTables(q *request, g *grant) {
	if err := g.authorize(actListTables, "", "", ""); err != nil {
		s.fail(q, err)
		return
	}
	if s.point(q, faults.OpTable, "", "") {
		return
	}
	vals := q.vals
	top, terr := parseTop(vals.Get("$top"))
	if terr != nil {
		s.fail(q, terr)
		return
	}
	if top == 0 {
		top = tables.MaxPageSize
	}
	f, ferr := engine.ParseFilter(vals.Get("$filter"))
	if ferr != nil {
		s.failErr(q, ferr)
		return
	}
	next := ""
	if tok := vals.Get("NextTableName"); tok != "" {
		k, err := tables.DecodeToken(tok)
		if err != nil {
			s.failErr(q, err)
			return
		}
		next = k
	}
	var names []string
	after := ""
	for _, n := range s.e.TableNames() {
		if next != "" && n < next {
			continue
		}
		if !f.Match(&tables.Entity{Properties: []tables.Property{tables.String("TableName", n)}}) {
			continue
		}
		if len(names) == top {
			after = n
			break
		}
		names = append(names, n)
	}
	var b bytes.Buffer
	openObject(&b, q, "/$metadata#Tables")
	b.WriteString(`"value":[`)
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		s.tableJSON(&b, q, n, false)
	}
	b.WriteString("]}")
	if after != "" {
		q.w.Header().Set("x-ms-continuation-NextTableName", tables.EncodeToken(after))
	}
	s.writeJSON(q, http.StatusOK, b.Bytes())
}
