package aztarget_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/aztarget"
)

var ctx = context.Background()

const errorType = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"

func odataError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", errorType)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"odata.error":{"code":%q,"message":{"lang":"en-US","value":"%s\nRequestId:abc\nTime:2021-08-02T18:01:40.3296350Z"}}}`, code, msg)
}

// A failed batch as the real service sends it: 202, one changeset part
// with the failing operation's status and an index-prefixed message.
const failedBatch = "--batchresponse_c5bb\r\n" +
	"Content-Type: multipart/mixed; boundary=changesetresponse_aef1\r\n\r\n" +
	"--changesetresponse_aef1\r\n" +
	"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 409 Conflict\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n" +
	"Preference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n" +
	"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
	`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"2:The specified entity already exists.\nRequestId:x\nTime:2021-08-02T18:01:40.3296350Z"}}}` + "\r\n" +
	"--changesetresponse_aef1--\r\n--batchresponse_c5bb--\r\n"

const okBatch = "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n" +
	"--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n\r\n\r\n" +
	"--changesetresponse_2--\r\n--batchresponse_1--\r\n"

// fake is a Table endpoint whose answers the test chooses.
type fake struct {
	insert   func(w http.ResponseWriter)
	batch    func(w http.ResponseWriter)
	requests atomic.Int64
	sawAuth  atomic.Value
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.sawAuth.Store(r.Header.Get("Authorization"))
	io.Copy(io.Discard, r.Body)
	path := strings.TrimPrefix(r.URL.Path, "/devstoreaccount1")
	w.Header().Set("x-ms-version", "2019-02-02")
	switch {
	case r.Method == "POST" && path == "/Tables":
		w.Header().Set("Content-Type", errorType)
		w.WriteHeader(201)
		io.WriteString(w, `{"TableName":"t"}`)
	case r.Method == "DELETE":
		w.WriteHeader(204)
	case r.Method == "POST" && path == "/$batch":
		if f.batch != nil {
			f.batch(w)
			return
		}
		w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
		w.WriteHeader(202)
		io.WriteString(w, okBatch)
	case r.Method == "POST":
		if f.insert != nil {
			f.insert(w)
			return
		}
		w.Header().Set("ETag", `W/"datetime'2021-08-31T15%3A40%3A02.1952595Z'"`)
		w.WriteHeader(204)
	case r.Method == "GET" && strings.Contains(path, "(PartitionKey="):
		odataError(w, 404, "ResourceNotFound", "The specified resource does not exist.")
	case r.Method == "GET":
		w.Header().Set("Content-Type", errorType)
		w.Header().Set("x-ms-continuation-NextPartitionKey", "1!8!U21pdGg-")
		w.Header().Set("x-ms-continuation-NextRowKey", "1!4!cjI-")
		io.WriteString(w, `{"value":[{"PartitionKey":"p","RowKey":"r1"},{"PartitionKey":"p","RowKey":"r2"}]}`)
	default:
		w.WriteHeader(400)
	}
}

func newTarget(t *testing.T, f *fake) *aztarget.Target {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return targetFor(t, devConn(srv.URL))
}

// devConn is the development account's connection string for a server at
// url (scheme://host:port).
func devConn(url string) string {
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + aztarget.DevelopmentKey + ";TableEndpoint=" + url + "/devstoreaccount1;"
}

// targetFor returns an SDK target that takes conn as its connection string.
func targetFor(tb testing.TB, conn string) *aztarget.Target {
	tb.Helper()
	cfg := aztarget.DefaultConfig()
	cfg.Getenv = func(k string) string {
		if k == "TABLEBENCH_CONNECTION_STRING" {
			return conn
		}
		return ""
	}
	tg, err := aztarget.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return tg
}

func do(t *testing.T, tg *aztarget.Target, op *workloads.Op) error {
	t.Helper()
	op.Table = "tbl"
	_, err := tg.NewSession(1).Do(ctx, op)
	return err
}

func insertOp() *workloads.Op {
	return &workloads.Op{Kind: workloads.OpInsert, Entity: tables.Entity{PartitionKey: "p", RowKey: "r", Properties: []tables.Property{tables.String("Payload", "x")}}}
}

