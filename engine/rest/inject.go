package rest

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/tables"
)

// FaultHeader asks for a fault on its own request, when the server allows
// it (Config.AllowFaultHeader); see faults.ParseHeader for its form.
const FaultHeader = "x-tablebench-fault"

// faultHeaderKey is FaultHeader as net/http stores it: looking a header up
// by another form canonicalizes it into a new string every time.
var faultHeaderKey = textproto.CanonicalMIMEHeaderKey(FaultHeader)

// point marks where a request's operation, table and PartitionKey are
// known, before the engine serves it. It records the operation for the
// metrics and applies a fault, from the request's header or the rules; it
// returns true when the fault answered the request and the handler must
// stop.
func (s *Server) point(q *request, op, table, pk string) bool {
	if q.op != "" { // one point per request: a batch's query has passed one already
		return false
	}
	q.op = op
	rule, ok := q.header, q.hasHeader
	if !ok && s.cfg.Faults != nil {
		rule, ok = s.cfg.Faults.Match(faults.Request{Op: op, Table: table, PartitionKey: pk})
	}
	if !ok {
		return false
	}
	kind := rule.Kind()
	q.injected = kind
	if s.cfg.Faults != nil {
		s.cfg.Faults.Count(kind)
	}
	switch kind {
	case faults.KindStatus:
		status, code, msg := rule.StatusText()
		s.fail(q, tables.NewError(status, code, msg))
		return true
	case faults.KindDelay:
		t := time.NewTimer(time.Duration(rule.Delay))
		defer t.Stop()
		select {
		case <-t.C:
			return false
		case <-q.r.Context().Done(): // the client gave up
			return true
		}
	case faults.KindReset:
		reset(q)
		return true
	case faults.KindTruncate:
		q.trunc = &truncating{ResponseWriter: q.w, status: http.StatusOK}
		q.w = q.trunc
	case faults.KindUnavailable:
		if table != "" {
			if err := s.e.MakeUnavailable(table, pk, time.Duration(rule.Unavailable)); err != nil {
				s.failErr(q, err)
				return true
			}
		}
	}
	return false
}

// reset closes the request's connection with a TCP reset and answers
// nothing, as a connection dropped by a failing front end. Where the
// connection cannot be taken over (HTTP/2), the stream is aborted.
func reset(q *request) {
	conn, _, err := http.NewResponseController(q.w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0) // close sends RST, not FIN
	}
	conn.Close()
}

// truncating holds a response back so it can be sent cut short: its full
// length is declared, half of its body is sent, and the connection is
// closed, as when a server dies mid-response.
type truncating struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (t *truncating) WriteHeader(status int)      { t.status = status }
func (t *truncating) Write(p []byte) (int, error) { t.body = append(t.body, p...); return len(p), nil }
func (t *truncating) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// send writes the response cut short and aborts the connection.
func (t *truncating) send() {
	n := len(t.body)
	declared := max(n, 1) // an empty body is cut short by promising a byte
	t.ResponseWriter.Header().Set("Content-Length", strconv.Itoa(declared))
	t.ResponseWriter.WriteHeader(t.status)
	t.ResponseWriter.Write(t.body[:n/2])
	http.NewResponseController(t.ResponseWriter).Flush()
	panic(http.ErrAbortHandler)
}

func parseFaultHeader(v string) (faults.Rule, *tables.Error) {
	rule, err := faults.ParseHeader(v)
	if err != nil {
		return rule, tables.BadRequest("InvalidHeaderValue", err.Error())
	}
	return rule, nil
}
