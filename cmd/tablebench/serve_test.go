package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/workloads/aztarget"
)

// syncBuffer is a buffer one goroutine writes while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var connRE = regexp.MustCompile(`connection string: (\S+)`)

// startServe runs `tablebench serve` in process and returns its
// connection string and a function that stops it and returns its exit code.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	return startServeEnv(t, func(string) string { return "" }, args...)
}

// startServeEnv is startServe in the environment getenv.
func startServeEnv(t *testing.T, getenv func(string) string, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), &out, &errOut, getenv)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := connRE.FindStringSubmatch(out.String()); m != nil {
			return m[1], func() int { cancel(); return <-done }
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	t.Fatalf("serve printed no connection string: %s %s", out.String(), errOut.String())
	return "", nil
}

// TestServeWithRunTarget: a run through the SDK against the served engine.
func TestServeWithRunTarget(t *testing.T) {
	cs, stop := startServe(t, "--profile", "none")
	if !strings.Contains(cs, "AccountName=devstoreaccount1;AccountKey="+aztarget.DevelopmentKey) {
		t.Fatalf("connection string %q", cs)
	}
	code, out, errOut := tb(t, context.Background(), csEnv(cs), "run", "--target", "table", "--op", "batch", "--batch-size", "20", "--threads", "4", "--duration", "1s", "--warmup", "0s", "--json", "--quiet")
	if code != 0 || !strings.Contains(out, `"entities_per_sec"`) || strings.Contains(out, `"errors":{"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if c := stop(); c != 0 {
		t.Fatalf("serve exited %d after an interrupt", c)
	}
}

// TestServeKeepsCustomKeysSecret: a key from the environment is never
// printed; the connection string names its variable instead.
func TestServeKeepsCustomKeysSecret(t *testing.T) {
	const key = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTIzNA=="
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--key-env", "SERVE_KEY"}, strings.NewReader(""), &out, &errOut,
			func(k string) string {
				if k == "SERVE_KEY" {
					return key
				}
				return ""
			})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "connection string") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if s := out.String() + errOut.String(); strings.Contains(s, key) || !strings.Contains(s, "AccountKey=<the value of $SERVE_KEY>") {
		t.Fatalf("serve printed:\n%s", s)
	}
}

// TestServeStopsWithAStalledClient: an interrupt with a client stalled in
// the middle of its body still stops serve cleanly within the grace period.
func TestServeStopsWithAStalledClient(t *testing.T) {
	cs, stop := startServe(t, "--profile", "none", "--grace", "300ms")
	addr := regexp.MustCompile(`TableEndpoint=https?://([^/;]+)`).FindStringSubmatch(cs)[1]
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Table")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("serve took %v to stop with a grace of 300ms", d)
	}
}

