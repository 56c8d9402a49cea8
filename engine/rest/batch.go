package rest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// subRequest is one operation of a batch: an HTTP request inside a
// multipart part.
type subRequest struct {
	method   string
	path     string // escaped, as url.URL.EscapedPath gives it
	rawQuery string
	header   fields
	body     string
}

// query returns the operation's query parameters.
func (sub *subRequest) query() url.Values {
	v, _ := url.ParseQuery(sub.rawQuery)
	return v
}

// fields are the headers of an operation or a part, in the order sent: a
// handful, each looked up once or twice, which a slice does with less work
// than a map.
type fields []field

type field struct{ name, value string }

// Get returns the first value of the header name, case-insensitively, or
// "" when there is none.
func (f fields) Get(name string) string {
	for _, x := range f {
		if len(x.name) == len(name) && strings.EqualFold(x.name, name) {
			return x.value
		}
	}
	return ""
}

// fieldsOf turns headers textproto read into fields.
func fieldsOf(h textproto.MIMEHeader) fields {
	var f fields
	for name, vs := range h {
		for _, v := range vs {
			f = append(f, field{name, v})
		}
	}
	return f
}

// parseSubRequest reads an application/http part. Its body runs to the part's
// end, since clients need not send a Content-Length; a bodiless operation's
// headers may run straight into the boundary, without a blank line. Its
// headers are appended to scratch[:0] when they take the plain reader: a
// caller reading operations one after another reuses one slice. The
// operation's strings are substrings of raw.
func parseSubRequest(raw string, scratch fields) (subRequest, error) {
	head, body := raw, ""
	if i := strings.Index(raw, "\r\n\r\n"); i >= 0 {
		head, body = raw[:i], raw[i+4:]
	} else if i := strings.Index(raw, "\n\n"); i >= 0 {
		head, body = raw[:i], raw[i+2:]
	}
	head = strings.TrimLeft(head, "\r\n")
	line, rest, _ := strings.Cut(head, "\n")
	line = strings.TrimRight(line, "\r")
	method, target, ok := plainRequestLine(line)
	if !ok {
		fields := strings.Fields(line)
		if len(fields) != 3 || !strings.HasPrefix(fields[2], "HTTP/") {
			return subRequest{}, fmt.Errorf("the request line %q is not METHOD URL HTTP/1.1", line)
		}
		method, target = strings.ToUpper(fields[0]), fields[1]
	}
	sub := subRequest{method: method}
	if sub.path, sub.rawQuery, ok = plainTarget(target); !ok {
		t := target
		if !strings.Contains(t, "://") && !strings.HasPrefix(t, "/") {
			t = "/" + t // a URL relative to the service root
		}
		u, err := url.ParseRequestURI(t)
		if err != nil {
			return subRequest{}, fmt.Errorf("the URL %q is not valid", target)
		}
		sub.path, sub.rawQuery = u.EscapedPath(), u.RawQuery
	}
	mh, ok := plainHeaders(rest, scratch[:0])
	if !ok { // folded lines, odd names or bad syntax: textproto decides
		hdrText := strings.TrimRight(rest, "\r\n") + "\r\n\r\n"
		if len(strings.TrimSpace(rest)) == 0 {
			hdrText = "\r\n"
		}
		th, err := textproto.NewReader(bufio.NewReader(strings.NewReader(hdrText))).ReadMIMEHeader()
		if err != nil {
			return subRequest{}, fmt.Errorf("its headers are not valid: %v", err)
		}
		mh = fieldsOf(th)
	}
	if cl := mh.Get("Content-Length"); cl != "" {
		if n, err := strconv.Atoi(cl); err == nil && n >= 0 && n < len(body) {
			body = body[:n]
		}
	}
	sub.header, sub.body = mh, body
	sub.tunnel()
	return sub, nil
}

