package rest

import (
	"net/http"
	"time"
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

// HTTPServer returns an http.Server that serves s with the given timeouts.
func (s *Server) HTTPServer(t Timeouts) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: t.Header,
		ReadTimeout:       t.Header + t.Body,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
