// Package rest serves the in-tree engine as an Azure Table endpoint: the
// Table service's REST routes, headers, status codes and JSON forms,
// multipart entity group transactions with the service's success and failure
// shapes, continuation headers, error bodies, and SharedKeyLite, SharedKey,
// SAS and bearer authentication. Any Azure SDK, Storage Explorer or several
// tablebench processes can then share one engine, as they would share an
// account.
package rest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine"
)

// Authentication modes.
const (
	AuthSharedKey = "sharedkey" // SharedKeyLite, SharedKey and SAS signed with the account key; bearer tokens over TLS
	AuthNone      = "none"      // accept every request
)

// DevAccount and DevKey are the well-known local development account and
// key that SDKs and tools use for a local Table endpoint. They are public.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Config configures a Server.
type Config struct {
	Account string
	Key     []byte // the account key, decoded
	Auth    string
	TLS     bool // bearer tokens are accepted only over TLS
	// MaxBody is the largest request body accepted (default 5 MiB: a 4 MiB
	// batch and its framing).
	MaxBody int64
}

// Server serves an engine over the Table REST API.
type Server struct {
	e      *engine.Engine
	cfg    Config
	idBase string // request IDs: a random prefix per server and a counter
	nextID atomic.Uint64
}

// New returns a server for e.
func New(e *engine.Engine, cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 5 << 20
	}
	if cfg.Auth == "" {
		cfg.Auth = AuthSharedKey
	}
	id := uuid.New()
	return &Server{e: e, cfg: cfg, idBase: id.String()[:24]}
}

// requestID returns a unique request ID in GUID form.
func (s *Server) requestID() string {
	return fmt.Sprintf("%s%012x", s.idBase, s.nextID.Add(1))
}

// request is one request's context.
type request struct {
	w       http.ResponseWriter
	r       *http.Request
	id      string
	base    string // the service root, such as http://127.0.0.1:10002/devstoreaccount1
	version string
	meta    string
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r, id: s.requestID(), version: r.Header.Get("x-ms-version")}
	if q.version == "" {
		q.version = "2019-02-02"
	}
	defer func() { // a bug in a handler is a 500, never a crashed server
		if v := recover(); v != nil {
			s.fail(q, &engine.Error{Status: 500, Code: engine.CodeInternalError, Message: "The server encountered an internal error. Please retry the request.", Index: -1})
		}
	}()
	h := w.Header()
	h.Set("x-ms-request-id", q.id)
	h.Set("x-ms-version", q.version)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	path := r.URL.EscapedPath()
	account, rest := s.route(r, path)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	q.base = scheme + "://" + r.Host
	if account != "" && strings.HasPrefix(strings.TrimPrefix(path, "/"), account) {
		q.base += "/" + account
	}
	if err := s.authenticate(r, account, path); err != nil {
		s.fail(q, err)
		return
	}
	if m := r.Header.Get("X-HTTP-Method"); m != "" && r.Method == http.MethodPost {
		r.Method = m
	}
	q.meta = metadataLevel(r)
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	resource, err := url.PathUnescape(rest)
	if err != nil {
		s.fail(q, badInput(engine.CodeInvalidInput, "The request URL is not valid: "+err.Error()))
		return
	}
	switch {
	case resource == "Tables" || resource == "Tables()":
		switch r.Method {
		case http.MethodPost:
			s.createTable(q)
		case http.MethodGet:
			s.listTables(q)
		default:
			s.notAllowed(q)
		}
	case strings.HasPrefix(resource, "Tables('"):
		name, ok := strings.CutSuffix(strings.TrimPrefix(resource, "Tables('"), "')")
		if !ok {
			s.fail(q, badInput(engine.CodeInvalidInput, "The table name in the URL is not valid: use Tables('name')."))
			return
		}
		switch r.Method {
		case http.MethodDelete:
			s.respondErr(q, s.e.DeleteTable(r.Context(), name), http.StatusNoContent)
		default:
			s.notAllowed(q)
		}
	case resource == "$batch":
		if r.Method != http.MethodPost {
			s.notAllowed(q)
			return
		}
		s.batch(q)
	case resource == "":
		s.fail(q, badInput(engine.CodeInvalidInput, "The request names no resource: use /Tables, /$batch or /<table>."))
	default:
		table, keys, hasKeys, err := parseEntityPath(resource)
		if err != nil {
			s.fail(q, err)
			return
		}
		if hasKeys {
			s.entity(q, table, keys[0], keys[1])
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.query(q, table)
		case http.MethodPost:
			s.insert(q, table)
		default:
			s.notAllowed(q)
		}
	}
}