// tunnel takes the method a POST names in X-HTTP-Method as the
// operation's, as the service does.
func (sub *subRequest) tunnel() {
	if m := sub.header.Get("X-HTTP-Method"); m != "" && sub.method == http.MethodPost {
		sub.method = strings.ToUpper(m)
	}
}

// plainRequestLine reads a request line of printable ASCII words split by
// single spaces, METHOD URL HTTP/x, as every SDK writes it, without the
// copies strings.Fields makes; anything else reports false and is left to
// it.
func plainRequestLine(line string) (method, target string, ok bool) {
	sp1 := strings.IndexByte(line, ' ')
	if sp1 <= 0 {
		return "", "", false
	}
	sp2 := strings.IndexByte(line[sp1+1:], ' ') + sp1 + 1
	if sp2 <= sp1+1 || strings.IndexByte(line[sp2+1:], ' ') >= 0 || !strings.HasPrefix(line[sp2+1:], "HTTP/") {
		return "", "", false
	}
	if !printable(line) { // ASCII, the two spaces included
		return "", "", false
	}
	return methodName(line[:sp1]), line[sp1+1 : sp2], true
}

// methodName returns an operation's method in upper case, as a constant
// for the methods a batch holds.
func methodName(m string) string {
	switch m {
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case "MERGE":
		return "MERGE"
	case http.MethodPatch:
		return http.MethodPatch
	case http.MethodDelete:
		return http.MethodDelete
	case http.MethodGet:
		return http.MethodGet
	}
	return strings.ToUpper(m)
}

// plainTarget returns the escaped path and the raw query of an absolute
// http or https URL whose host is a name or IPv4 address with an optional
// port and whose path holds only characters that stand for themselves: the
// form SDKs send, and what url.ParseRequestURI then EscapedPath and
// RawQuery give for it. Any other URL (percent escapes or odd characters in
// the path, userinfo, a relative form) reports false and is left to
// url.ParseRequestURI.
func plainTarget(t string) (path, query string, ok bool) {
	rest, ok := strings.CutPrefix(t, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(t, "https://"); !ok {
			return "", "", false
		}
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return "", "", false
	}
	host := rest[:slash]
	path, query, _ = strings.Cut(rest[slash:], "?")
	port := false
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c >= '0' && c <= '9':
		case !port && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-'):
		case !port && c == ':':
			port = true
		default:
			return "", "", false
		}
	}
	for i := 0; i < len(path); i++ {
		if !pathChars[path[i]] {
			return "", "", false
		}
	}
	for i := 0; i < len(query); i++ { // taken as it is, as url.ParseRequestURI takes it, but for control characters
		if c := query[i]; c < 0x20 || c == 0x7f {
			return "", "", false
		}
	}
	return path, query, true
}

// pathChars are the bytes that stand for themselves in a URL's path.
var pathChars = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/", byte(c)) >= 0
	}
	return t
}()