// TestServeFaultsAndAdmin: serve takes a rules file and budgets; admin
// changes them while it runs, signed with the key from the connection
// string, and never prints that key.
func TestServeFaultsAndAdmin(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "faults.yaml")
	os.WriteFile(rules, []byte("faults: [{op: get, probability: 0.5, status: 503, code: ServerBusy}]\n"), 0o644)
	cs, stop := startServe(t, "--profile", "none", "--partition-rate", "300", "--faults", rules)
	getenv := csEnv(cs)
	code, out, errOut := tb(t, context.Background(), getenv, "admin", "rates", "--partition-rate", "120")
	if code != 0 || !strings.Contains(out, `"partition_rate": 120`) {
		t.Fatalf("admin rates: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = tb(t, context.Background(), getenv, "admin", "faults")
	if code != 0 || !strings.Contains(out, `"probability": 0.5`) {
		t.Fatalf("admin faults: exit %d\n%s\n%s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("faults: [{op: get, status: 503}]\n"), 0o644)
	code, out, errOut = tb(t, context.Background(), getenv, "admin", "faults", bad)
	if code != 1 || !strings.Contains(errOut, "needs a code") || !strings.Contains(errOut, "kept") {
		t.Fatalf("a bad rules file: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, aztarget.DevelopmentKey) {
			t.Fatal("admin printed the account key")
		}
	}
	if c := stop(); c != 0 {
		t.Fatalf("serve exited %d", c)
	}
}

// csEnv is an environment holding only the connection string cs.
func csEnv(cs string) func(string) string {
	return func(k string) string {
		if k == "TABLEBENCH_CONNECTION_STRING" {
			return cs
		}
		return ""
	}
}

// serveClient runs `tablebench serve` with args for the test and returns an
// aztables client of it.
func serveClient(t *testing.T, args ...string) *aztables.ServiceClient {
	t.Helper()
	cs, stop := startServe(t, args...)
	t.Cleanup(func() { stop() })
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestServeTableDeleteDelay: a table deleted and created again at once is
// refused with 409 TableBeingDeleted for --table-delete-delay, whose default
// is none under --profile none, which models no time, and the service's
// 40 s under a modelled profile.
func TestServeTableDeleteDelay(t *testing.T) {
	for _, c := range []struct {
		args []string
		code string // of the second create; "" for success
	}{
		{[]string{"--profile", "none"}, ""},
		{[]string{"--profile", "none", "--table-delete-delay", "1h"}, "TableBeingDeleted"},
		{[]string{"--profile", "modern"}, "TableBeingDeleted"},
		{[]string{"--profile", "modern", "--table-delete-delay", "0"}, ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			svc := serveClient(t, c.args...)
			ctx := context.Background()
			if _, err := svc.CreateTable(ctx, "again", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.DeleteTable(ctx, "again", nil); err != nil {
				t.Fatal(err)
			}
			_, err := svc.CreateTable(ctx, "again", nil)
			var re *azcore.ResponseError
			switch {
			case c.code == "" && err != nil:
				t.Fatalf("created again: %v", err)
			case c.code != "" && (!errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != c.code):
				t.Fatalf("created again: %v, want 409 %s", err, c.code)
			}
		})
	}
}

// TestServeUnmodelledPagesAsAStore: under --profile none a table is not
// pre-split (it models no servers), so a query's pages are cut by $top
// alone, not at the bound of every range partition.
func TestServeUnmodelledPagesAsAStore(t *testing.T) {
	for _, c := range []struct {
		args  []string
		pages int // the most pages 25 entities of 25 keys may take at 10 a page
	}{
		{[]string{"--profile", "none"}, 3},
		{[]string{"--profile", "none", "--presplit=false"}, 3},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			svc := serveClient(t, c.args...)
			ctx := context.Background()
			if _, err := svc.CreateTable(ctx, "pages", nil); err != nil {
				t.Fatal(err)
			}
			tc := svc.NewClient("pages")
			for i := range 25 {
				e := fmt.Sprintf(`{"PartitionKey":"%08x","RowKey":"r"}`, uint32(i)*0x0a3d70a3) // spread over the key space
				if _, err := tc.AddEntity(ctx, []byte(e), nil); err != nil {
					t.Fatal(err)
				}
			}
			top := int32(10)
			pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top})
			pages, n := 0, 0
			for pager.More() {
				p, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				n += len(p.Entities)
			}
			if n != 25 || pages > c.pages {
				t.Fatalf("%d entities in %d pages, want 25 in at most %d", n, pages, c.pages)
			}
		})
	}
}

// TestServeCosmosThroughTheSDKTarget: a run through the SDK against
// `serve --profile cosmos` records the charges the served engine reports
// in x-ms-request-charge, and its 429s with their retry-after.
func TestServeCosmosThroughTheSDKTarget(t *testing.T) {
	cs, stop := startServe(t, "--profile", "cosmos", "--ru", "1000")
	defer stop()
	code, out, errOut := tb(t, context.Background(), csEnv(cs), "run", "--target", "table", "--partition", "shared", "--threads", "4", "--duration", "1s", "--warmup", "0s", "--json", "--quiet")
	var res struct {
		RequestUnitsPerSec float64          `json:"request_units_per_sec"`
		Errors             map[string]int64 `json:"errors"`
		RetryAfterMs       *struct {
			Max float64 `json:"max"`
		} `json:"retry_after_ms"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if res.RequestUnitsPerSec <= 0 || res.Errors["RequestRateTooLarge"] == 0 || res.RetryAfterMs == nil || res.RetryAfterMs.Max > 1000 {
		t.Fatalf("a hot key at 1,000 RU/s through the SDK: %.0f RU/s, errors %v, retry-after %+v\n%s", res.RequestUnitsPerSec, res.Errors, res.RetryAfterMs, out)
	}
}
