package rest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine"
)

// batchOp is one parsed operation of a changeset.
type batchOp struct {
	op        engine.BatchOp
	noContent bool
}

// parseBatch reads a $batch body: one changeset of application/http parts.
// It returns the table and the operations, or the service's 400 answer.
func (s *Server) parseBatch(contentType string, body []byte) (string, []batchOp, *engine.Error) {
	bad := func(format string, args ...any) (string, []batchOp, *engine.Error) {
		return "", nil, badInput(engine.CodeInvalidInput, fmt.Sprintf(format, args...))
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return bad("The batch request's Content-Type must be multipart/mixed with a boundary.")
	}
	outer := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	cs, err := outer.NextPart()
	if err != nil {
		return bad("The batch request body is not valid multipart: %v.", err)
	}
	cmt, cparams, err := mime.ParseMediaType(cs.Header.Get("Content-Type"))
	if err != nil || cmt != "multipart/mixed" || cparams["boundary"] == "" {
		return bad("The batch must hold one changeset of Content-Type multipart/mixed with a boundary; queries in a batch are not supported.")
	}
	inner := multipart.NewReader(cs, cparams["boundary"])
	var table string
	var ops []batchOp
	var part bytes.Reader
	br := bufio.NewReader(&part) // one reader for every operation of the changeset
	for i := 0; ; i++ {
		p, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad("The changeset is not valid multipart: %v.", err)
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			return bad("The changeset could not be read: %v.", err)
		}
		if len(ops) == engine.MaxBatchOps {
			return bad("The batch request operation exceeds the maximum 100 changes per change set.")
		}
		part.Reset(raw)
		br.Reset(&part)
		req, err := http.ReadRequest(br)
		if err != nil {
			return bad("Operation %d of the changeset is not an HTTP request: %v.", i, err)
		}
		opBody, _ := io.ReadAll(req.Body)
		if m := req.Header.Get("X-HTTP-Method"); m != "" && req.Method == http.MethodPost {
			req.Method = m
		}
		path, err := url.PathUnescape(req.URL.EscapedPath())
		if err != nil {
			return bad("Operation %d has a URL that is not valid.", i)
		}
		_, res := s.route(req, path)
		if unescaped, err := url.PathUnescape(res); err == nil {
			res = unescaped
		}
		t, keys, hasKeys, perr := parseEntityPath(res)
		if perr != nil {
			perr.Index = i
			return "", nil, perr
		}
		if table == "" {
			table = t
		} else if !strings.EqualFold(table, t) {
			return bad("All operations of a batch must be on one table: %s and %s.", table, t)
		}
		op := batchOp{noContent: strings.Contains(req.Header.Get("Prefer"), "return-no-content")}
		ifMatch := req.Header.Get("If-Match")
		switch req.Method {
		case http.MethodPost:
			if hasKeys {
				return bad("Operation %d: an insert is a POST to the table, without keys in the URL.", i)
			}
			op.op.Kind = engine.BatchInsert
		case http.MethodPut, http.MethodPatch, "MERGE":
			if !hasKeys {
				return bad("Operation %d: an update names its entity in the URL.", i)
			}
			switch {
			case req.Method == http.MethodPut && ifMatch == "":
				op.op.Kind = engine.BatchUpsertReplace
			case req.Method == http.MethodPut:
				op.op.Kind = engine.BatchUpdateReplace
			case ifMatch == "":
				op.op.Kind = engine.BatchUpsertMerge
			default:
				op.op.Kind = engine.BatchUpdateMerge
			}
		case http.MethodDelete:
			if !hasKeys {
				return bad("Operation %d: a delete names its entity in the URL.", i)
			}
			if ifMatch == "" {
				e := badInput(engine.CodeInvalidInput, "A delete needs If-Match: \"*\" or the entity's ETag.")
				e.Index = i
				return "", nil, e
			}
			op.op.Kind = engine.BatchDelete
			op.op.Entity = engine.Entity{PartitionKey: keys[0], RowKey: keys[1]}
		default:
			return bad("Operation %d: %s is not an operation a changeset can hold; queries in a batch are not supported.", i, req.Method)
		}
		op.op.IfMatch = ifMatch
		if req.Method != http.MethodDelete {
			ent, derr := decodeEntity(opBody)
			if derr != nil {
				derr.Index = i
				return "", nil, derr
			}
			if hasKeys && (ent.PartitionKey != keys[0] || ent.RowKey != keys[1]) {
				return bad("Operation %d: the keys in its body do not match its URL.", i)
			}
			op.op.Entity = ent
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return bad("The batch request contains no operations.")
	}
	return table, ops, nil
}