func batchOp() *workloads.Op {
	var ops []tables.BatchOp
	for i := range 3 {
		ops = append(ops, tables.BatchOp{Entity: tables.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}})
	}
	return &workloads.Op{Kind: workloads.OpBatch, Batch: ops}
}

func TestResponses(t *testing.T) {
	tests := []struct {
		name    string
		fake    *fake
		op      *workloads.Op
		status  int
		code    string
		index   int
		outcome string
	}{
		{"insert ok", &fake{}, insertOp(), 0, "", -1, results.OutcomeOK},
		{"throttled insert", &fake{insert: func(w http.ResponseWriter) {
			odataError(w, 503, "ServerBusy", tables.MsgServerBusy)
		}}, insertOp(), 503, "ServerBusy", -1, results.OutcomeThrottled},
		{"timed out insert", &fake{insert: func(w http.ResponseWriter) {
			odataError(w, 500, "OperationTimedOut", tables.MsgTimedOut)
		}}, insertOp(), 500, "OperationTimedOut", -1, results.OutcomeTimedOut},
		{"503 with no body", &fake{insert: func(w http.ResponseWriter) { w.WriteHeader(503) }}, insertOp(), 503, "ServerBusy", -1, results.OutcomeThrottled},
		{"missing entity", &fake{}, &workloads.Op{Kind: workloads.OpGet, PartitionKey: "p", RowKey: "r"}, 404, "ResourceNotFound", -1, "ResourceNotFound"},
		{"batch ok", &fake{}, batchOp(), 0, "", -1, results.OutcomeOK},
		{"failed batch", &fake{batch: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_c5bb")
			w.WriteHeader(202)
			io.WriteString(w, failedBatch)
		}}, batchOp(), 409, "EntityAlreadyExists", 2, "EntityAlreadyExists"},
		{"throttled batch", &fake{batch: func(w http.ResponseWriter) {
			odataError(w, 503, "ServerBusy", tables.MsgServerBusy)
		}}, batchOp(), 503, "ServerBusy", -1, results.OutcomeThrottled},
		{"malformed batch body", &fake{batch: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=x")
			w.WriteHeader(202)
			io.WriteString(w, "x") // the SDK slices this past its end
		}}, batchOp(), 0, aztarget.CodeMalformedResponse, -1, aztarget.CodeMalformedResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := do(t, newTarget(t, tc.fake), tc.op)
			if got := workloads.Outcome(err); got != tc.outcome {
				t.Fatalf("outcome %q (%v), want %q", got, err, tc.outcome)
			}
			if tc.code == "" {
				return
			}
			e, ok := tables.AsError(err)
			if !ok || e.Code != tc.code || (tc.status != 0 && e.Status != tc.status) || e.Index != tc.index {
				t.Fatalf("got %#v, want %d %s at index %d", err, tc.status, tc.code, tc.index)
			}
			if tc.code != aztarget.CodeMalformedResponse && (e.Message == "" || strings.Contains(e.Message, "RequestId")) {
				t.Fatalf("message %q: want the service's first line", e.Message)
			}
		})
	}
}

func TestQueryPage(t *testing.T) {
	tg := newTarget(t, &fake{})
	op := &workloads.Op{Kind: workloads.OpQuery, Query: tables.Query{Filter: "PartitionKey eq 'p'", Top: 2}}
	if err := do(t, tg, op); err != nil {
		t.Fatal(err)
	}
	if op.Returned != 2 || op.Next == nil || op.Next.PartitionKey != "1!8!U21pdGg-" {
		t.Fatalf("returned %d, next %+v", op.Returned, op.Next)
	}
}

