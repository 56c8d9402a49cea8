package rest_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
)

// cannedEntity and cannedBatch are responses shaped like the service's,
// so the client parses as much as it would from a real server.
var (
	cannedEntity = `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#t/@Element","odata.etag":"W/\"datetime'2021-08-31T15%3A40%3A02.1952595Z'\"",` +
		`"PartitionKey":"p","RowKey":"r","Timestamp":"2021-08-31T15:40:02.1952595Z","Payload":"` + strings.Repeat("x", 440) + `"}`
	cannedBatch = func() string {
		var b strings.Builder
		b.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n")
		for range 100 {
			b.WriteString("--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
				"DataServiceVersion: 3.0;\r\nLocation: http://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')\r\n" +
				"DataServiceId: http://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')\r\nETag: W/\"datetime'2021-08-31T15%3A40%3A02.1952595Z'\"\r\n\r\n\r\n")
		}
		b.WriteString("--changesetresponse_2--\r\n--batchresponse_1--\r\n")
		return b.String()
	}()
)

// canned answers every request with a fixed success shaped like the
// service's, as fast as a server can: what the client alone can do on this
// machine.
func canned(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	h := w.Header()
	h.Set("x-ms-version", "2019-02-02")
	h.Set("ETag", `W/"datetime'2021-08-31T15%3A40%3A02.1952595Z'"`)
	switch {
	case strings.HasSuffix(r.URL.Path, "/$batch"):
		h.Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
		w.WriteHeader(202)
		io.WriteString(w, cannedBatch)
	case strings.HasSuffix(r.URL.Path, "/Tables"):
		w.WriteHeader(201)
		io.WriteString(w, `{"TableName":"t"}`)
	case r.Method == "GET":
		h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
		io.WriteString(w, cannedEntity)
	default: // an insert without Prefer: 201 with the entity, as the service answers
		h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
		w.WriteHeader(201)
		io.WriteString(w, cannedEntity)
	}
}

// rate runs 30 goroutines of one operation through the SDK for d and
// returns operations per second.
func rate(b *testing.B, conn string, op string, d time.Duration) float64 {
	svc, err := aztables.NewServiceClientFromConnectionString(conn, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}})
	if err != nil {
		b.Fatal(err)
	}
	table := fmt.Sprintf("perf%d", time.Now().UnixNano()%1e9)
	svc.CreateTable(ctx, table, nil)
	c := svc.NewClient(table)
	payload := strings.Repeat("x", 440)
	body := func(pk, rk string) []byte { return entity(pk, rk, map[string]any{"Payload": payload}) }
	if op == "get" { // 1,000 entities to read
		for i := 0; i < 1000; i += 100 {
			var acts []aztables.TransactionAction
			for j := i; j < i+100; j++ {
				acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body("g", fmt.Sprintf("r%04d", j))})
			}
			if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	var n, failed atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for g := range 30 {
		wg.Go(func() {
			pk := fmt.Sprintf("w%02d", g)
			for i := 0; time.Now().Before(deadline); i++ {
				var err error
				switch op {
				case "insert":
					_, err = c.AddEntity(ctx, body(pk, fmt.Sprint(i)), nil)
				case "get":
					_, err = c.GetEntity(ctx, "g", fmt.Sprintf("r%04d", (g*37+i)%1000), nil)
				case "batch100":
					acts := make([]aztables.TransactionAction, 100)
					for j := range acts {
						acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: body(pk, fmt.Sprintf("%d_%d", i, j))}
					}
					_, err = c.SubmitTransaction(ctx, acts, nil)
				}
				if err != nil {
					failed.Add(1)
					continue
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Logf("%s: %d requests failed", op, f)
	}
	return float64(n.Load()) / d.Seconds()
}

// BenchmarkServers puts the served engine (profile none) beside Azurite and
// a canned server under the same aztables load: 30 goroutines of single
// inserts, gets and batches of 100, 1 KiB entities, on this machine, in one
// run. Run it with `make perf`.
func BenchmarkServers(b *testing.B) {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit = engine.None(), 16
	e, _ := engine.New(cfg)
	defer e.Close()
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	ours := httptest.NewServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key}))
	defer ours.Close()
	cannedSrv := httptest.NewServer(http.HandlerFunc(canned))
	defer cannedSrv.Close()
	_, azConn := azurite.Start(b)
	conn := func(url string) string {
		return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + rest.DevKey + ";TableEndpoint=" + url + "/devstoreaccount1;"
	}
	d := 5 * time.Second
	for b.Loop() {
		for _, op := range []string{"insert", "get", "batch100"} {
			o, a, c := rate(b, conn(ours.URL), op, d), rate(b, azConn, op, d), rate(b, conn(cannedSrv.URL), op, d)
			b.Logf("%-8s served engine %8.0f/s  Azurite %8.0f/s  canned %8.0f/s  engine/Azurite %5.2fx  engine/canned %4.0f%%", op, o, a, c, o/a, 100*o/c)
			b.ReportMetric(o/a, op+"-engine/azurite")
			b.ReportMetric(100*o/c, op+"-engine/canned-%")
		}
	}
}
