package rest

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// Timeouts bound how long a client may hold a connection without making
// progress, so slow or stalled clients cannot pile up.
type Timeouts struct {
	Header time.Duration // to send the request line and headers
	Body   time.Duration // then to send the body
	Write  time.Duration // to read the response, from the end of the headers
	Idle   time.Duration // between requests on a kept-alive connection
}

// DefaultTimeouts are generous for any client on a working network: the
// largest body, 4 MiB, takes a second at 32 Mbit/s.
func DefaultTimeouts() Timeouts {
	return Timeouts{Header: 10 * time.Second, Body: 60 * time.Second, Write: 2 * time.Minute, Idle: 2 * time.Minute}
}

// MaxHeaderBytes bounds the request line and headers: a URL with the longest
// keys and a $filter of 15 comparisons fits many times over.
const MaxHeaderBytes = 256 << 10

// MaxURLBytes bounds a request's URL as sent (path and query string): twice
// what the longest keys, percent-encoded, and a $filter of 15 comparisons
// of long strings take.
const MaxURLBytes = 64 << 10

// readHeaderBytes is how much of a request line and headers net/http reads
// before it gives up and answers a plain-text 431 of its own, before any
// handler runs. It is set above MaxHeaderBytes so that the handler sees
// every request up to four times over the limits and answers it in the
// service's error form (oversized); only a request beyond that gets
// net/http's answer.
const readHeaderBytes = 4 * MaxHeaderBytes

// oversized refuses a request whose URL or headers are over the limits, in
// the service's error form with x-ms-error-code. The service documents no
// error code for either: its front end answers a long URL with a bare 414.
// The statuses are HTTP's own (414 URI Too Long, 431 Request Header Fields
// Too Large), which clients classify by; the codes are named as the
// service names RequestBodyTooLarge, so that SDKs, which read every
// failure's code, get one.
func oversized(r *http.Request) *tables.Error {
	if len(r.RequestURI) > MaxURLBytes {
		return tables.NewError(http.StatusRequestURITooLong, "RequestUrlTooLong", "The request URL is "+strconv.Itoa(len(r.RequestURI))+" bytes, over the limit of "+strconv.Itoa(MaxURLBytes>>10)+" KiB: send fewer or shorter query options.")
	}
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	if n > MaxHeaderBytes {
		return tables.NewError(http.StatusRequestHeaderFieldsTooLarge, "RequestHeaderTooLarge", "The request line and headers are "+strconv.Itoa(n)+" bytes, over the limit of "+strconv.Itoa(MaxHeaderBytes>>10)+" KiB.")
	}
	return nil
}

// HTTPServer returns an http.Server that serves s with the given timeouts.
func (s *Server) HTTPServer(t Timeouts) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: t.Header,
		ReadTimeout:       t.Header + t.Body,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    readHeaderBytes,
	}
}
