package aztarget_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/aztarget"
)

// handlerTransport hands each request to a handler in process, so that a
// synctest bubble holds the SDK and the served engine.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) Do(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// TestSDKTargetReportsTheServicesCharge: against an endpoint that sends
// x-ms-request-charge (the engine served as Cosmos DB for Table), each
// request carries the charge it was answered with, and a 429 its
// x-ms-retry-after-ms, counted as throttling.
func TestSDKTargetReportsTheServicesCharge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig()
		cfg.Profile = engine.Cosmos()
		cfg.Profile.RU = 400
		eng, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		key, _ := rest.DecodeKey(rest.DevKey)
		tg, err := aztarget.New(aztarget.Config{
			Auth: aztarget.AuthKey, Endpoint: "http://127.0.0.1:10002/" + rest.DevAccount, KeyEnv: "K",
			Getenv:    func(string) string { return rest.DevKey },
			Transport: handlerTransport{rest.New(eng, rest.Config{Account: rest.DevAccount, Key: key})},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := tg.CreateTable(ctx, "charged"); err != nil {
			t.Fatal(err)
		}
		s := tg.NewSession(1)
		for i := range 200 {
			op := &workloads.Op{Kind: workloads.OpInsert, Table: "charged", Entity: tables.Entity{PartitionKey: "hot", RowKey: fmt.Sprint(i), Properties: []tables.Property{tables.String("Data", strings.Repeat("x", 490))}}}
			_, err := s.Do(ctx, op)
			if err == nil {
				if op.Charge != 5 {
					t.Fatalf("insert %d: charge %v, want the 5 RU the service said", i, op.Charge)
				}
				continue
			}
			e, ok := tables.AsError(err)
			if !ok || e.Status != 429 || e.RetryAfter <= 0 || e.RetryAfter > time.Second || op.Charge != 0 {
				t.Fatalf("insert %d: %v, retry after %v, charge %v; want a 429 with its retry-after", i, err, e.RetryAfter, op.Charge)
			}
			if got := workloads.Outcome(err); got != results.OutcomeRateLimited {
				t.Fatalf("a 429 is recorded as %q, want %q", got, results.OutcomeRateLimited)
			}
			return
		}
		t.Fatal("200 inserts of 1 KB into 400 RU/s without a 429")
	})
}