// route splits a request path into the account it names (path style:
// /account/resource) and the resource. Host-style requests
// (account.table.host/resource) name the configured account.
func (s *Server) route(r *http.Request, path string) (account, rest string) {
	p := strings.TrimPrefix(path, "/")
	if first, after, ok := strings.Cut(p, "/"); ok && (first == s.cfg.Account || s.cfg.Account == "") {
		return first, after
	} else if !ok && p == s.cfg.Account {
		return p, ""
	}
	return s.cfg.Account, p
}

// parseEntityPath parses table, table() or
// table(PartitionKey='p',RowKey='r') with ” as an escaped quote.
func parseEntityPath(res string) (table string, keys [2]string, hasKeys bool, err *engine.Error) {
	i := strings.IndexByte(res, '(')
	if i < 0 {
		return res, keys, false, nil
	}
	table, args := res[:i], res[i:]
	if args == "()" {
		return table, keys, false, nil
	}
	bad := badInput(engine.CodeInvalidInput, "The entity in the URL is not valid: use "+table+"(PartitionKey='...',RowKey='...') with single quotes doubled.")
	if !strings.HasSuffix(args, ")") {
		return "", keys, false, bad
	}
	args = args[1 : len(args)-1]
	for k, name := range []string{"PartitionKey='", "RowKey='"} {
		rest, ok := strings.CutPrefix(args, name)
		if !ok {
			return "", keys, false, bad
		}
		var b strings.Builder
		j := 0
		for ; j < len(rest); j++ {
			if rest[j] == '\'' {
				if j+1 < len(rest) && rest[j+1] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			b.WriteByte(rest[j])
		}
		if j >= len(rest) {
			return "", keys, false, bad
		}
		keys[k] = b.String()
		args = rest[j+1:]
		if k == 0 {
			if args, ok = strings.CutPrefix(args, ","); !ok {
				return "", keys, false, bad
			}
		}
	}
	if args != "" {
		return "", keys, false, bad
	}
	return table, keys, true, nil
}

// metadataLevel reads the JSON form asked for: $format over Accept.
func metadataLevel(r *http.Request) string {
	f := r.URL.Query().Get("$format")
	if f == "" {
		f = r.Header.Get("Accept")
	}
	switch {
	case strings.Contains(f, "odata=nometadata"):
		return noMetadata
	case strings.Contains(f, "odata=fullmetadata"):
		return fullMetadata
	}
	return minimalMetadata
}

func (s *Server) contentType(meta string) string {
	return "application/json;odata=" + meta + ";streaming=true;charset=utf-8"
}

// fail writes an error in the service's JSON form.
func (s *Server) fail(q *request, err *engine.Error) {
	h := q.w.Header()
	h.Set("Content-Type", s.contentType(minimalMetadata))
	h.Set("x-ms-error-code", err.Code)
	q.w.WriteHeader(err.Status)
	q.w.Write(errorBody(err, q.id))
}

func errorBody(err *engine.Error, requestID string) []byte {
	msg := err.Message
	if err.Index >= 0 {
		msg = strconv.Itoa(err.Index) + ":" + msg
	}
	var b bytes.Buffer
	b.WriteString(`{"odata.error":{"code":`)
	writeString(&b, err.Code)
	b.WriteString(`,"message":{"lang":"en-US","value":`)
	writeString(&b, msg+"\nRequestId:"+requestID+"\nTime:"+engine.FormatTimestamp(time.Now()))
	b.WriteString("}}}")
	return b.Bytes()
}

func (s *Server) notAllowed(q *request) {
	s.fail(q, &engine.Error{Status: http.StatusMethodNotAllowed, Code: "UnsupportedHttpVerb", Message: "The resource doesn't support the specified HTTP verb " + q.r.Method + ".", Index: -1})
}

// respondErr answers err, or status with no body.
func (s *Server) respondErr(q *request, err error, status int) {
	if err != nil {
		s.failErr(q, err)
		return
	}
	q.w.WriteHeader(status)
}

// failErr answers an engine error, or a context error as a timeout.
func (s *Server) failErr(q *request, err error) {
	if e, ok := engine.AsError(err); ok {
		s.fail(q, e)
		return
	}
	if err == context.Canceled || err == context.DeadlineExceeded {
		s.fail(q, &engine.Error{Status: 500, Code: engine.CodeOperationTimedOut, Message: engine.MsgTimedOut, Index: -1})
		return
	}
	s.fail(q, &engine.Error{Status: 500, Code: engine.CodeInternalError, Message: "The server encountered an internal error. Please retry the request.", Index: -1})
}

func (s *Server) readBody(q *request) ([]byte, bool) {
	var buf bytes.Buffer
	if n := q.r.ContentLength; n > 0 && n <= s.cfg.MaxBody {
		buf.Grow(int(n) + 1)
	}
	_, err := buf.ReadFrom(q.r.Body)
	body := buf.Bytes()
	if err != nil {
		if _, tooBig := err.(*http.MaxBytesError); tooBig {
			s.fail(q, &engine.Error{Status: http.StatusRequestEntityTooLarge, Code: engine.CodeRequestBodyTooLarge, Message: "The request body is too large and exceeds the maximum permissible limit.", Index: -1})
		} else {
			s.fail(q, badInput(engine.CodeInvalidInput, "The request body could not be read."))
		}
		return nil, false
	}
	return body, true
}

func (s *Server) createTable(q *request) {
	body, ok := s.readBody(q)
	if !ok {
		return
	}
	var name string
	if e, err := decodeObject(body); err != nil {
		s.fail(q, err)
		return
	} else if n, isStr := e["TableName"].(string); !isStr {
		s.fail(q, badInput(engine.CodePropertiesNeedValue, "The TableName property is required."))
		return
	} else {
		name = n
	}
	if err := s.e.CreateTable(q.r.Context(), name); err != nil {
		s.failErr(q, err)
		return
	}
	q.w.Header().Set("Location", q.base+"/Tables('"+name+"')")
	if noContent(q.r) {
		q.w.Header().Set("Preference-Applied", "return-no-content")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	var b bytes.Buffer
	openObject(&b, q, "/$metadata#Tables/@Element")
	b.WriteString(`"TableName":`)
	writeString(&b, name)
	b.WriteByte('}')
	s.writeJSON(q, http.StatusCreated, b.Bytes())
}

func (s *Server) listTables(q *request) {
	vals := q.r.URL.Query()
	top, terr := parseTop(vals.Get("$top"))
	if terr != nil {
		s.fail(q, terr)
		return
	}
	next := ""
	if tok := vals.Get("NextTableName"); tok != "" {
		k, err := engine.DecodeToken(tok)
		if err != nil {
			s.failErr(q, err)
			return
		}
		next = k
	}
	names, after, err := s.e.ListTables(q.r.Context(), top, next)
	if err != nil {
		s.failErr(q, err)
		return
	}
	var b bytes.Buffer
	openObject(&b, q, "/$metadata#Tables")
	b.WriteString(`"value":[`)
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"TableName":`)
		writeString(&b, n)
		b.WriteByte('}')
	}
	b.WriteString("]}")
	if after != "" {
		q.w.Header().Set("x-ms-continuation-NextTableName", engine.EncodeToken(after))
	}
	s.writeJSON(q, http.StatusOK, b.Bytes())
}

// openObject starts a JSON response object with its odata.metadata link,
// which the nometadata form leaves out.
func openObject(b *bytes.Buffer, q *request, metadata string) {
	b.WriteByte('{')
	if q.meta != noMetadata {
		b.WriteString(`"odata.metadata":`)
		writeString(b, q.base+metadata)
		b.WriteByte(',')
	}
}

// parseTop reads $top: empty, or 1 to 1,000.
func parseTop(t string) (int, *engine.Error) {
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > engine.MaxPageSize {
		return 0, badInput(engine.CodeInvalidQueryParameterValue, "The value of $top must be between 1 and 1000.")
	}
	return n, nil
}

func (s *Server) writeJSON(q *request, status int, body []byte) {
	q.w.Header().Set("Content-Type", s.contentType(q.meta))
	q.w.Header().Set("DataServiceVersion", "3.0;")
	q.w.WriteHeader(status)
	q.w.Write(body)
}

func noContent(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Prefer"), "return-no-content")
}

func decodeObject(body []byte) (map[string]any, *engine.Error) {
	var m map[string]any
	if err := jsonUnmarshal(body, &m); err != nil {
		return nil, badInput(engine.CodeInvalidInput, "The request body is not a valid JSON object.")
	}
	return m, nil
}

// readEntity reads and decodes a request's entity, answering the request
// itself when it cannot.
func (s *Server) readEntity(q *request) (engine.Entity, bool) {
	body, ok := s.readBody(q)
	if !ok {
		return engine.Entity{}, false
	}
	ent, err := decodeEntity(body)
	if err != nil {
		s.fail(q, err)
		return engine.Entity{}, false
	}
	return ent, true
}

func (s *Server) insert(q *request, table string) {
	ent, ok := s.readEntity(q)
	if !ok {
		return
	}
	stored, err := s.e.Insert(q.r.Context(), table, ent)
	if err != nil {
		s.failErr(q, err)
		return
	}
	h := q.w.Header()
	h.Set("ETag", stored.ETag())
	loc := fmt.Sprintf("%s/%s(PartitionKey='%s',RowKey='%s')", q.base, table, url.PathEscape(quoteKey(stored.PartitionKey)), url.PathEscape(quoteKey(stored.RowKey)))
	h.Set("Location", loc)
	h.Set("DataServiceId", loc)
	if noContent(q.r) {
		h.Set("Preference-Applied", "return-no-content")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	var b bytes.Buffer
	entityJSON(&b, &stored, q.meta, q.base, s.cfg.Account, table, true, nil)
	s.writeJSON(q, http.StatusCreated, b.Bytes())
}

// entity serves GET, PUT, PATCH, MERGE and DELETE on one entity.
func (s *Server) entity(q *request, table, pk, rk string) {
	ctx := q.r.Context()
	ifMatch := q.r.Header.Get("If-Match")
	if q.r.Header.Get("If-None-Match") != "" && q.r.Method != http.MethodGet {
		s.fail(q, badInput(engine.CodeInvalidInput, "If-None-Match is not supported on writes."))
		return
	}
	switch q.r.Method {
	case http.MethodGet:
		var sel []string
		if v := q.r.URL.Query().Get("$select"); v != "" {
			sel = strings.Split(v, ",")
		}
		ent, err := s.e.Get(ctx, table, pk, rk, sel)
		if err != nil {
			s.failErr(q, err)
			return
		}
		q.w.Header().Set("ETag", ent.ETag())
		var b bytes.Buffer
		entityJSON(&b, &ent, q.meta, q.base, s.cfg.Account, table, true, sel)
		s.writeJSON(q, http.StatusOK, b.Bytes())
	case http.MethodPut, http.MethodPatch, "MERGE":
		ent, ok := s.readEntity(q)
		if !ok {
			return
		}
		if ent.PartitionKey != pk || ent.RowKey != rk {
			s.fail(q, badInput(engine.CodeInvalidInput, "The keys in the body do not match the keys in the URL."))
			return
		}
		mode := engine.Merge
		if q.r.Method == http.MethodPut {
			mode = engine.Replace
		}
		var stored engine.Entity
		var err error
		if ifMatch == "" {
			stored, err = s.e.Upsert(ctx, table, ent, mode)
		} else {
			stored, err = s.e.Update(ctx, table, ent, mode, ifMatch)
		}
		if err != nil {
			s.failErr(q, err)
			return
		}
		q.w.Header().Set("ETag", stored.ETag())
		q.w.WriteHeader(http.StatusNoContent)
	case http.MethodDelete:
		if ifMatch == "" {
			s.fail(q, badInput(engine.CodeInvalidInput, "A delete needs If-Match: \"*\" or the entity's ETag."))
			return
		}
		s.respondErr(q, s.e.Delete(ctx, table, pk, rk, ifMatch), http.StatusNoContent)
	default:
		s.notAllowed(q)
	}
}

func (s *Server) query(q *request, table string) {
	vals := q.r.URL.Query()
	qu := engine.Query{Filter: vals.Get("$filter")}
	top, terr := parseTop(vals.Get("$top"))
	if terr != nil {
		s.fail(q, terr)
		return
	}
	qu.Top = top
	var sel []string
	if v := vals.Get("$select"); v != "" {
		sel = strings.Split(v, ",")
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
		c := &engine.Continuation{}
		var err error
		if npk != "" {
			if c.PartitionKey, err = engine.DecodeToken(npk); err != nil {
				s.failErr(q, err)
				return
			}
		}
		if nrk != "" {
			if c.RowKey, err = engine.DecodeToken(nrk); err != nil {
				s.failErr(q, err)
				return
			}
		}
		qu.Continuation = c
	}
	page, err := s.e.QueryEntities(q.r.Context(), table, qu)
	if err != nil {
		s.failErr(q, err)
		return
	}
	var b bytes.Buffer
	openObject(&b, q, "/$metadata#"+table)
	b.WriteString(`"value":[`)
	for i := range page.Entities {
		if i > 0 {
			b.WriteByte(',')
		}
		entityJSON(&b, &page.Entities[i], q.meta, q.base, s.cfg.Account, table, false, sel)
	}
	b.WriteString("]}")
	if c := page.Continuation; c != nil {
		q.w.Header().Set("x-ms-continuation-NextPartitionKey", engine.EncodeToken(c.PartitionKey))
		if c.RowKey != "" {
			q.w.Header().Set("x-ms-continuation-NextRowKey", engine.EncodeToken(c.RowKey))
		}
	}
	s.writeJSON(q, http.StatusOK, b.Bytes())
}
