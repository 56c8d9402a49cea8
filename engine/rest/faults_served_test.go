package rest_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/engine/rest/resttest"
)

// sdkTable returns an aztables client for a fresh table on s; retries is
// the SDK's retry count (-1: none), with short waits so retries show fast.
func sdkTable(t *testing.T, s *resttest.Server, table string, retries int32) *aztables.Client {
	t.Helper()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: retries, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}}}
	svc, err := aztables.NewServiceClientFromConnectionString(s.ConnectionString, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		t.Fatal(err)
	}
	return svc.NewClient(table)
}

func addEntity(c *aztables.Client, pk, rk string) error {
	_, err := c.AddEntity(ctx, entity(pk, rk, map[string]any{"v": 1}), nil)
	return err
}

// TestEachFaultAsTheSDKSeesIt: every kind of fault reaches the aztables
// client as the service's own would, and with the SDK's retries on its
// retry policy visibly retries it.
func TestEachFaultAsTheSDKSeesIt(t *testing.T) {
	s := resttest.NewServer(t, resttest.Options{})
	once := sdkTable(t, s, "faults", -1)
	retried := sdkTable(t, s, "faults2", 2)
	for _, c := range []struct {
		name     string
		rule     faults.Rule
		check    func(err error) error
		attempts int64 // with the SDK's 2 retries
	}{
		{"503 ServerBusy", faults.Rule{Status: 503, Code: "ServerBusy"}, wantCode(503, "ServerBusy"), 3},
		{"500 OperationTimedOut", faults.Rule{Status: 500, Code: "OperationTimedOut"}, wantCode(500, "OperationTimedOut"), 3},
		{"500 InternalError", faults.Rule{Status: 500, Code: "InternalError"}, wantCode(500, "InternalError"), 3},
		{"reset", faults.Rule{Reset: true}, wantTransport, 3},
		// A response cut short after its 201 status is not retried: the
		// SDK has the status, and the insert was done.
		{"truncate", faults.Rule{Truncate: true}, wantTransport, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.rule.Op, c.rule.PartitionKey = faults.OpInsert, "hot"
			s.Faults.Replace([]faults.Rule{c.rule})
			before := s.Faults.Fired()[c.rule.Kind()]
			if err := c.check(addEntity(once, "hot", "a-"+c.name)); err != nil {
				t.Fatalf("without retries: %v", err)
			}
			if n := s.Faults.Fired()[c.rule.Kind()] - before; n != 1 {
				t.Fatalf("without retries the server saw %d attempts", n)
			}
			before = s.Faults.Fired()[c.rule.Kind()]
			if err := c.check(addEntity(retried, "hot", "b-"+c.name)); err != nil {
				t.Fatalf("with retries: %v", err)
			}
			if n := s.Faults.Fired()[c.rule.Kind()] - before; n != c.attempts {
				t.Fatalf("with 2 retries the server saw %d attempts, want %d", n, c.attempts)
			}
			if err := addEntity(once, "cold", "c-"+c.name); err != nil { // another key is untouched
				t.Fatalf("a key the rule does not name: %v", err)
			}
		})
	}

	t.Run("delay", func(t *testing.T) {
		s.Faults.Replace([]faults.Rule{{Op: faults.OpGet, Delay: faults.Duration(300 * time.Millisecond)}})
		if err := addEntity(once, "p", "delayed"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := once.GetEntity(ctx, "p", "delayed", nil); err != nil || time.Since(start) < 300*time.Millisecond {
			t.Fatalf("%v after %v, want the entity after at least 300 ms", err, time.Since(start))
		}
	})

	t.Run("unavailable", func(t *testing.T) {
		s.Faults.Replace([]faults.Rule{{Op: faults.OpInsert, PartitionKey: "moving", Unavailable: faults.Duration(time.Hour)}})
		for i := range 2 { // the first fires the rule; the second finds the partition still away
			if err := wantCode(503, "ServerBusy")(addEntity(once, "moving", fmt.Sprint(i))); err != nil {
				t.Fatalf("insert %d: %v", i, err)
			}
			s.Faults.Replace(nil)
		}
	})
}

func wantCode(status int, code string) func(error) error {
	return func(err error) error {
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
			return fmt.Errorf("got %v, want the service's %d %s", err, status, code)
		}
		return nil
	}
}

// wantTransport: a reset or cut response is a transport error, never an
// answer from the service.
func wantTransport(err error) error {
	var re *azcore.ResponseError
	if err == nil || errors.As(err, &re) {
		return fmt.Errorf("got %v, want a transport error", err)
	}
	return nil
}

