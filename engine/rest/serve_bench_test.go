package rest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// The BenchmarkServe benchmarks are the served engine's whole work for a
// request as the Go SDK sends it, signed, 1 KiB entities, but the
// network's: authenticating, reading the body, parsing, storing and
// writing the response, into an engine set up as `tablebench serve
// --profile none` sets it up, which keeps every entity, so its heap grows
// as a served engine's does. Their CPU per operation is the served
// engine's share of what BenchmarkServers weighs against the canned
// server's, without the noise of a client on the same machine.

// discardWriter is a ResponseWriter that keeps the status and the length
// of what is written, and no bytes.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// benchServer returns a served engine with the table perf1, checking
// shared keys. It collects at Go's default target, which tablebench serve
// keeps once its heap passes 256 MiB, so that releases built before
// gctune compare on equal terms.
func benchServer(b *testing.B) *Server {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit = engine.None(), engine.None().SteadySplit()
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.CreateTable(b.Context(), "perf1"); err != nil {
		b.Fatal(err)
	}
	return New(e, Config{Account: DevAccount, Key: devKey(b)})
}

func devKey(b *testing.B) []byte {
	key, err := base64.StdEncoding.DecodeString(DevKey)
	if err != nil {
		b.Fatal(err)
	}
	return key
}

// sdkRequest returns a request as the Go SDK sends it, with contentType
// ("" for none), signed for every body: a SharedKey signature covers the
// Content-Type, and none of the body.
func sdkRequest(b *testing.B, method, url, contentType string, size int) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.ContentLength = int64(size)
	SignRequest(req, DevAccount, devKey(b))
	return req
}

// putDigits writes n into dst as decimal digits, zero-padded to its length.
func putDigits(dst []byte, n int) {
	for i := len(dst) - 1; i >= 0; i, n = i-1, n/10 {
		dst[i] = byte('0' + n%10)
	}
}

// serveLoop serves the request next returns for each iteration's number
// and fails unless the answer has the status and at least least bytes.
func serveLoop(b *testing.B, s *Server, next func(n int) *http.Request, status, least int) {
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		req := next(n)
		clear(w.h)
		w.status, w.n = 0, 0
		s.ServeHTTP(w, req)
		if w.status != status || w.n < least {
			b.Fatalf("request %d: status %d, %d bytes", n, w.status, w.n)
		}
	}
}

// withBody returns req, to be served with raw as its body after change
// has written the iteration's number into raw.
func withBody(b *testing.B, req *http.Request, raw []byte, change func(n int)) func(n int) *http.Request {
	r := bytes.NewReader(raw)
	b.SetBytes(int64(len(raw)))
	return func(n int) *http.Request {
		change(n)
		r.Reset(raw)
		req.Body = io.NopCloser(r)
		return req
	}
}

// HarnessPayloads returns n payloads of 440 random letters and digits, as
// a tablebench thread writes them: a few, over and over. It is exported
// for BenchmarkServers, in package rest_test.
func HarnessPayloads(n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(1, 2))
	var ps []string
	for range n {
		b := make([]byte, 440)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		ps = append(ps, string(b))
	}
	return ps
}

// payloadLoads are the two kinds of load the write benchmarks run: values
// as tablebench writes them, eight per thread over and over, which the
// served engine stores once each; and values that never repeat, each
// stored on its own.
var payloadLoads = []struct {
	name   string
	unique bool
}{{"payloads=harness", false}, {"payloads=unique", true}}

// reportHeap reads the heap now; the function it returns reports, as
// heap-B/entity, how much it has grown by then for each of the entities
// stored returns, s being the server that keeps them.
func reportHeap(b *testing.B, s *Server, stored func() int) func() {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	return func() {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(stored()), "heap-B/entity")
	}
}

