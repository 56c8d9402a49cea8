package aztarget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablebench/tablebench/tables"
)

// convert turns an SDK error into a *tables.Error carrying the service's
// status, code and message, so that it is counted exactly as the engine's
// would be. Other errors (transport failures) are returned with secrets
// removed. batch says the request was an entity group transaction, whose
// failures come back as 202 with the failing operation inside the body.
func (t *Target) convert(err error, batch bool) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return &redactedError{msg: t.redact(err.Error()), err: err}
	}
	var body []byte
	if re.RawResponse != nil {
		body, _ = runtime.Payload(re.RawResponse)
	}
	if batch && (re.StatusCode == 202 || re.StatusCode == 204) {
		if e := parseBatchFailure(body); e != nil {
			e.Message = t.redact(e.Message)
			return e
		}
		return &tables.Error{Status: re.StatusCode, Code: CodeMalformedResponse, Index: -1, Message: "the batch failed but its response names no failing operation"}
	}
	code, msg := odataError(body)
	if code == "" {
		code = re.ErrorCode
	}
	if code == "" && re.StatusCode == 503 {
		code = tables.CodeServerBusy
	}
	if msg == "" {
		msg = strconv.Itoa(re.StatusCode) + " " + http.StatusText(re.StatusCode) + " with no error body"
	}
	return tables.NewError(re.StatusCode, code, t.redact(msg))
}

// redactedError is a transport error whose text had secrets removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Unwrap lets errors.Is see timeouts and cancellations.
func (e *redactedError) Unwrap() error { return e.err }

// odataError reads the service's JSON error body,
// {"odata.error":{"code":"X","message":{"value":"msg\nRequestId:..."}}}.
func odataError(body []byte) (code, msg string) {
	var v struct {
		OData struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
		Err struct { // the Cosmos DB Table API's form
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	if v.OData.Code != "" {
		return v.OData.Code, firstLine(v.OData.Message.Value)
	}
	return v.Err.Code, firstLine(v.Err.Message)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

var (
	innerStatus = regexp.MustCompile(`(?m)^HTTP/1\.[01] (\d{3})`)
	indexPrefix = regexp.MustCompile(`^(\d+):(.*)$`)
)

// parseBatchFailure reads a failed batch's multipart body: the changeset
// part of the failing operation carries its own status line and an error
// whose message starts with the operation's 0-based index, "2:The
// specified entity already exists.".
func parseBatchFailure(body []byte) *tables.Error {
	for _, m := range innerStatus.FindAllSubmatchIndex(body, -1) {
		status, _ := strconv.Atoi(string(body[m[2]:m[3]]))
		if status < 400 {
			continue
		}
		e := &tables.Error{Status: status, Index: -1}
		rest := body[m[1]:]
		if i := bytes.IndexByte(rest, '{'); i >= 0 {
			if j := bytes.Index(rest[i:], []byte("\n--")); j >= 0 {
				rest = rest[i : i+j]
			} else {
				rest = rest[i:]
			}
			code, msg := odataError(bytes.TrimSpace(rest))
			e.Code = code
			if sm := indexPrefix.FindStringSubmatch(msg); sm != nil {
				e.Index, _ = strconv.Atoi(sm[1])
				msg = sm[2]
			}
			e.Message = msg
		}
		if e.Code == "" {
			e.Code = "HTTP" + strconv.Itoa(status)
		}
		return e
	}
	return nil
}
