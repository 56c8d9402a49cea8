package rest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// FuzzPlainHeaders checks the operation header reader against textproto:
// whatever it accepts, textproto reads to the same headers.
func FuzzPlainHeaders(f *testing.F) {
	for _, s := range []string{
		"Accept: application/json;odata=minimalmetadata\r\nContent-Length: 48\r\nContent-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n",
		"If-Match: *\nX-HTTP-Method: MERGE", "a: b\r\n c", "Bad Name: x", "x-a: 1\r\nX-A: 2", ": v", "k:\tv \t", "k: v\x00", "\r\n\r\n", "k: v\r\n\r\nbody",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := plainHeaders(text, nil)
		if !ok {
			return
		}
		want, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append([]byte(text), "\r\n\r\n"...)))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("%q: read as %v, which textproto refuses: %v", text, got, err)
		}
		// The same values under every name, in the same order.
		read := got.mime()
		if len(read) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(read, want) {
			t.Fatalf("%q: read as %v, textproto reads %v", text, got, want)
		}
		for name, vs := range want {
			if v := got.Get(name); v != vs[0] {
				t.Fatalf("%q: Get(%q) = %q, want %q", text, name, v, vs[0])
			}
		}
	})
}

// TestRequestIDs checks that request IDs are GUIDs, distinct, and carry
// the counter in their last twelve hex digits.
func TestRequestIDs(t *testing.T) {
	s := New(nil, Config{})
	seen := map[string]bool{}
	for i := 1; i <= 1000; i++ {
		ids := s.requestID()
		if len(ids) != 1 {
			t.Fatalf("request ID header value %q, want one ID", ids)
		}
		id := ids[0]
		u, err := uuid.Parse(id)
		if err != nil || u.String() != id || seen[id] {
			t.Fatalf("request id %q: %v, seen before %v", id, err, seen[id])
		}
		seen[id] = true
		if want := fmt.Sprintf("%012x", i); id[24:] != want {
			t.Fatalf("request id %q ends %q, want %q", id, id[24:], want)
		}
	}
}

// mime returns the fields as textproto holds headers, to compare them.
func (f fields) mime() textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	for _, x := range f {
		h.Add(x.name, x.value)
	}
	return h
}

// TestMetricsOutcomes checks how a finished request is counted, from its
// status and its error code, through the cached counters.
func TestMetricsOutcomes(t *testing.T) {
	m := newMetrics()
	for _, tc := range []struct {
		status int
		code   string
		want   string
	}{{200, "", "success"}, {503, "ServerBusy", "throttled"}, {500, "OperationTimedOut", "throttled"}, {500, "InternalError", "server_error"}, {404, "ResourceNotFound", "client_error"}, {503, "ServerBusy", "throttled"}} {
		rec := httptest.NewRecorder()
		sw := &statusWriter{ResponseWriter: rec}
		if tc.code != "" {
			sw.Header().Set("x-ms-error-code", tc.code)
		}
		sw.WriteHeader(tc.status)
		m.observe(&request{op: "get"}, sw, time.Now())
	}
	for outcome, want := range map[string]float64{"success": 1, "throttled": 3, "server_error": 1, "client_error": 1} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues("get", outcome)); got != want {
			t.Errorf("get %s: %v, want %v", outcome, got, want)
		}
	}
}

// TestMetricsConcurrently counts requests of many label pairs, each first
// seen by several goroutines at once (run with -race): every request is
// counted once, under its own labels, and timed under its operation.
func TestMetricsConcurrently(t *testing.T) {
	m := newMetrics()
	ops := []string{"insert", "get", "query", "batch", "update", "delete", "table", "other"}
	statuses := []int{200, 404, 500}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				sw := &statusWriter{ResponseWriter: httptest.NewRecorder()}
				sw.WriteHeader(statuses[(g+i)%len(statuses)])
				m.observe(&request{op: ops[i%len(ops)]}, sw, time.Now())
			}
		})
	}
	wg.Wait()
	total := 0.0
	for _, op := range ops {
		for _, outcome := range []string{"success", "client_error", "server_error"} {
			total += testutil.ToFloat64(m.requests.WithLabelValues(op, outcome))
		}
	}
	if total != 8*300 {
		t.Fatalf("%v requests counted, want %d", total, 8*300)
	}
	if n := testutil.CollectAndCount(m.latency); n != len(ops) {
		t.Fatalf("%d latency series, want one per operation (%d)", n, len(ops))
	}
}

