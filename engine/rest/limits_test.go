package rest_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

func limitedServer(t *testing.T, to rest.Timeouts) string {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.CreateTable(t.Context(), "slow")
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = rest.New(e, rest.Config{Account: rest.DevAccount, Auth: rest.AuthNone}).HTTPServer(to)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestSlowLargeBodiesDoNotReserveMemory: hundreds of connections that
// declare large bodies and send a trickle cost what they sent, not what they
// declared.
func TestSlowLargeBodiesDoNotReserveMemory(t *testing.T) {
	addr := limitedServer(t, rest.DefaultTimeouts())
	before := heapInUse()
	const conns = 400
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		fmt.Fprintf(c, "POST /devstoreaccount1/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"PartitionKey\":\"p\",", 3<<20)
	}
	time.Sleep(500 * time.Millisecond) // the server has read every header and the first bytes
	grown := int64(heapInUse()) - int64(before)
	if grown > 64<<20 {
		t.Fatalf("%d slow connections declaring 3 MiB each grew the heap by %d MiB", conns, grown>>20)
	}
	t.Logf("%d slow connections: heap grew by %.1f MiB", conns, float64(grown)/(1<<20))
	// A declared body over the limit is refused at once, unread.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /devstoreaccount1/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 5<<20)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 413 {
		t.Fatalf("a declared 5 MiB body: %v %v", resp, err)
	}
}

// TestSlowBodyIsCutOff: a client that stops sending its body loses its
// connection when the body timeout passes.
func TestSlowBodyIsCutOff(t *testing.T) {
	addr := limitedServer(t, rest.Timeouts{Header: 200 * time.Millisecond, Body: 300 * time.Millisecond, Write: time.Second, Idle: time.Second})
	for name, req := range map[string]string{
		"headers": "POST /devstoreaccount1/slow HTTP/1.1\r\nHost: x\r\n",
		"body":    "POST /devstoreaccount1/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"Par",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c.Write([]byte(req))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				break // the server closed the connection (after answering, perhaps)
			}
		}
		c.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("a stalled %s held its connection for %v", name, d)
		}
	}
}

// TestFilterSizeIsBounded: a $filter of many operators is refused before
// it costs memory, however it is nested.
func TestFilterSizeIsBounded(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, _ := engine.New(cfg)
	defer e.Close()
	e.CreateTable(t.Context(), "filters")
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	s := rest.New(e, rest.Config{Account: rest.DevAccount, Key: key, Auth: rest.AuthNone})
	// Each fits in rest.MaxURLBytes, so that the filter's own bounds, not
	// the URL's, refuse it.
	for name, f := range map[string]string{
		"10k nots":    strings.Repeat("not ", 10000) + "A eq 1",
		"deep parens": strings.Repeat("(", 5000) + "A eq 1" + strings.Repeat(")", 5000),
		"long chain":  strings.Repeat("A eq 1 and ", 3000) + "A eq 1",
	} {
		before := heapInUse()
		req := httptest.NewRequest("GET", "/devstoreaccount1/filters()?$filter="+strings.ReplaceAll(f, " ", "%20"), nil)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 400 {
			t.Errorf("%s: %d, want 400", name, w.Code)
		}
		if grown := int64(heapInUse()) - int64(before); grown > 16<<20 {
			t.Errorf("%s: the heap grew by %d MiB", name, grown>>20)
		}
	}
}