// TestRateOverridesHold: with --partition-rate 200 one PartitionKey serves
// about 200 entities/s and refuses the rest with 503 ServerBusy; with an
// account rate, the account as a whole does. Measured under aztables load,
// after a second that spends the budget saved up at the start.
func TestRateOverridesHold(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     resttest.Options
		sameKey  bool
		wantRate float64
	}{
		{"partition", resttest.Options{PartitionRate: 200}, true, 200},
		{"account", resttest.Options{AccountRate: 300}, false, 300},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := resttest.NewServer(t, c.opts)
			tbl := sdkTable(t, s, "rates", -1)
			var ok, busy atomic.Int64
			var counting atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						pk := "hot"
						if !c.sameKey {
							pk = fmt.Sprintf("k%d-%d", w, i)
						}
						err := addEntity(tbl, pk, fmt.Sprintf("%d-%d", w, i))
						if !counting.Load() {
							continue
						}
						if err == nil {
							ok.Add(1)
						} else if wantCode(503, "ServerBusy")(err) == nil {
							busy.Add(1)
						} else {
							t.Errorf("unexpected %v", err)
						}
					}
				})
			}
			time.Sleep(1500 * time.Millisecond)
			counting.Store(true)
			start := time.Now()
			time.Sleep(4 * time.Second)
			counting.Store(false)
			elapsed := time.Since(start).Seconds()
			close(stop)
			wg.Wait()
			rate := float64(ok.Load()) / elapsed
			t.Logf("%.0f entities/s served, %d refused with ServerBusy", rate, busy.Load())
			if rate < 0.9*c.wantRate || rate > 1.1*c.wantRate || busy.Load() == 0 {
				t.Fatalf("%.0f entities/s served (%d refused), want %.0f within 10%% and the rest refused", rate, busy.Load(), c.wantRate)
			}
		})
	}
}

// TestAdminAndHeaderAndMetrics: the admin endpoint changes rules and rates
// only for a request signed with the account key, refuses a bad rules file
// and keeps the rules in force; the fault header works only when allowed;
// /metrics counts requests and faults and shows no key or name.
func TestAdminAndHeaderAndMetrics(t *testing.T) {
	s := resttest.NewServer(t, resttest.Options{AllowFaultHeader: true})
	tbl := sdkTable(t, s, "secretnamedtable", -1)
	admin := func(method, what, body string, sign bool) (int, string) {
		req, _ := http.NewRequest(method, s.Root()+rest.AdminPath+what, strings.NewReader(body))
		if sign {
			rest.SignRequest(req, s.Account, s.Key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, _ := admin(http.MethodPut, "faults", "faults: [{op: get, status: 503, code: ServerBusy}]", false); st != http.StatusForbidden {
		t.Fatalf("an unsigned admin request got %d", st)
	}
	if st, body := admin(http.MethodPut, "faults", "faults: [{op: get, status: 503, code: ServerBusy}]", true); st != 200 || !strings.Contains(body, "ServerBusy") {
		t.Fatalf("%d %s", st, body)
	}
	addEntity(tbl, "p", "r")
	if err := wantCode(503, "ServerBusy")(func() error { _, err := tbl.GetEntity(ctx, "p", "r", nil); return err }()); err != nil {
		t.Fatal(err)
	}
	if st, body := admin(http.MethodPut, "faults", "faults: [{op: gett, reset: true}]", true); st != 400 || !strings.Contains(body, `op \"gett\" is not known`) || !strings.Contains(body, "kept") {
		t.Fatalf("a bad rules file: %d %s", st, body)
	}
	if r := s.Faults.Rules(); len(r) != 1 || r[0].Code != "ServerBusy" {
		t.Fatalf("the bad file replaced the rules: %+v", r)
	}
	if st, body := admin(http.MethodPut, "rates", `{"partition_rate": 150}`, true); st != 200 || s.Engine.Rates().Partition != 150 || !strings.Contains(body, `"partition_rate":150`) {
		t.Fatalf("rates: %d %s", st, body)
	}
	if st, _ := admin(http.MethodPut, "rates", `{"partition_rate": -5}`, true); st != 400 || s.Engine.Rates().Partition != 150 {
		t.Fatalf("a negative rate was taken: %d", st)
	}
	admin(http.MethodPut, "faults", "faults: []", true)

	// One request asks for its own fault.
	get := func(header string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/secretnamedtable(PartitionKey='p',RowKey='r')", nil)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		if header != "" {
			req.Header.Set(rest.FaultHeader, header)
		}
		rest.SignRequest(req, s.Account, s.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := get("status=500;code=InternalError"); resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "InternalError" {
		t.Fatalf("the fault header: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	if resp := get("status=500"); resp.StatusCode != 400 {
		t.Fatalf("a bad fault header: %d", resp.StatusCode)
	}
	if resp := get(""); resp.StatusCode != 200 {
		t.Fatalf("a plain get: %d", resp.StatusCode)
	}
	closed := resttest.NewServer(t, resttest.Options{})
	req, _ := http.NewRequest(http.MethodGet, closed.URL+"/Tables", nil)
	req.Header.Set(rest.FaultHeader, "status=503;code=ServerBusy")
	rest.SignRequest(req, closed.Account, closed.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get(rest.FaultHeader+"-ignored") == "" {
		t.Fatalf("a server that does not allow the header: %d, %q", resp.StatusCode, resp.Header.Get(rest.FaultHeader+"-ignored"))
	}

	resp, err = http.Get(s.Root() + rest.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`tablebench_requests_total{op="get",outcome="injected"} 2`, `tablebench_requests_total{op="insert",outcome="success"} 1`,
		`tablebench_faults_injected_total{kind="status"} 2`, `tablebench_request_duration_seconds_bucket{op="get"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{rest.DevKey, "secretnamedtable", "PartitionKey"} {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("/metrics shows %q", secret)
		}
	}
}