func (s *Server) batch(q *request) {
	body, ok := s.readBody(q)
	if !ok {
		return
	}
	table, ops, perr := s.parseBatch(q.r.Header.Get("Content-Type"), body)
	if perr != nil {
		if perr.Index >= 0 {
			s.batchFailure(q, perr)
		} else {
			s.fail(q, perr)
		}
		return
	}
	eops := make([]engine.BatchOp, len(ops))
	for i := range ops {
		eops[i] = ops[i].op
	}
	stored, err := s.e.Batch(q.r.Context(), table, eops)
	if err != nil {
		if e, isEngine := engine.AsError(err); isEngine && e.Index >= 0 {
			s.batchFailure(q, e)
			return
		}
		s.failErr(q, err)
		return
	}
	var parts [][]byte
	for i, op := range ops {
		var b bytes.Buffer
		ent := stored[i]
		loc := fmt.Sprintf("%s/%s(PartitionKey='%s',RowKey='%s')", q.base, table, url.PathEscape(quoteKey(ent.PartitionKey)), url.PathEscape(quoteKey(ent.RowKey)))
		status := http.StatusNoContent
		var entBody bytes.Buffer
		if op.op.Kind == engine.BatchInsert && !op.noContent {
			status = http.StatusCreated
			entityJSON(&entBody, &ent, minimalMetadata, q.base, s.cfg.Account, table, true, nil)
		}
		fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n", status, http.StatusText(status))
		if op.noContent {
			b.WriteString("Preference-Applied: return-no-content\r\n")
		}
		b.WriteString("DataServiceVersion: 3.0;\r\n")
		if op.op.Kind == engine.BatchInsert {
			fmt.Fprintf(&b, "Location: %s\r\nDataServiceId: %s\r\n", loc, loc)
		}
		if op.op.Kind != engine.BatchDelete {
			fmt.Fprintf(&b, "ETag: %s\r\n", ent.ETag())
		}
		if entBody.Len() > 0 {
			fmt.Fprintf(&b, "Content-Type: %s\r\n\r\n", s.contentType(minimalMetadata))
			b.Write(entBody.Bytes())
			b.WriteString("\r\n")
		} else {
			b.WriteString("\r\n")
		}
		parts = append(parts, b.Bytes())
	}
	s.writeBatch(q, parts)
}

// batchFailure answers a failed changeset as the service does: 202, one
// changeset part with the failing operation's status and an error message
// that starts with its 0-based index.
func (s *Server) batchFailure(q *request, e *engine.Error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nContent-Type: %s\r\n\r\n",
		e.Status, http.StatusText(e.Status), s.contentType(minimalMetadata))
	b.Write(errorBody(e, q.id))
	b.WriteString("\r\n")
	s.writeBatch(q, [][]byte{b.Bytes()})
}

func (s *Server) writeBatch(q *request, parts [][]byte) {
	outer, inner := "batchresponse_"+uuid.NewString(), "changesetresponse_"+uuid.NewString()
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", outer, inner)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", inner)
		b.Write(p)
		b.WriteString("\r\n") // the CRLF before a boundary belongs to the boundary, not the part
	}
	fmt.Fprintf(&b, "--%s--\r\n--%s--\r\n", inner, outer)
	q.w.Header().Set("Content-Type", "multipart/mixed; boundary="+outer)
	q.w.WriteHeader(http.StatusAccepted)
	q.w.Write(b.Bytes())
}
