package rest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

// inProcess is an SDK transport that hands each request to a handler in
// the test's goroutine, so that a synctest bubble holds client, server and
// engine, and their waits take no wall time. It notes each request's
// arrival and answer.
type inProcess struct {
	h    http.Handler
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	method, path string
	at           time.Time
	status       int
	header       http.Header
}

func (t *inProcess) Do(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	at := time.Now()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	t.mu.Lock()
	t.seen = append(t.seen, seenRequest{req.Method, req.URL.Path, at, resp.StatusCode, resp.Header})
	t.mu.Unlock()
	return resp, nil
}

// cosmosSDK serves a cosmos engine of ru RU/s in process and returns an
// aztables client, with the SDK's default retry policy, for a new table.
func cosmosSDK(t *testing.T, ru float64) (*aztables.Client, *inProcess) {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.Cosmos()
	cfg.Profile.RU = ru
	cfg.PreSplit = cfg.Profile.SteadySplit()
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	key, _ := rest.DecodeKey(rest.DevKey)
	tr := &inProcess{h: rest.New(eng, rest.Config{Account: rest.DevAccount, Key: key})}
	url := "http://127.0.0.1:10002/" + rest.DevAccount
	svc, err := aztables.NewServiceClientFromConnectionString(rest.ConnectionString("http", rest.DevAccount, rest.DevKey, url), &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "cosmos", nil); err != nil {
		t.Fatal(err)
	}
	return svc.NewClient("cosmos"), tr
}

// TestServedCosmosAnswersAsCosmosDB: every answer carries
// x-ms-request-charge (5 RU for a 1 KB insert, 1 RU for its point read);
// a write past the partition's share is answered 429 RequestRateTooLarge
// with x-ms-retry-after-ms; and the SDK's default retry policy waits what
// it says, then retries: two attempts at the server, spaced by the
// retry-after, and the application sees a success.
func TestServedCosmosAnswersAsCosmosDB(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := cosmosSDK(t, 400) // 80 inserts of 1 KB a second
		ctx := context.Background()
		body := func(i int) []byte {
			return []byte(fmt.Sprintf(`{"PartitionKey":"hot","RowKey":"r%04d","Data":"%s"}`, i, strings.Repeat("x", 480)))
		}
		for i := range 200 {
			if _, err := c.AddEntity(ctx, body(i), nil); err != nil {
				t.Fatalf("insert %d: %v", i, err)
			}
		}
		if _, err := c.GetEntity(ctx, "hot", "r0000", nil); err != nil {
			t.Fatal(err)
		}
		tr.mu.Lock()
		seen := tr.seen
		tr.mu.Unlock()
		var throttled, retried int
		for i, s := range seen {
			charge, err := strconv.ParseFloat(s.header.Get(rest.HeaderRequestCharge), 64)
			if err != nil {
				t.Fatalf("answer %d (%s %d) has no x-ms-request-charge: %v", i, s.method, s.status, err)
			}
			switch {
			case s.status == http.StatusTooManyRequests:
				throttled++
				ra, err := strconv.Atoi(s.header.Get(rest.HeaderRetryAfterMs))
				if err != nil || ra <= 0 || ra > 1000 || s.header.Get("x-ms-error-code") != "RequestRateTooLarge" || charge != 0 {
					t.Fatalf("429 with x-ms-retry-after-ms %q, code %q, charge %v", s.header.Get(rest.HeaderRetryAfterMs), s.header.Get("x-ms-error-code"), charge)
				}
				if i+1 >= len(seen) {
					t.Fatal("the SDK did not retry a 429")
				}
				next := seen[i+1]
				if gap := next.at.Sub(s.at); gap < time.Duration(ra)*time.Millisecond || gap > time.Duration(ra)*time.Millisecond+20*time.Millisecond {
					t.Errorf("the SDK retried %v after a 429 asking for %d ms", gap, ra)
				}
				if next.status == http.StatusCreated || next.status == http.StatusNoContent {
					retried++
				}
			case s.method == http.MethodPost && strings.HasSuffix(s.path, "/cosmos") && charge != 5:
				t.Errorf("a 1 KB insert charged %v RU, want 5", charge)
			case s.method == http.MethodGet && charge != 1:
				t.Errorf("a 1 KB point read charged %v RU, want 1", charge)
			}
		}
		if throttled == 0 || retried != throttled {
			t.Fatalf("%d answers, %d of them 429, %d retried with success: want 429s, each retried once after its retry-after", len(seen), throttled, retried)
		}
	})
}

// TestServedCosmosSDKGivesUpPastItsMaxRetryDelay: azcore does not retry a
// 429 whose retry-after exceeds its MaxRetryDelay: one attempt, and the
// application sees the 429.
func TestServedCosmosSDKGivesUpPastItsMaxRetryDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, tr := cosmosSDK(t, 400)
		url := "http://127.0.0.1:10002/" + rest.DevAccount
		svc, err := aztables.NewServiceClientFromConnectionString(rest.ConnectionString("http", rest.DevAccount, rest.DevKey, url), &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetryDelay: time.Millisecond}}})
		if err != nil {
			t.Fatal(err)
		}
		c := svc.NewClient("cosmos")
		var rerr *azcore.ResponseError
		for i := 0; ; i++ {
			_, err := c.AddEntity(context.Background(), []byte(fmt.Sprintf(`{"PartitionKey":"hot","RowKey":"r%d"}`, i)), nil)
			if err == nil {
				continue
			}
			if !errors.As(err, &rerr) || rerr.StatusCode != 429 {
				t.Fatalf("insert %d: %v, want a 429", i, err)
			}
			break
		}
		last := tr.seen[len(tr.seen)-1]
		if last.status != 429 || tr.seen[len(tr.seen)-2].status == 429 {
			t.Fatal("the SDK retried a 429 whose retry-after exceeds its MaxRetryDelay")
		}
	})
}