// printable reports whether s is printable ASCII (0x20-0x7e), reading
// eight bytes at a time: a request line is a hundred bytes or more.
func printable(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64([]byte(s[:8]))
		// A high bit marks a byte below 0x20 (the first term), from 0x80
		// (w itself) or 0x7f (w+1 carries into it; a carry out of a byte
		// comes only from 0xff, itself marked).
		if ((w-ones*0x20)&^w|w|(w+ones))&highs != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// plainValue reports whether a header value holds no control character
// but tabs (a bare CR is one too), reading eight bytes at a time while it
// holds none at all.
func plainValue(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64([]byte(s[:8]))
		del := w ^ (ones * 0x7f)
		// A high bit marks a byte below 0x20 or equal to 0x7f (zero after
		// the xor); bytes from 0x80 are masked out of both.
		if ((w-ones*0x20)&^w|(del-ones)&^del)&highs != 0 {
			break // a tab, or a byte the loop below refuses
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// nameChars are the bytes plainHeaders takes in a header name.
var nameChars = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
	}
	return t
}()

// plainHeaders appends to h the CRLF-ended "Name: value" lines whose names are
// letters, digits and dashes, as every SDK writes an operation's headers,
// without the buffered reader textproto needs per operation. Anything else
// reports false and is left to textproto. The names and values are
// substrings of str.
func plainHeaders(str string, h fields) (fields, bool) {
	for len(str) > 0 {
		line := str
		if nl := strings.IndexByte(str, '\n'); nl >= 0 {
			if nl == 0 || str[nl-1] != '\r' { // a bare LF
				return nil, false
			}
			line, str = str[:nl-1], str[nl+1:]
		} else {
			str = ""
		}
		if len(line) == 0 {
			if len(strings.TrimSpace(str)) == 0 {
				break
			}
			return nil, false
		}
		f, ok := headerField(line)
		if !ok {
			return nil, false
		}
		h = append(h, f)
	}
	return h, true
}

// headerField reads one header line without its CRLF, "Name: value", as
// plainHeaders takes it: a name of letters, digits and dashes, a value
// without control characters but tabs.
func headerField(line string) (field, bool) {
	colon := 0
	for colon < len(line) && nameChars[line[colon]] {
		colon++
	}
	if colon == 0 || colon == len(line) || line[colon] != ':' || !plainValue(line[colon+1:]) {
		return field{}, false
	}
	// The value holds no CR or LF, so TrimString cuts spaces and tabs.
	return field{line[:colon], textproto.TrimString(line[colon+1:])}, true
}

// sameFields reports whether a and b are one slice of headers, as the
// operations of a batch that share their header block are.
func sameFields(a, b fields) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// readOnly returns the bytes of s without a copy, for a reader that does
// not change or keep them.
func readOnly(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// resource returns the sub-request's resource, percent-decoded once.
func (s *Server) subResource(sub *subRequest) (string, *tables.Error) {
	_, res := s.route(sub.path)
	dec, err := url.PathUnescape(res)
	if err != nil || !utf8.ValidString(dec) {
		return "", tables.BadRequest(tables.CodeInvalidInput, "An operation's URL is not valid percent-encoded UTF-8.")
	}
	return dec, nil
}

// parsedBatch is a $batch body: one changeset, or one query.
type parsedBatch struct {
	table     string
	ops       []tables.BatchOp
	noContent []bool // ops[i] asked for no entity in its response
	query     *subRequest
	stored    []tables.Entity // the entities as the engine stored them, for the response
}

// parsedBatches keeps the arrays of batches answered, some 20 KB for a
// batch of 100, for the next: a served engine's memory otherwise grows by
// them between collections, each new page a fault.
var parsedBatches = sync.Pool{New: func() any { return new(parsedBatch) }}

func newParsedBatch() *parsedBatch { return parsedBatches.Get().(*parsedBatch) }

// release returns pb to the pool once the batch is answered. Its arrays
// are cleared: they hold the stored entities' strings and properties,
// which the pool must not keep from the collector.
func (pb *parsedBatch) release() {
	clear(pb.ops)
	clear(pb.stored)
	*pb = parsedBatch{ops: pb.ops[:0], noContent: pb.noContent[:0], stored: pb.stored[:0]}
	parsedBatches.Put(pb)
}

// parseBatch reads a $batch body: one changeset of application/http parts,
// or a single query outside a changeset. It checks every operation against
// the SAS, if any, and returns the service's 400 or 403 answer when it
// cannot be run.
func (s *Server) parseBatch(contentType string, body []byte, g *grant) (*parsedBatch, *tables.Error) {
	bad := func(format string, args ...any) (*parsedBatch, *tables.Error) {
		return nil, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf(format, args...))
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return bad("The batch request's Content-Type must be multipart/mixed with a boundary.")
	}
	// What SDKs send is read in place: every header, URL and key of its
	// operations is a substring of the body, which the server reuses for
	// the next request, rather than an allocation of its own. So what the
	// parse returns (the entities, the table, the keys of a URL, the tags)
	// is copied out of it (TestParsedBatchOutlivesItsBody).
	text := unsafe.String(unsafe.SliceData(body), len(body))
	buf := changesetBufs.Get().(*changesetBuf)
	defer buf.release()
	if subs, ok := readChangeset(text, params["boundary"], buf); ok {
		pb := newParsedBatch()
		if perr := s.parseChangeset(pb, subs, nil, 0, g); perr != nil {
			return nil, perr
		}
		return pb, nil
	}
	if ops, n, ok := splitChangeset(text, params["boundary"]); ok {
		pb := newParsedBatch()
		if perr := s.parseChangeset(pb, nil, ops, n, g); perr != nil {
			return nil, perr
		}
		return pb, nil
	}
	outer := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	cs, err := outer.NextPart()
	if err != nil {
		return bad("The batch request body is not valid multipart: %v.", err)
	}
	cmt, cparams, err := mime.ParseMediaType(cs.Header.Get("Content-Type"))
	if err != nil {
		return bad("The batch's part has no valid Content-Type: use multipart/mixed for a changeset or application/http for a query.")
	}
	pb := &parsedBatch{}
	switch {
	case cmt == "application/http":
		raw, err := io.ReadAll(cs)
		if err != nil {
			return bad("The batch could not be read: %v.", err)
		}
		sub, err := parseSubRequest(string(raw), nil)
		if err != nil {
			return bad("The batch's query is not an HTTP request: %v.", err)
		}
		if sub.method != http.MethodGet {
			return bad("An operation outside a changeset must be a query (GET); put writes in a changeset.")
		}
		pb.query = &sub
	case cmt == "multipart/mixed" && cparams["boundary"] != "":
		if perr := s.parseChangeset(pb, nil, readParts(multipart.NewReader(cs, cparams["boundary"])), 0, g); perr != nil {
			return nil, perr
		}
	default:
		return bad("The batch's part must be a changeset (multipart/mixed with a boundary) or one query (application/http).")
	}
	if _, err := outer.NextPart(); err != io.EOF {
		return bad("A batch holds one changeset, or one query; this one holds more parts.")
	}
	return pb, nil
}

// splitChangeset returns the operations of a batch that is one changeset,
// split in memory, and how many there are, or false when the batch is
// anything else or takes the general reader.
func splitChangeset(body, boundary string) (func() (string, error), int, bool) {
	outer, ok := splitMultipart(body, boundary)
	if !ok || len(outer) != 1 {
		return nil, 0, false
	}
	cmt, cparams, err := mime.ParseMediaType(outer[0].header.Get("Content-Type"))
	if err != nil || cmt != "multipart/mixed" || cparams["boundary"] == "" {
		return nil, 0, false
	}
	ops, ok := splitMultipart(outer[0].body, cparams["boundary"])
	if !ok {
		return nil, 0, false
	}
	i := 0
	return func() (string, error) {
		if i == len(ops) {
			return "", io.EOF
		}
		i++
		return ops[i-1].body, nil
	}, len(ops), true
}

// readParts returns the contents of a multipart reader's parts, one per
// call, then io.EOF.
func readParts(r *multipart.Reader) func() (string, error) {
	return func() (string, error) {
		p, err := r.NextPart()
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("the changeset is not valid multipart: %w", err)
			}
			return "", err
		}
		var raw strings.Builder
		if _, err := io.Copy(&raw, p); err != nil {
			return "", fmt.Errorf("the changeset could not be read: %w", err)
		}
		return raw.String(), nil
	}
}