// BenchmarkServeBatch serves batches of 100 inserts, each with RowKeys of
// its own.
func BenchmarkServeBatch(b *testing.B) {
	for _, load := range payloadLoads {
		b.Run(load.name, func(b *testing.B) {
			s := benchServer(b)
			const batchID, changeset = "batch_42199aa0-fba1-4273-4041-63002cfbb0b7", "changeset_2fa04a0d-e2c2-49cf-7562-fab25378421e"
			payloads := HarnessPayloads(8)
			var body bytes.Buffer
			fmt.Fprintf(&body, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchID, changeset)
			var keyAt, payloadAt []int // where each operation's RowKey and payload start
			for i := range 100 {
				entity := fmt.Sprintf(`{"PartitionKey":"w01","Payload":"%s","RowKey":"00000000_%d"}`, payloads[i%len(payloads)], i)
				fmt.Fprintf(&body, "--%s\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n", changeset)
				fmt.Fprintf(&body, "POST http://127.0.0.1:43341/devstoreaccount1/perf1?%%24format=application%%2Fjson%%3Bodata%%3Dminimalmetadata HTTP/1.1\r\n")
				fmt.Fprintf(&body, "Accept: application/json;odata=minimalmetadata\r\nContent-Length: %d\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\nPrefer: return-no-content\r\nx-ms-version: 2019-02-02\r\n\r\n", len(entity))
				keyAt = append(keyAt, body.Len()+strings.Index(entity, "0000"))
				payloadAt = append(payloadAt, body.Len()+strings.Index(entity, `"Payload":"`)+len(`"Payload":"`))
				fmt.Fprintf(&body, "%s\r\n", entity)
			}
			fmt.Fprintf(&body, "--%s--\r\n\r\n--%s--\r\n", changeset, batchID)
			raw := body.Bytes()
			req := sdkRequest(b, http.MethodPost, "http://127.0.0.1:43341/devstoreaccount1/$batch", "multipart/mixed; boundary="+batchID, len(raw))
			defer reportHeap(b, s, func() int { return 100 * b.N })()
			serveLoop(b, s, withBody(b, req, raw, func(n int) {
				for i, at := range keyAt {
					putDigits(raw[at:at+8], n)
					if load.unique { // and each value one of its own
						putDigits(raw[payloadAt[i]:payloadAt[i]+12], 100*n+i)
					}
				}
			}), http.StatusAccepted, 100*200)
		})
	}
}

// BenchmarkServeInsert serves single inserts, answered with their entity
// (the SDK asks for it).
func BenchmarkServeInsert(b *testing.B) {
	for _, load := range payloadLoads {
		b.Run(load.name, func(b *testing.B) {
			s := benchServer(b)
			payloads := HarnessPayloads(8)
			raw := []byte(`{"PartitionKey":"w01","Payload":"` + payloads[0] + `","RowKey":"00000000"}`)
			payloadAt := len(`{"PartitionKey":"w01","Payload":"`)
			keyAt := len(raw) - len(`00000000"}`)
			req := sdkRequest(b, http.MethodPost, "http://127.0.0.1:43341/devstoreaccount1/perf1", "application/json", len(raw))
			defer reportHeap(b, s, func() int { return b.N })()
			serveLoop(b, s, withBody(b, req, raw, func(n int) {
				putDigits(raw[keyAt:keyAt+8], n)
				copy(raw[payloadAt:], payloads[n%len(payloads)])
				if load.unique {
					putDigits(raw[payloadAt:payloadAt+8], n)
				}
			}), http.StatusCreated, 400)
		})
	}
}

// BenchmarkServeGet serves point gets of 1,000 entities.
func BenchmarkServeGet(b *testing.B) {
	s := benchServer(b)
	payload := tables.String("Payload", strings.Repeat("x", 440))
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		rk := fmt.Sprintf("r%04d", i)
		if _, err := s.e.Client(nil).Insert(b.Context(), "perf1", tables.Entity{PartitionKey: "g", RowKey: rk, Properties: []tables.Property{payload}}); err != nil {
			b.Fatal(err)
		}
		reqs[i] = sdkRequest(b, http.MethodGet, "http://127.0.0.1:43341/devstoreaccount1/perf1(PartitionKey='g',RowKey='"+rk+"')", "", 0)
	}
	serveLoop(b, s, func(n int) *http.Request { return reqs[n*37%1000] }, http.StatusOK, 400)
}
