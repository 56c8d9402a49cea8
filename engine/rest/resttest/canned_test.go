package resttest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/resttest"
)

// TestCannedAnswersTheSDK: the canned server is the ceiling the served
// engine is measured against, so the SDK must take each of its answers as
// it takes the service's, and they must be framed as the service's are.
func TestCannedAnswersTheSDK(t *testing.T) {
	srv := httptest.NewServer(resttest.Canned())
	defer srv.Close()
	var batchType, batchBody, location string
	capture := roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		switch {
		case err != nil:
		case strings.HasSuffix(r.URL.Path, "$batch"):
			batchType = resp.Header.Get("Content-Type")
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			batchBody, resp.Body = string(body), io.NopCloser(bytes.NewReader(body))
			return resp, rerr
		case r.Method == http.MethodPost:
			location = resp.Header.Get("Location")
		}
		return resp, err
	})
	conn := rest.ConnectionString("http", rest.DevAccount, rest.DevKey, srv.URL+"/"+rest.DevAccount)
	svc, err := aztables.NewServiceClientFromConnectionString(conn, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Transport: capture}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "t", nil); err != nil {
		t.Fatalf("create table: %v", err)
	}
	c := svc.NewClient("t")
	entity := func(rk string) []byte { return fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":%q,"Payload":"x"}`, rk) }
	if _, err := c.AddEntity(ctx, entity("r"), nil); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if want := srv.URL + "/" + rest.DevAccount + "/t("; !strings.HasPrefix(location, want) {
		t.Errorf("an insert's Location is %q, want it on the host the client addressed, %q...", location, want)
	}
	got, err := c.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(got.Value), `"Payload"`) {
		t.Fatalf("get: %v, %s", err, got.Value)
	}
	acts := make([]aztables.TransactionAction, 100)
	for i := range acts {
		acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entity(fmt.Sprint(i))}
	}
	if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
		t.Fatalf("batch: %v", err)
	}
	if n := strings.Count(batchBody, "\r\nHTTP/1.1 204 No Content\r\n"); n != 100 {
		t.Errorf("the batch has %d answers, want 100", n)
	}
	guid := "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
	if !regexp.MustCompile(`^multipart/mixed; boundary=batchresponse_` + guid + `$`).MatchString(batchType) {
		t.Errorf("the batch's Content-Type is %q, want the service's boundary, batchresponse_ and a GUID", batchType)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