// parseChangeset reads into pb the operations subs holds, already read by
// readChangeset, or else those next returns; n is how many next returns,
// when known, or 0.
func (s *Server) parseChangeset(pb *parsedBatch, subs []subRequest, next func() (string, error), n int, g *grant) *tables.Error {
	if subs != nil {
		n = len(subs)
	}
	bad := func(format string, args ...any) *tables.Error {
		return tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf(format, args...))
	}
	at := func(e *tables.Error, i int) *tables.Error {
		e.Index = i
		return e
	}
	n = min(n, tables.MaxBatchOps)
	pb.ops, pb.noContent = slices.Grow(pb.ops[:0], n), slices.Grow(pb.noContent[:0], n)
	var scratch fields // an operation's headers, read anew into it for the next
	dec := odata.NewDecoder(n)
	var last changesetPrev
	for i := 0; ; i++ {
		var sub subRequest
		var raw string
		if subs != nil {
			if i == len(subs) {
				break
			}
			sub = subs[i]
		} else {
			var err error
			if raw, err = next(); err == io.EOF {
				break
			} else if err != nil {
				return bad("%s.", capitalize(err.Error()))
			}
		}
		if len(pb.ops) == tables.MaxBatchOps {
			return bad("The batch request operation exceeds the maximum 100 changes per change set.")
		}
		if subs == nil {
			var err error
			if sub, err = parseSubRequest(raw, scratch); err != nil {
				return bad("Operation %d of the changeset is not an HTTP request: %v.", i, err)
			}
		}
		if i == 0 || sub.path != last.path { // inserts all go to one path
			if perr := last.readPath(s, &sub); perr != nil {
				return at(perr, i)
			}
		}
		t, keys, hasKeys := last.t, last.keys, last.hasKeys
		// Most operations the one-walk reader reads share the one before's
		// headers; the general reader reads each into one reused array.
		if subs == nil || i == 0 || !sameFields(sub.header, last.header) {
			last.header = sub.header
			last.noContent = strings.Contains(sub.header.Get("Prefer"), "return-no-content")
			last.ifMatch = sub.header.Get("If-Match")
		}
		noContent, ifMatch := last.noContent, last.ifMatch
		op, act, oerr := changesetOp(sub.method, ifMatch, keys, hasKeys)
		if oerr != nil {
			return at(oerr, i)
		}
		if sub.method != http.MethodDelete {
			if derr := decodeEntity(dec, &op, sub.body, keys, hasKeys); derr != nil {
				return at(derr, i)
			}
		}
		// Authorization holds for every operation of a batch, each on its own
		// table and keys; the request as a whole is refused.
		if aerr := g.authorize(act, t, op.Entity.PartitionKey, op.Entity.RowKey); aerr != nil {
			return aerr
		}
		if pb.table == "" {
			pb.table = strings.Clone(t)
		} else if !strings.EqualFold(pb.table, t) {
			return bad("All operations of a batch must be on one table: %s and %s.", pb.table, t)
		}
		pb.ops, pb.noContent = append(pb.ops, op), append(pb.noContent, noContent)
		scratch = sub.header
	}
	if len(pb.ops) == 0 {
		return bad("The batch request contains no operations.")
	}
	return nil
}

