// Package rest serves the in-tree engine as an Azure Table endpoint: the
// Table service's REST routes, headers, status codes and JSON forms,
// multipart entity group transactions with the service's success and failure
// shapes, continuation headers, error bodies, service properties, CORS,
// stored access policies, and SharedKeyLite, SharedKey, SAS and bearer
// authentication. Any Azure SDK, Storage Explorer or several tablebench
// processes can then share one engine, as they would share an account.
//
// For testing clients it also fails on purpose: fault rules (package
// faults) and per-request fault headers, budgets changed at run time through
// a signed admin endpoint, and Prometheus counters at /metrics. Package
// resttest starts it inside a Go test.
//
// It sits beside the workloads: the engine does the work and keeps the
// model; this package only translates the wire to engine calls and back.
package rest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/engine/rest/internal/memo"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// Authentication modes.
const (
	AuthSharedKey = "sharedkey" // SharedKeyLite, SharedKey and SAS signed with the account key; bearer tokens when enabled
	AuthNone      = "none"      // accept every request
)

// DevAccount and DevKey are the well-known local development account and
// key that SDKs and tools use for a local Table endpoint. They are public.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// MaxBody is the largest request body the service accepts: 4 MiB, the
// limit of an entity group transaction. A larger one is refused with 413.
const MaxBody = 4 << 20

// Config configures a Server.
type Config struct {
	Account string
	Key     []byte // the account key, decoded
	Auth    string
	TLS     bool // the server is reached over TLS
	// Bearer accepts bearer tokens over TLS. Their form, lifetime and
	// audience are checked; their signature cannot be, so this is off
	// unless the operator asks for it.
	Bearer bool
	// MaxBody is the largest request body accepted (default MaxBody).
	MaxBody int64
	// Faults, when set, holds fault rules applied to matching requests.
	Faults *faults.Set
	// AllowFaultHeader lets a request ask for its own fault with the
	// x-tablebench-fault header; otherwise the header is ignored.
	AllowFaultHeader bool
}

// Server serves an engine over the Table REST API.
type Server struct {
	e      *engine.Engine
	cfg    Config
	idBase string // request IDs: a random prefix per server and a counter
	nextID atomic.Uint64

	mu    sync.Mutex
	props serviceProperties
	// ratesMu makes an admin change of one rate a read, change and write
	// of both that no other change interleaves: two that each set one
	// rate at once both hold.
	ratesMu sync.Mutex
	acls    map[string][]signedIdentifier // by lower-case table name

	metrics *promMetrics
	// macs are HMAC-SHA256 states keyed with the account key: keying one
	// hashes two blocks, and every request's signature is checked.
	macs sync.Pool
	// lastDate is the time of the last request date read: clients stamp
	// each request with the current second, so most repeat it, and reading
	// one took a microsecond.
	lastDate memo.Last[string, time.Time]
	// lastRoot is the last service root made: a client sends every request
	// to one host, and making the root was two allocations per request.
	lastRoot memo.Last[rootOf, string]
	// lastSigned is the HMAC of the last string signed for a request to a
	// table or the service rather than to one entity: a client's inserts
	// and batches to one table within one second sign the same string, and
	// its HMAC was about a sixteenth of an insert's work in the handler.
	lastSigned memo.Last[string, [sha256.Size]byte]
}

// rootOf is what a service root is made of: a request over TLS or not, to
// host, naming account in its path or not ("").
type rootOf struct {
	tls           bool
	host, account string
}

