package rest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads/gctune"
)

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

// BenchmarkServeBatch is the served engine's whole work for a batch of 100
// inserts as the Go SDK sends them, 1 KiB entities, but the network's:
// reading the body, parsing, storing and writing the response, into an
// engine set up as `tablebench serve --profile none` sets it up, which
// keeps every entity, so its heap grows as a served engine's does. Each
// batch has RowKeys of its own. Its CPU per batch is what BenchmarkServers
// weighs against the canned server's.
func BenchmarkServeBatch(b *testing.B) {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit = engine.None(), engine.None().SteadySplit()
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.CreateTable(b.Context(), "perf1"); err != nil {
		b.Fatal(err)
	}
	s := New(e, Config{Account: DevAccount, Auth: AuthNone})
	const batchID, changeset = "batch_42199aa0-fba1-4273-4041-63002cfbb0b7", "changeset_2fa04a0d-e2c2-49cf-7562-fab25378421e"
	var body bytes.Buffer
	fmt.Fprintf(&body, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchID, changeset)
	var keyAt []int // where each operation's RowKey starts: 8 digits of the batch's number
	for i := range 100 {
		entity := fmt.Sprintf(`{"PartitionKey":"w01","Payload":"%s","RowKey":"00000000_%d"}`, strings.Repeat("x", 440), i)
		fmt.Fprintf(&body, "--%s\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n", changeset)
		fmt.Fprintf(&body, "POST http://127.0.0.1:43341/devstoreaccount1/perf1?%%24format=application%%2Fjson%%3Bodata%%3Dminimalmetadata HTTP/1.1\r\n")
		fmt.Fprintf(&body, "Accept: application/json;odata=minimalmetadata\r\nContent-Length: %d\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\nPrefer: return-no-content\r\nx-ms-version: 2019-02-02\r\n\r\n", len(entity))
		keyAt = append(keyAt, body.Len()+strings.Index(entity, "0000"))
		fmt.Fprintf(&body, "%s\r\n", entity)
	}
	fmt.Fprintf(&body, "--%s--\r\n\r\n--%s--\r\n", changeset, batchID)
	raw := body.Bytes()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:43341/devstoreaccount1/$batch", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+batchID)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json")
	req.ContentLength = int64(len(raw))
	defer gctune.Follow(time.Second)() // as tablebench serve collects
	w := &discardWriter{h: http.Header{}}
	r := bytes.NewReader(raw)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		var digits [8]byte
		for i, v := len(digits)-1, n; i >= 0; i, v = i-1, v/10 {
			digits[i] = byte('0' + v%10)
		}
		for _, at := range keyAt {
			copy(raw[at:], digits[:])
		}
		r.Reset(raw)
		req.Body = io.NopCloser(r)
		clear(w.h)
		w.status, w.n = 0, 0
		s.ServeHTTP(w, req)
		if w.status != http.StatusAccepted || w.n < 100*200 {
			b.Fatalf("batch %d: status %d, %d bytes", n, w.status, w.n)
		}
	}
}