func TestSecretsStayOut(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close() // every request fails in transport, with the URL in the error
	const sas = "sv=2019-02-02&ss=t&srt=sco&sp=rwdlacu&se=2030-01-01T00:00:00Z&sig=c2VjcmV0c2lnbmF0dXJlMTIzNDU2Nzg5MA%3D%3D"
	const key = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTIzNA=="
	for _, cfg := range []aztarget.Config{
		{Auth: aztarget.AuthSAS, Endpoint: url + "/acct", SASEnv: "S"},
		{Auth: aztarget.AuthKey, Endpoint: url + "/acct", KeyEnv: "K"},
		{Auth: aztarget.AuthConnectionString, ConnectionStringEnv: "C"},
		{Auth: aztarget.AuthConnectionString, ConnectionStringEnv: "C2"},
	} {
		cfg.Getenv = func(k string) string {
			return map[string]string{"S": sas, "K": key,
				"C":  "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";TableEndpoint=" + url + "/acct",
				"C2": "AccountName=acct;SharedAccessSignature=" + sas + ";TableEndpoint=" + url + "/acct"}[k]
		}
		tg, err := aztarget.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		errs := []error{do(t, tg, insertOp()), do(t, tg, batchOp()), tg.CreateTable(ctx, "abc")}
		texts := []string{tg.Describe().Endpoint, tg.Endpoint()}
		for _, e := range errs {
			if e == nil {
				t.Fatal("a request to a closed port succeeded")
			}
			texts = append(texts, e.Error(), fmt.Sprintf("%+v", e))
		}
		for _, s := range texts {
			for _, secret := range []string{"c2VjcmV0", "sig=c2", key, sas} {
				if strings.Contains(s, secret) {
					t.Fatalf("%s auth leaked a secret: %q", cfg.Auth, s)
				}
			}
		}
	}
}

func TestBadCredentials(t *testing.T) {
	tests := []struct {
		name string
		cfg  aztarget.Config
		want string
	}{
		{"no connection string", aztarget.Config{}, "no connection string in $TABLEBENCH_CONNECTION_STRING"},
		{"key without endpoint", aztarget.Config{Auth: aztarget.AuthKey, KeyEnv: "K"}, "needs --endpoint"},
		{"empty key", aztarget.Config{Auth: aztarget.AuthKey, Endpoint: "http://127.0.0.1:1/a", KeyEnv: "NONE"}, "no account key in $NONE"},
		{"bad key", aztarget.Config{Auth: aztarget.AuthKey, Endpoint: "http://127.0.0.1:1/a", KeyEnv: "K"}, "connecting to the table service"},
		{"no account name", aztarget.Config{ConnectionStringEnv: "BAD"}, "no AccountName"},
		{"unknown auth", aztarget.Config{Auth: "password"}, "auth \"password\" is not known"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Getenv = func(k string) string {
				return map[string]string{"K": "not base64 at all!", "BAD": "AccountKey=abcd"}[k]
			}
			_, err := aztarget.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "not base64 at all") {
				t.Fatalf("got %v, want an error containing %q and no secret", err, tc.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	got := aztarget.Redact(`GET http://h/t?sv=1&sig=abc%2Fdef&se=2 AccountKey=zzz;x SharedAccessSignature=sv=1&sig=q`, "zzz")
	for _, s := range []string{"abc", "zzz", "sig=q"} {
		if strings.Contains(got, s) {
			t.Fatalf("Redact left %q in %q", s, got)
		}
	}
}

// A short real run through the coordinator against a throttling endpoint:
// every 503 reaches the harness, and the run still measures and stops.
func TestRunAgainstEndpoint(t *testing.T) {
	var n atomic.Int64
	f := &fake{insert: func(w http.ResponseWriter) {
		if n.Add(1)%4 == 0 {
			odataError(w, 503, "ServerBusy", tables.MsgServerBusy)
			return
		}
		w.WriteHeader(204)
	}}
	tg := newTarget(t, f)
	spec := workloads.DefaultSpec()
	spec.Threads, spec.Duration, spec.Warmup = 4, time.Second, 0
	spec.Retry, _ = workloads.DefaultRetry(workloads.RetryFixed)
	spec.Retry.Delay = 10 * time.Millisecond
	r, err := workloads.NewCoordinator(spec, tg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.Throttled == 0 || res.Totals.Entities == 0 || res.Totals.Retries == 0 {
		t.Fatalf("totals %+v: want successes, throttles and retries", res.Totals)
	}
	if res.Env.Target != "table" || strings.Contains(res.Env.Endpoint, "Key") {
		t.Fatalf("environment %+v", res.Env)
	}
	if !strings.HasPrefix(f.sawAuth.Load().(string), "SharedKeyLite devstoreaccount1:") {
		t.Fatalf("requests were not signed: %q", f.sawAuth.Load())
	}
}