// root returns the service root URL, such as
// http://127.0.0.1:10002/devstoreaccount1, of a request to host whose path
// names account ("" when it names none).
func (s *Server) root(tls bool, host, account string) string {
	of := rootOf{tls, host, account}
	if url, ok := s.lastRoot.Get(of); ok {
		return url
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	url := scheme + host
	if account != "" {
		url += "/" + account
	}
	s.lastRoot.Put(of, url)
	return url
}

// requestTime reads a request's date (x-ms-date or Date) as
// http.ParseTime does.
func (s *Server) requestTime(text string) (time.Time, error) {
	if t, ok := s.lastDate.Get(text); ok {
		return t, nil
	}
	t, err := http.ParseTime(text)
	if err == nil {
		s.lastDate.Put(strings.Clone(text), t)
	}
	return t, err
}

// New returns a server for e.
func New(e *engine.Engine, cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = MaxBody
	}
	if cfg.Auth == "" {
		cfg.Auth = AuthSharedKey
	}
	id := uuid.New()
	s := &Server{e: e, cfg: cfg, idBase: id.String()[:24], props: defaultServiceProperties(), acls: map[string][]signedIdentifier{}, metrics: newMetrics()}
	s.macs.New = func() any { return &mac{h: hmac.New(sha256.New, cfg.Key)} }
	return s
}

// requestID returns a unique request ID in GUID form, the server's prefix
// and a counter in twelve hex digits, as the one value of its header.
func (s *Server) requestID() []string {
	x := new(idValue)
	n := copy(x.b[:], s.idBase)
	id := s.nextID.Add(1)
	for i := len(x.b) - 1; i >= n; i-- {
		x.b[i] = "0123456789abcdef"[id&0xf]
		id >>= 4
	}
	x.v[0] = unsafe.String(&x.b[0], len(x.b))
	return x.v[:]
}

// idValue is a request ID and the header value that holds it, made in one
// allocation rather than two: every response carries its ID.
type idValue struct {
	v [1]string
	b [36]byte
}

// request is one request's context.
type request struct {
	w       http.ResponseWriter
	r       *http.Request
	id      string
	base    string // the service root, such as http://127.0.0.1:10002/devstoreaccount1
	version string
	meta    string
	vals    url.Values // the query string, parsed once

	op        string      // the operation, once a handler knows it
	header    faults.Rule // the fault the request asked for in its header
	hasHeader bool
	injected  string        // the kind of fault injected, if one was
	trunc     *truncating   // the response, held back to be cut short
	body      *bytes.Buffer // the request body read, returned to bodies when the request ends
	// call is the request's state in the engine under a profile that
	// charges request units, whose charge every answer reports; nil
	// otherwise.
	call *engine.Call
}

// firstVersion is the oldest service version; a version is a date, so one
// later than today cannot exist.
const firstVersion = "2009-09-19"

func validVersion(v string) bool {
	if v == hdrDefaultVersion[0] { // what the SDKs send: no date to parse
		return true
	}
	t, err := time.Parse("2006-01-02", v)
	return err == nil && v >= firstVersion && t.Before(time.Now().Add(48*time.Hour))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	w = sw
	var call *engine.Call
	if s.e.Config().Profile.RequestUnits() {
		w, call = chargeWriterFor(sw)
	}
	ids := s.requestID()
	q := &request{w: w, r: r, id: ids[0], version: header(r, "X-Ms-Version"), vals: query(r.URL.RawQuery), call: call}
	w.Header()["X-Ms-Request-Id"] = ids
	if cid := r.Header["X-Ms-Client-Request-Id"]; len(cid) > 0 && echoedClientID(cid[0]) {
		w.Header()["X-Ms-Client-Request-Id"] = cid[:1]
	}
	defer func() {
		s.metrics.observe(q, sw, start)
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { // an injected reset or cut: net/http drops the connection
				panic(v)
			}
			s.fail(q, errInternal()) // a bug in a handler is a 500, never a crashed server
		}
	}()
	s.dispatch(q)
	if q.trunc != nil {
		q.trunc.send()
	}
	if q.body != nil && q.body.Cap() <= maxPooledBody { // nothing holds it now: decoded values are copies
		bodies.Put(q.body)
	}
}

