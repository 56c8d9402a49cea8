package rest

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/engine/odata"
	"github.com/tablebench/tablebench/engine/tables"
)

// Errors in the service's form: a status, an x-ms-error-code header and an
// odata.error JSON body whose message ends with the request ID and time.

// badInput is a 400 with the given code.
func badInput(code, msg string) *tables.Error {
	return &tables.Error{Status: http.StatusBadRequest, Code: code, Message: msg, Index: -1}
}

// fail writes an error in the service's JSON form.
func (s *Server) fail(q *request, err *tables.Error) {
	h := q.w.Header()
	h.Set("Content-Type", s.contentType(odata.MinimalMetadata))
	h.Set("x-ms-error-code", err.Code)
	q.w.WriteHeader(err.Status)
	q.w.Write(errorBody(err, q.id))
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
	s.fail(q, &tables.Error{Status: http.StatusMethodNotAllowed, Code: "UnsupportedHttpVerb", Message: "The resource doesn't support the specified HTTP verb " + q.r.Method + ".", Index: -1})
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
	if e, ok := tables.AsError(err); ok {
		s.fail(q, e)
		return
	}
	if err == context.Canceled || err == context.DeadlineExceeded {
		s.fail(q, &tables.Error{Status: 500, Code: tables.CodeOperationTimedOut, Message: tables.MsgTimedOut, Index: -1})
		return
	}
	s.fail(q, &tables.Error{Status: 500, Code: tables.CodeInternalError, Message: "The server encountered an internal error. Please retry the request.", Index: -1})
}