// TestRequestTimeRemembersOneDate checks the cache of the last request
// date: a repeated date reads as the first did, another date is read anew,
// and one that does not parse is refused without taking the cache's place.
func TestRequestTimeRemembersOneDate(t *testing.T) {
	s := New(nil, Config{Account: DevAccount})
	const a, b = "Mon, 23 Nov 2026 14:00:00 GMT", "Mon, 23 Nov 2026 14:00:01 GMT"
	for _, c := range []struct {
		text string
		want time.Time
		bad  bool
	}{
		{a, time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC), false},
		{a, time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC), false},
		{b, time.Date(2026, 11, 23, 14, 0, 1, 0, time.UTC), false},
		{"Mon, 23 Nov 2026 14:00:01", time.Time{}, true},
		{b, time.Date(2026, 11, 23, 14, 0, 1, 0, time.UTC), false},
		{a, time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC), false},
	} {
		got, err := s.requestTime(c.text)
		if (err != nil) != c.bad || !got.Equal(c.want) {
			t.Fatalf("%q: read %v, %v", c.text, got, err)
		}
	}
}

// TestValidVersion checks the x-ms-version values the server takes: a
// date from the service's first version to about now.
func TestValidVersion(t *testing.T) {
	soon := time.Now().Add(24 * time.Hour).Format("2006-01-02")
	later := time.Now().Add(30 * 24 * time.Hour).Format("2006-01-02")
	for v, want := range map[string]bool{
		"2019-02-02": true, "2009-09-19": true, "2020-12-06": true, soon: true,
		"2009-09-18": false, later: false, "2099-13-45": false, "2019-2-2": false, "": false, "2019-02-02x": false,
	} {
		if got := validVersion(v); got != want {
			t.Errorf("validVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestServiceRootFollowsEachRequest checks the service root a response
// names (odata.metadata) as requests alternate between hosts, TLS and
// plain, and path-style and host-style URLs: the server remembers the last
// root it made, and a request must never get another's.
func TestServiceRootFollowsEachRequest(t *testing.T) {
	s := fuzzServer(t)
	cases := []struct {
		host, path string
		tls        bool
		root       string
	}{
		{"127.0.0.1:10002", "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')", false, "http://127.0.0.1:10002/devstoreaccount1"},
		{"localhost:10002", "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')", false, "http://localhost:10002/devstoreaccount1"},
		{"localhost:10002", "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')", true, "https://localhost:10002/devstoreaccount1"},
		{"devstoreaccount1.table.example:443", "/fuzz(PartitionKey='p',RowKey='r')", true, "https://devstoreaccount1.table.example:443"},
		{"localhost:10002", "/fuzz(PartitionKey='p',RowKey='r')", false, "http://localhost:10002"},
	}
	for round := range 3 {
		for i, c := range cases[round%2:] { // each root after a different one, and after itself
			req := httptest.NewRequest("GET", "http://"+c.host+c.path, nil)
			req.Header.Set("Accept", "application/json;odata=minimalmetadata")
			if c.tls {
				req.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			var body struct {
				Metadata string `json:"odata.metadata"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 200 {
				t.Fatalf("case %d: %d %s", i, w.Code, w.Body)
			}
			if want := c.root + "/$metadata#fuzz/@Element"; body.Metadata != want {
				t.Fatalf("round %d, %s%s (TLS %v): odata.metadata %q, want %q", round, c.host, c.path, c.tls, body.Metadata, want)
			}
		}
	}
}

// TestHeaderNamesCanonical: every name the package's code passes to header
// is in canonical form, which header needs and does not check.
func TestHeaderNamesCanonical(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	call := regexp.MustCompile(`header\((?:q\.)?r, ("[^"]*")\)`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(src, -1) {
			name, _ := strconv.Unquote(string(m[1]))
			if n++; name != http.CanonicalHeaderKey(name) {
				t.Errorf("%s: header(r, %q): the canonical name is %q", f, name, http.CanonicalHeaderKey(name))
			}
		}
	}
	if n < 15 {
		t.Errorf("found %d names passed to header, expected at least 15: the pattern no longer matches the calls", n)
	}
	if faultHeaderKey != http.CanonicalHeaderKey(faultHeaderKey) {
		t.Errorf("the fault header's name %q is not canonical", faultHeaderKey)
	}
}