// echoedClientID reports whether a request's x-ms-client-request-id is
// returned on its answer: the service echoes it, on every operation's
// answer, errors included, when it is at most 1,024 visible ASCII
// characters, and otherwise leaves it out.
func echoedClientID(id string) bool {
	if len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// header returns the first value of a request's header, as Header.Get
// does, for a name in its canonical form (TestHeaderNamesCanonical checks
// each). Get checks the name's form on every call: with the dozen
// lookups a request makes, half their cost, and they were a tenth of an
// insert's work in the handler.
func header(r *http.Request, canonical string) string {
	if v := r.Header[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// query returns a request's query parameters, nil (which reads as empty)
// for none, as most requests have: parsing "" still makes a map.
func query(raw string) url.Values {
	if raw == "" {
		return nil
	}
	v, _ := url.ParseQuery(raw)
	return v
}

// Shared header values: net/http neither changes nor keeps a response's
// header values, and one that is added to is copied.
var (
	hdrNosniff        = []string{"nosniff"}
	hdrNoCache        = []string{"no-cache"}
	hdrDefaultVersion = []string{"2019-02-02"}
	hdrDSV            = []string{"3.0;"}
	hdrContentTypes   = map[string][]string{}
)

func init() {
	for _, meta := range []string{odata.NoMetadata, odata.MinimalMetadata, odata.FullMetadata} {
		hdrContentTypes[meta] = []string{contentTypeOf(meta)}
	}
}

// bodies are request body buffers, reused: a batch of 100 entities is tens
// of KiB, and growing a new buffer to that for every batch was a good part
// of the served engine's allocation. Buffers grown past maxPooledBody are
// left to the collector.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

// dispatch authenticates a request and hands it to its handler.
func (s *Server) dispatch(q *request) {
	w, r := q.w, q.r
	if !s.stamp(q) {
		return
	}
	path := r.URL.EscapedPath()
	if path == MetricsPath && r.Method == http.MethodGet && r.URL.RawQuery == "" && header(r, "Authorization") == "" {
		q.op = "metrics"
		s.Metrics().ServeHTTP(w, r)
		return
	}
	if s.admin(q, path) {
		return
	}
	if s.otherAccount(path, q.vals) {
		s.failXML(q, tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist."))
		return
	}
	account, rest := s.route(path)
	named := account
	if !strings.HasPrefix(strings.TrimPrefix(path, "/"), account) {
		named = ""
	}
	q.base = s.root(r.TLS != nil, r.Host, named)
	if r.Method == http.MethodOptions {
		s.preflight(q)
		return
	}
	g, err := s.authenticate(r, q.vals, q.base, path)
	if err != nil {
		s.fail(q, err)
		return
	}
	if !s.takeFaultHeader(q) {
		return
	}
	// The verb a request was signed with is the one it was sent with; the
	// operation, and so the permission it needs, is the tunnelled one.
	if m := header(r, "X-Http-Method"); m != "" && r.Method == http.MethodPost { // X-HTTP-Method
		r.Method = strings.ToUpper(m)
	}
	s.corsActual(q)
	resource, ok := s.resource(q, rest)
	if !ok {
		return
	}
	s.serve(q, g, account, resource)
}

// stamp sets the headers every response carries and settles the request's
// service version; it answers a request too large or of an unknown version
// itself, and then returns false.
func (s *Server) stamp(q *request) bool {
	h := q.w.Header()
	// Headers every response carries are set under their canonical names,
	// the constant ones from shared values, as net/http's Set would store them.
	h["X-Content-Type-Options"] = hdrNosniff
	h["Cache-Control"] = hdrNoCache
	if err := oversized(q.r); err != nil {
		s.fail(q, err)
		return false
	}
	if q.version != "" && !validVersion(q.version) {
		h.Set("x-ms-version", "2019-02-02")
		s.fail(q, tables.BadRequest("InvalidHeaderValue", "The value for one of the HTTP headers is not in the correct format: x-ms-version "+strconv.Quote(q.version)+" is not a service version (use a version such as 2019-02-02)."))
		return false
	}
	if q.version == "" || q.version == hdrDefaultVersion[0] {
		q.version = hdrDefaultVersion[0]
		h["X-Ms-Version"] = hdrDefaultVersion
	} else {
		h["X-Ms-Version"] = []string{q.version}
	}
	return true
}

// takeFaultHeader reads the request's fault header, if the server honours
// it, or says in the response that it was ignored; it answers a malformed
// one itself, and then returns false.
func (s *Server) takeFaultHeader(q *request) bool {
	v := header(q.r, faultHeaderKey)
	if v == "" {
		return true
	}
	if !s.cfg.AllowFaultHeader {
		q.w.Header().Set(FaultHeader+"-ignored", "start the server with --allow-fault-header to honour "+FaultHeader)
		return true
	}
	var err *tables.Error
	if q.header, err = parseFaultHeader(v); err != nil {
		s.fail(q, err)
		return false
	}
	q.hasHeader = true
	return true
}

// resource decodes the resource a request names, after its account, and
// settles the form the answer takes; it answers a request it refuses
// itself, and then returns false.
func (s *Server) resource(q *request, rest string) (string, bool) {
	r := q.r
	// The service speaks JSON only since 2015-12-11; an Atom request is
	// refused as it refuses it, not misread as bad JSON. Service
	// properties, stats and ACLs are XML resources, which clients ask for
	// with Accept: application/atom+xml,application/xml, and a $batch
	// answers in multipart whatever its Accept, each operation in the form
	// its own Accept names: the older Node.js SDK sends that Accept on all
	// three.
	if atom(r, q.vals) && !xmlResource(q.vals) && rest != "$batch" {
		s.fail(q, tables.NewError(http.StatusUnsupportedMediaType, "AtomFormatNotSupported", "Atom format is not supported."))
		return "", false
	}
	q.meta = metadataLevel(r, q.vals)
	resource, uerr := url.PathUnescape(rest)
	if uerr != nil {
		s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The request URL is not valid: "+uerr.Error()))
		return "", false
	}
	if !utf8.ValidString(resource) {
		s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The request URL is not valid UTF-8 once percent-decoded."))
		return "", false
	}
	return resource, true
}

// serve hands an authenticated request to the handler of the resource it
// names and its method.
func (s *Server) serve(q *request, g *grant, account, resource string) {
	r := q.r
	vals := q.vals
	comp := vals.Get("comp")
	switch {
	case resource == "" && vals.Get("restype") == "service" && comp == "properties":
		s.serviceProperties(q, g)
	case resource == "" && vals.Get("restype") == "service" && comp == "stats":
		if !secondary(account, r.Host) {
			// The service serves stats on the secondary endpoint only;
			// on the primary, comp=stats is no value it takes.
			s.fail(q, tables.BadRequest(tables.CodeInvalidQueryParameterValue, "Value for one of the query parameters specified in the request URI is invalid: comp=stats is served by the account's secondary endpoint, <account>-secondary."))
			return
		}
		s.serviceStats(q, g)
	case resource == "Tables" || resource == "Tables()":
		switch r.Method {
		case http.MethodPost:
			s.createTable(q, g)
		case http.MethodGet:
			s.listTables(q, g)
		default:
			s.notAllowed(q)
		}
	case strings.HasPrefix(resource, "Tables('"):
		name, ok := strings.CutSuffix(strings.TrimPrefix(resource, "Tables('"), "')")
		if !ok {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The table name in the URL is not valid: use Tables('name')."))
			return
		}
		name = strings.ReplaceAll(name, "''", "'")
		switch r.Method {
		case http.MethodDelete:
			s.deleteTable(q, g, name)
		case http.MethodGet:
			s.getTable(q, g, name)
		default:
			s.notAllowed(q)
		}
	case resource == "$batch":
		if r.Method != http.MethodPost {
			s.notAllowed(q)
			return
		}
		s.batch(q, g)
	case resource == "":
		s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The request names no resource: use /Tables, /$batch or /<table>."))
	case comp == "acl" && !strings.Contains(resource, "("):
		s.tableACL(q, g, resource)
	default:
		table, keys, hasKeys, err := parseEntityPath(resource)
		if err != nil {
			s.fail(q, err)
			return
		}
		if hasKeys {
			s.entity(q, g, table, keys[0], keys[1])
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.query(q, g, table)
		case http.MethodPost:
			s.insert(q, g, table)
		default:
			s.notAllowed(q)
		}
	}
}

// route splits a request path into the account it names (path style:
// /account/resource, or /account-secondary/resource for the read-only
// secondary endpoint SDKs ask for stats) and the resource. Host-style
// requests (account.table.host/resource) name the configured account.
// A slash after the resource (/Tables/, /$batch/) names the same resource,
// as it does to the service: clients that build URLs by joining paths
// send it, and no table name or key holds a slash.
func (s *Server) route(path string) (account, rest string) {
	account, rest = s.routeExact(path)
	return account, strings.TrimSuffix(rest, "/")
}

// otherAccount reports whether a path-style request names an account other
// than the server's: /other/resource, or /other/ with restype=service. A
// host-style path holds no slash but a trailing one, so the first segment
// of a longer path is an account. The service answers a request to an
// account that does not exist with 404 ResourceNotFound before it looks at
// the request's credentials, which no account here could check.
func (s *Server) otherAccount(path string, vals url.Values) bool {
	if s.cfg.Account == "" {
		return false
	}
	first, after, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || first == s.cfg.Account || first == s.cfg.Account+"-secondary" {
		return false
	}
	return strings.TrimSuffix(after, "/") != "" || vals.Get("restype") == "service"
}

func (s *Server) routeExact(path string) (account, rest string) {
	p := strings.TrimPrefix(path, "/")
	first, after, ok := strings.Cut(p, "/")
	named := first == s.cfg.Account || first == s.cfg.Account+"-secondary"
	if ok && (s.cfg.Account == "" || named) {
		if first == s.cfg.Account+"-secondary" { // the primary's path may follow
			if a, b, _ := strings.Cut(after, "/"); a == s.cfg.Account {
				after = b
			}
		}
		return first, after
	}
	if !ok && s.cfg.Account != "" && named {
		return first, ""
	}
	return s.cfg.Account, p
}

// secondary reports whether a request was sent to an account's secondary
// endpoint: its path names account-secondary, or, host style, its host
// does (account-secondary.table.host).
func secondary(account, host string) bool {
	label, _, _ := strings.Cut(host, ".")
	return strings.HasSuffix(account, "-secondary") || strings.HasSuffix(label, "-secondary")
}

// parseEntityPath parses table, table() or
// table(PartitionKey='p',RowKey='r'), where a doubled single quote stands
// for one.
func parseEntityPath(res string) (table string, keys [2]string, hasKeys bool, err *tables.Error) {
	i := strings.IndexByte(res, '(')
	if i < 0 {
		return res, keys, false, nil
	}
	table, args := res[:i], res[i:]
	if args == "()" {
		return table, keys, false, nil
	}
	bad := func() (string, [2]string, bool, *tables.Error) {
		return "", [2]string{}, false, tables.BadRequest(tables.CodeInvalidInput, "The entity in the URL is not valid: use "+table+"(PartitionKey='...',RowKey='...') with single quotes doubled.")
	}
	if !strings.HasSuffix(args, ")") {
		return bad()
	}
	args = args[1 : len(args)-1]
	for k, name := range [...]string{"PartitionKey='", "RowKey='"} {
		rest, ok := strings.CutPrefix(args, name)
		if !ok {
			return bad()
		}
		key, n, ok := quotedKey(rest)
		if !ok {
			return bad()
		}
		keys[k] = key
		args = rest[n:]
		if k == 0 {
			if args, ok = strings.CutPrefix(args, ","); !ok {
				return bad()
			}
		}
	}
	if args != "" {
		return bad()
	}
	return table, keys, true, nil
}

// quotedKey reads a key up to its closing single quote, a doubled quote
// standing for one, and returns it and the length read, the quote
// included. A key without doubled quotes is a slice of s, not a copy.
func quotedKey(s string) (key string, n int, ok bool) {
	end, doubled := 0, false
	for {
		i := strings.IndexByte(s[end:], '\'')
		if i < 0 {
			return "", 0, false
		}
		end += i
		if end+1 < len(s) && s[end+1] == '\'' {
			end, doubled = end+2, true
			continue
		}
		break
	}
	key = s[:end]
	if doubled {
		key = strings.ReplaceAll(key, "''", "'")
	}
	return key, end + 1, true
}

// atom reports whether a request sends or asks only for Atom XML.
func atom(r *http.Request, vals url.Values) bool {
	if strings.HasPrefix(header(r, "Content-Type"), "application/atom+xml") {
		return true
	}
	f := vals.Get("$format")
	if f == "" {
		f = header(r, "Accept")
	}
	return strings.Contains(f, "atom+xml") && !strings.Contains(f, "json")
}

// xmlResource reports whether a request is for one of the service's XML
// resources: the service's properties and stats, a table's ACL.
func xmlResource(vals url.Values) bool {
	return vals.Get("restype") == "service" || vals.Get("comp") == "acl"
}

// metadataLevel reads the JSON form asked for: $format over Accept.
func metadataLevel(r *http.Request, vals url.Values) string {
	f := vals.Get("$format")
	if f == "" {
		f = header(r, "Accept")
	}
	switch {
	case strings.Contains(f, "odata=nometadata"):
		return odata.NoMetadata
	case strings.Contains(f, "odata=fullmetadata"):
		return odata.FullMetadata
	}
	return odata.MinimalMetadata
}

func (s *Server) contentType(meta string) string { return contentTypeOf(meta) }

// contentTypeOf is the Content-Type of a JSON response at a metadata level.
func contentTypeOf(meta string) string {
	return "application/json;odata=" + meta + ";streaming=true;charset=utf-8"
}

// readBody reads a request body as it arrives. It never sizes a buffer by
// the declared Content-Length: a client could declare megabytes and send
// nothing, on hundreds of connections.
func (s *Server) readBody(q *request) ([]byte, bool) {
	if q.r.ContentLength > s.cfg.MaxBody {
		s.fail(q, tables.NewError(http.StatusRequestEntityTooLarge, tables.CodeRequestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit of 4 MiB."))
		return nil, false
	}
	// The limit wraps the body here rather than replacing r.Body: net/http
	// then sees its own body type and does not wait to drain a large body
	// the handler refused unread.
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	q.body = buf
	_, err := buf.ReadFrom(http.MaxBytesReader(q.w, q.r.Body, s.cfg.MaxBody))
	body := buf.Bytes()
	if err != nil {
		if _, tooBig := err.(*http.MaxBytesError); tooBig {
			s.fail(q, tables.NewError(http.StatusRequestEntityTooLarge, tables.CodeRequestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit of 4 MiB."))
		} else {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The request body could not be read."))
		}
		return nil, false
	}
	return body, true
}

func (s *Server) writeJSON(q *request, status int, body []byte) {
	h := q.w.Header()
	if ct, ok := hdrContentTypes[q.meta]; ok {
		h["Content-Type"] = ct
	} else {
		h.Set("Content-Type", s.contentType(q.meta))
	}
	h["Dataserviceversion"] = hdrDSV
	q.w.WriteHeader(status)
	q.w.Write(body)
}

// openObject starts a JSON response object with its odata.metadata link,
// which the nometadata form leaves out.
func openObject(b *bytes.Buffer, q *request, metadata string) {
	b.WriteByte('{')
	if q.meta != odata.NoMetadata {
		b.WriteString(`"odata.metadata":`)
		odata.WriteString(b, q.base+metadata)
		b.WriteByte(',')
	}
}

// parseTop reads $top: empty, or 1 to 1,000.
func parseTop(t string) (int, *tables.Error) {
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > tables.MaxPageSize {
		return 0, tables.BadRequest(tables.CodeInvalidQueryParameterValue, "The value of $top must be between 1 and 1000.")
	}
	return n, nil
}

func noContent(r *http.Request) bool {
	return strings.Contains(header(r, "Prefer"), "return-no-content")
}

// preferContent reports whether a request asked for the created resource in
// its response, which then says it honoured that with Preference-Applied:
// return-content, as the service does. Without a Prefer header the resource
// is returned too, but nothing was preferred, so nothing is applied.
func preferContent(r *http.Request) bool {
	return strings.Contains(header(r, "Prefer"), "return-content")
}