// changesetPrev is the path and headers of a changeset's operation before,
// and what they read as: most operations repeat them.
type changesetPrev struct {
	path, t   string
	keys      [2]string
	hasKeys   bool
	header    fields
	noContent bool
	ifMatch   string
}

// readPath reads the table and keys sub's path names.
func (p *changesetPrev) readPath(s *Server, sub *subRequest) *tables.Error {
	res, rerr := s.subResource(sub)
	if rerr != nil {
		return rerr
	}
	var perr *tables.Error
	if p.t, p.keys, p.hasKeys, perr = parseEntityPath(res); perr != nil {
		return perr
	}
	// Keys are slices of the body, which is reused once the batch is
	// answered; an operation keeps copies.
	p.keys = [2]string{strings.Clone(p.keys[0]), strings.Clone(p.keys[1])}
	p.path = sub.path
	return nil
}

// changesetOp is the operation a changeset's request makes, by its method,
// whether its URL names keys, and its If-Match, and the permission it needs;
// for a delete it also holds the entity's keys.
func changesetOp(method, ifMatch string, keys [2]string, hasKeys bool) (tables.BatchOp, action, *tables.Error) {
	bad := func(format string, args ...any) (tables.BatchOp, action, *tables.Error) {
		return tables.BatchOp{}, 0, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf(format, args...))
	}
	var op tables.BatchOp
	act := actUpdate
	switch method {
	case http.MethodPost:
		if hasKeys {
			return bad("An insert is a POST to the table, without keys in the URL.")
		}
		op.Kind, act = tables.BatchInsert, actInsert
	case http.MethodPut, http.MethodPatch, "MERGE":
		if !hasKeys {
			return bad("An update names its entity in the URL.")
		}
		switch {
		case method == http.MethodPut && ifMatch == "":
			op.Kind, act = tables.BatchUpsertReplace, actUpsert
		case method == http.MethodPut:
			op.Kind = tables.BatchUpdateReplace
		case ifMatch == "":
			op.Kind, act = tables.BatchUpsertMerge, actUpsert
		default:
			op.Kind = tables.BatchUpdateMerge
		}
	case http.MethodDelete:
		if !hasKeys {
			return bad("A delete names its entity in the URL.")
		}
		if ifMatch == "" {
			return bad("A delete needs If-Match: \"*\" or the entity's ETag.")
		}
		op.Kind, act = tables.BatchDelete, actDelete
		op.Entity = tables.Entity{PartitionKey: keys[0], RowKey: keys[1]}
	case http.MethodGet:
		return bad("A query cannot be part of a changeset: send it alone in its batch.")
	default:
		return bad("%s is not an operation a changeset can hold.", method)
	}
	op.IfMatch = strings.Clone(ifMatch) // only tags: nothing a parse returns shares the body
	return op, act, nil
}

