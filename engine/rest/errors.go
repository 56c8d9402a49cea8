package rest

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// Errors in the service's form: a status, an x-ms-error-code header and an
// odata.error JSON body whose message ends with the request ID and time.

// fail writes an error in the service's JSON form.
func (s *Server) fail(q *request, err *tables.Error) {
	h := q.w.Header()
	h.Set("Content-Type", s.contentType(odata.MinimalMetadata))
	h.Set("x-ms-error-code", err.Code)
	if err.RetryAfter > 0 {
		h.Set(HeaderRetryAfterMs, strconv.FormatInt(max(err.RetryAfter.Milliseconds(), 1), 10))
	}
	q.w.WriteHeader(err.Status)
	q.w.Write(errorBody(err, q.id))
}

// failXML answers err in the storage services' XML error form, which the
// service uses where no Table service answers, as for an account that does
// not exist.
func (s *Server) failXML(q *request, err *tables.Error) {
	h := q.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("x-ms-error-code", err.Code)
	q.w.WriteHeader(err.Status)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<Error><Code>")
	xml.EscapeText(&b, []byte(err.Code))
	b.WriteString("</Code><Message>")
	xml.EscapeText(&b, []byte(err.Message+"\nRequestId:"+q.id+"\nTime:"+tables.FormatTimestamp(time.Now())))
	b.WriteString("</Message></Error>")
	q.w.Write(b.Bytes())
}

func errorBody(err *tables.Error, requestID string) []byte {
	msg := err.Message
	if err.Index >= 0 {
		msg = strconv.Itoa(err.Index) + ":" + msg
	}
	var b bytes.Buffer
	b.WriteString(`{"odata.error":{"code":`)
	odata.WriteString(&b, err.Code)
	b.WriteString(`,"message":{"lang":"en-US","value":`)
	odata.WriteString(&b, msg+"\nRequestId:"+requestID+"\nTime:"+tables.FormatTimestamp(time.Now()))
	b.WriteString("}}}")
	return b.Bytes()
}

func (s *Server) notAllowed(q *request) {
	s.fail(q, tables.NewError(http.StatusMethodNotAllowed, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb "+q.r.Method+"."))
}

// respondErr answers err, or status with no body.
func (s *Server) respondErr(q *request, err error, status int) {
	if err != nil {
		s.failErr(q, err)
		return
	}
	q.w.WriteHeader(status)
}

// failErr answers any error of the engine in the service's form.
func (s *Server) failErr(q *request, err error) { s.fail(q, serviceError(err)) }

// serviceError is the service's answer for an engine call's error: the
// engine's own answer, a 500 timeout for a context that ended, or a 500
// internal error.
func serviceError(err error) *tables.Error {
	if e, ok := tables.AsError(err); ok {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return tables.NewError(500, tables.CodeOperationTimedOut, tables.MsgTimedOut)
	}
	return errInternal()
}

func errInternal() *tables.Error {
	return tables.NewError(500, tables.CodeInternalError, "The server encountered an internal error. Please retry the request.")
}