// decodeEntity reads into op the entity a changeset's request body holds,
// whose keys must be those its URL names, if it names them.
func decodeEntity(dec *odata.Decoder, op *tables.BatchOp, body string, keys [2]string, hasKeys bool) *tables.Error {
	var urlKeys *[2]string
	if hasKeys {
		urlKeys = &keys
	}
	ent, derr := dec.Decode(readOnly(body), urlKeys)
	if derr != nil {
		return derr
	}
	if hasKeys && (ent.PartitionKey != keys[0] || ent.RowKey != keys[1]) {
		return tables.BadRequest(tables.CodeInvalidInput, "The keys in the operation's body do not match its URL.")
	}
	op.Entity = ent
	return nil
}

func (s *Server) batch(q *request, g *grant) {
	body, ok := s.readBody(q)
	if !ok {
		return
	}
	pb, perr := s.parseBatch(header(q.r, "Content-Type"), body, g)
	if perr != nil {
		if perr.Index >= 0 {
			s.batchFailure(q, perr)
		} else {
			s.fail(q, perr)
		}
		return
	}
	if pb.query != nil {
		s.batchQuery(q, g, pb.query)
		return
	}
	ops, table := pb.ops, pb.table
	if len(ops) > 0 && s.point(q, faults.OpBatch, table, ops[0].Entity.PartitionKey) {
		return
	}
	defer pb.release()
	stored, err := s.e.Client(q.call).BatchAppend(q.r.Context(), table, ops, pb.stored[:0])
	pb.stored = stored
	if err != nil {
		if e, isEngine := tables.AsError(err); isEngine && e.Index >= 0 {
			s.batchFailure(q, e)
			return
		}
		s.failErr(q, err)
		return
	}
	// The response is written in one buffer, sized for the entities it
	// returns: a batch of 100 inserts is most of what the served engine
	// writes, and per-part buffers and formatting were most of its cost.
	size := 1024
	for i := range stored {
		size += 512 + 2*len(stored[i].RowKey) + len(q.base) + len(table)
		for _, p := range stored[i].Properties {
			if v, ok := p.Value.(string); ok {
				size += len(v) + len(p.Name) + 8
			}
		}
	}
	w := s.newBatchWriter(size)
	var ts time.Time
	var etagLine, location, id string // the batch's ETag header, and its entities' URLs up to their RowKeys
	for i, op := range ops {
		ent := &stored[i]
		if etagLine == "" || !ent.Timestamp.Equal(ts) { // one timestamp for the whole batch
			ts, etagLine = ent.Timestamp, "ETag: "+ent.ETag()+"\r\n"
		}
		if location == "" { // a changeset has one PartitionKey
			prefix := entityURLPrefix(q.base, table, ent.PartitionKey)
			location, id = "Location: "+prefix, "')\r\nDataServiceId: "+prefix
		}
		b := w.part()
		insert := op.Kind == tables.BatchInsert
		withBody := insert && !pb.noContent[i]
		b.WriteString(partStatus[b2i(withBody)][b2i(pb.noContent[i])])
		if insert {
			// Written piece by piece: a concatenation is a string per part.
			key := urlKey(ent.RowKey)
			b.WriteString(location)
			b.WriteString(key)
			b.WriteString(id)
			b.WriteString(key)
			b.WriteString("')\r\n")
		}
		if op.Kind != tables.BatchDelete {
			b.WriteString(etagLine)
		}
		if withBody {
			b.WriteString("Content-Type: " + s.contentType(odata.MinimalMetadata) + "\r\n\r\n")
			odata.WriteEntity(b, ent, odata.MinimalMetadata, q.base, s.cfg.Account, table, true, nil)
		}
		b.WriteString("\r\n")
	}
	w.send(q)
}

// batchQuery answers a batch that holds one query: a point get or a query
// of a table, answered as one application/http part of the batch response.
func (s *Server) batchQuery(q *request, g *grant, sub *subRequest) {
	res, rerr := s.subResource(sub)
	if rerr != nil {
		s.fail(q, rerr)
		return
	}
	table, keys, hasKeys, perr := parseEntityPath(res)
	if perr != nil {
		s.fail(q, perr)
		return
	}
	inner := &request{w: q.w, r: q.r, id: q.id, base: q.base, version: q.version, meta: odata.MinimalMetadata}
	if strings.Contains(sub.header.Get("Accept")+sub.query().Get("$format"), "nometadata") {
		inner.meta = odata.NoMetadata
	} else if strings.Contains(sub.header.Get("Accept")+sub.query().Get("$format"), "fullmetadata") {
		inner.meta = odata.FullMetadata
	}
	var status = http.StatusOK
	var body []byte
	var extra string
	var fail *tables.Error
	op, pk := faults.OpQuery, filterPK(sub.query().Get("$filter"))
	if hasKeys {
		op, pk = faults.OpGet, keys[0]
	}
	if s.point(q, op, table, pk) {
		return
	}
	if hasKeys {
		if fail = g.authorize(actRead, table, keys[0], keys[1]); fail == nil {
			sel := selectList(sub.query().Get("$select"))
			ent, err := s.e.Client(q.call).Get(q.r.Context(), table, keys[0], keys[1], sel)
			if err != nil {
				fail = serviceError(err)
			} else {
				var b bytes.Buffer
				odata.WriteEntity(&b, &ent, inner.meta, q.base, s.cfg.Account, table, true, sel)
				body, extra = b.Bytes(), "ETag: "+ent.ETag()+"\r\n"
			}
		}
	} else if fail = g.authorize(actQuery, table, "", ""); fail == nil {
		page, sel, err := s.queryPage(inner, g, table, sub.query())
		if err != nil {
			fail = err
		} else {
			body = s.pageJSON(inner, g, table, page, sel)
			if c := page.Continuation; c != nil {
				extra = "x-ms-continuation-NextPartitionKey: " + tables.EncodeToken(c.PartitionKey) + "\r\n"
				if c.RowKey != "" {
					extra += "x-ms-continuation-NextRowKey: " + tables.EncodeToken(c.RowKey) + "\r\n"
				}
			}
		}
	}
	ctype := s.contentType(inner.meta)
	if fail != nil {
		if fail.Status == http.StatusForbidden {
			s.fail(q, fail)
			return
		}
		status, body, extra, ctype = fail.Status, errorBody(fail, q.id), "", s.contentType(odata.MinimalMetadata)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n%sContent-Type: %s\r\n\r\n", status, http.StatusText(status), extra, ctype)
	b.Write(body)
	b.WriteString("\r\n")
	outer := "batchresponse_" + uuid.NewString()
	var out bytes.Buffer
	fmt.Fprintf(&out, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", outer)
	out.Write(b.Bytes())
	fmt.Fprintf(&out, "--%s--\r\n", outer)
	q.w.Header().Set("Content-Type", "multipart/mixed; boundary="+outer)
	q.w.WriteHeader(http.StatusAccepted)
	q.w.Write(out.Bytes())
}

// batchFailure answers a failed changeset as the service does: 202, one
// changeset part with the failing operation's status and an error message
// that starts with its 0-based index.
func (s *Server) batchFailure(q *request, e *tables.Error) {
	w := s.newBatchWriter(1024)
	fmt.Fprintf(w.part(), "HTTP/1.1 %d %s\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nContent-Type: %s\r\n\r\n",
		e.Status, http.StatusText(e.Status), s.contentType(odata.MinimalMetadata))
	w.b.Write(errorBody(e, q.id))
	w.b.WriteString("\r\n")
	w.send(q)
}

// batchWriter writes a changeset's response: one part per operation, in
// one buffer.
type batchWriter struct {
	b            *bytes.Buffer
	outer, inner string
	head         string // a part's delimiter and headers, after the CRLF that ends the part before
	parts        int
}

// partStatus is an operation's status line and the headers every answer
// has, by whether it returns its entity and whether it asked for none.
var partStatus = func() (t [2][2]string) {
	for body := range 2 {
		for noContent := range 2 {
			status := "HTTP/1.1 204 No Content\r\n"
			if body == 1 {
				status = "HTTP/1.1 201 Created\r\n"
			}
			pref := ""
			if noContent == 1 {
				pref = "Preference-Applied: return-no-content\r\n"
			}
			t[body][noContent] = status + "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n" + pref + "DataServiceVersion: 3.0;\r\n"
		}
	}
	return t
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) newBatchWriter(size int) *batchWriter {
	w := &batchWriter{b: bodies.Get().(*bytes.Buffer), outer: "batchresponse_" + uuid.NewString(), inner: "changesetresponse_" + uuid.NewString()}
	w.b.Reset()
	w.b.Grow(size)
	w.b.WriteString("--" + w.outer + "\r\nContent-Type: multipart/mixed; boundary=" + w.inner + "\r\n\r\n")
	w.head = "\r\n--" + w.inner + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
	return w
}

// part starts the next operation's part and returns the buffer to write
// its HTTP response in.
func (w *batchWriter) part() *bytes.Buffer {
	if w.parts > 0 {
		w.b.WriteString(w.head) // the CRLF before a delimiter belongs to it, not to the part
	} else {
		w.b.WriteString(w.head[2:])
	}
	w.parts++
	return w.b
}

// send ends the changeset and the batch and writes the response.
func (w *batchWriter) send(q *request) {
	if w.parts > 0 {
		w.b.WriteString("\r\n")
	}
	w.b.WriteString("--" + w.inner + "--\r\n--" + w.outer + "--\r\n")
	h := q.w.Header()
	h.Set("Content-Type", "multipart/mixed; boundary="+w.outer)
	// Its length is known: the response goes out in one write, not in
	// chunks and a closing chunk.
	h["Content-Length"] = []string{strconv.Itoa(w.b.Len())}
	q.w.WriteHeader(http.StatusAccepted)
	q.w.Write(w.b.Bytes())
	if w.b.Cap() <= maxPooledBody { // written: response writers copy what they are given
		bodies.Put(w.b)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
