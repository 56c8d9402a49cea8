package rest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/tables"
)

var ctx = context.Background()

// serve starts the engine behind the REST front end with the development
// account and returns a service client for it.
func serve(t *testing.T) (*aztables.ServiceClient, string) {
	t.Helper()
	url := servedEngine(t)
	cred, _ := aztables.NewSharedKeyCredential(rest.DevAccount, rest.DevKey)
	svc, err := aztables.NewServiceClientWithSharedKey(url, cred, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, url
}

func code(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

// codeOf returns "status code" of an SDK error.
func codeOf(err error) string {
	st, c := code(err)
	return fmt.Sprintf("%d %s", st, c)
}

func entity(pk, rk string, props map[string]any) []byte {
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range props {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

func TestSDKAgainstServedEngine(t *testing.T) {
	svc, _ := serve(t)
	if _, err := svc.CreateTable(ctx, "People", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "people", nil); codeOf(err) != "409 TableAlreadyExists" {
		t.Fatalf("create twice: %v", err)
	}
	c := svc.NewClient("People")
	add, err := c.AddEntity(ctx, entity("p'1", "r/1?", map[string]any{"Name": "O'Brien", "Age": 40, "Big@odata.type": "Edm.Int64", "Big": "1099511627776"}), nil)
	if err == nil {
		t.Fatal("a RowKey with / was accepted")
	}
	if st, cd := code(err); st != 400 || cd != tables.CodeOutOfRangeInput {
		t.Fatalf("bad key: %d %s", st, cd)
	}
	add, err = c.AddEntity(ctx, entity("p'1", "r 1", map[string]any{"Name": "O'Brien", "Age": 40, "Big@odata.type": "Edm.Int64", "Big": "1099511627776"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(add.ETag), `W/"datetime'`) {
		t.Fatalf("ETag %q", add.ETag)
	}
	if _, err := c.AddEntity(ctx, entity("p'1", "r 1", nil), nil); codeOf(err) != "409 EntityAlreadyExists" {
		t.Fatalf("insert twice: %v", err)
	}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatNone, aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		got, err := c.GetEntity(ctx, "p'1", "r 1", &aztables.GetEntityOptions{Format: &f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var m map[string]any
		json.Unmarshal(got.Value, &m)
		if m["Name"] != "O'Brien" || m["Big"] != "1099511627776" || m["RowKey"] != "r 1" {
			t.Fatalf("%s: %s", f, got.Value)
		}
		if (f == aztables.MetadataFormatNone) == (m["odata.etag"] != nil) {
			t.Fatalf("%s: odata.etag %v", f, m["odata.etag"])
		}
	}
	if _, err := c.GetEntity(ctx, "p'1", "nope", nil); codeOf(err) != "404 ResourceNotFound" {
		t.Fatalf("missing: %v", err)
	}
	stale := azcore.ETag(tables.FormatETag(time.Unix(1, 0)))
	if _, err := c.UpdateEntity(ctx, entity("p'1", "r 1", map[string]any{"Age": 41}), &aztables.UpdateEntityOptions{IfMatch: &stale, UpdateMode: aztables.UpdateModeMerge}); codeOf(err) != "412 UpdateConditionNotSatisfied" {
		t.Fatalf("stale update: %v", err)
	}
	if _, err := c.UpdateEntity(ctx, entity("p'1", "r 1", map[string]any{"Age": 41}), &aztables.UpdateEntityOptions{IfMatch: &add.ETag, UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertEntity(ctx, entity("p'1", "r 2", map[string]any{"Age": 1}), nil); err != nil {
		t.Fatal(err)
	}
	got, _ := c.GetEntity(ctx, "p'1", "r 1", nil)
	var m map[string]any
	json.Unmarshal(got.Value, &m)
	if m["Age"] != float64(41) || m["Name"] != "O'Brien" {
		t.Fatalf("merge: %s", got.Value)
	}
	if _, err := c.DeleteEntity(ctx, "p'1", "r 2", nil); err != nil {
		t.Fatal(err)
	}

	// Paging: 2,500 entities come back 1,000 at a time, in key order.
	var actions []aztables.TransactionAction
	for i := range 2500 {
		actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entity("q", fmt.Sprintf("r%05d", i), map[string]any{"N": i})})
		if len(actions) == 100 {
			if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
				t.Fatal(err)
			}
			actions = nil
		}
	}
	filter := "PartitionKey eq 'q' and N ge 5"
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	var pages, n int
	last := ""
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, raw := range p.Entities {
			var e map[string]any
			json.Unmarshal(raw, &e)
			if rk := e["RowKey"].(string); rk <= last {
				t.Fatalf("out of order: %s after %s", rk, last)
			} else {
				last = rk
			}
			n++
		}
	}
	if n != 2495 || pages != 3 {
		t.Fatalf("%d entities in %d pages", n, pages)
	}

	// A failed batch: the SDK sees 202 and the inner 409 at index 2.
	fail := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("q", "new1", nil)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entity("q", "r00001", map[string]any{"X": 1})},
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("q", "r00002", nil)},
	}
	_, err = c.SubmitTransaction(ctx, fail, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 202 {
		t.Fatalf("failed batch: %v", err)
	}
	if _, err := c.GetEntity(ctx, "q", "new1", nil); codeOf(err) != "404 ResourceNotFound" {
		t.Fatal("a failed batch left its first insert behind")
	}
	// Two partitions in one batch: the real service refuses it.
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("a", "1", nil)},
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("b", "1", nil)},
	}, nil)
	if !errors.As(err, &re) || re.StatusCode != 202 {
		t.Fatalf("cross-partition batch: %v", err)
	}
	tables := svc.NewListTablesPager(nil)
	p, err := tables.NextPage(ctx)
	if err != nil || len(p.Tables) != 1 || *p.Tables[0].Name != "People" {
		t.Fatalf("tables: %v", err)
	}
	if _, err := svc.DeleteTable(ctx, "People", nil); err != nil {
		t.Fatal(err)
	}
}

func TestAuthentication(t *testing.T) {
	svc, url := serve(t)
	svc.CreateTable(ctx, "Secure", nil)
	// No credentials, and a wrong key.
	anon, _ := aztables.NewServiceClientWithNoCredential(url, nil)
	if _, err := anon.CreateTable(ctx, "Other", nil); codeOf(err) != "403 AuthenticationFailed" {
		t.Fatalf("anonymous: %v", err)
	}
	wrong, _ := aztables.NewSharedKeyCredential(rest.DevAccount, base64.StdEncoding.EncodeToString([]byte("not the key at all, no")))
	bad, _ := aztables.NewServiceClientWithSharedKey(url, wrong, nil)
	if _, err := bad.CreateTable(ctx, "Other", nil); codeOf(err) != "403 AuthenticationFailed" {
		t.Fatalf("wrong key: %v", err)
	}
	// A table SAS with read and add, then one that expired.
	c := svc.NewClient("Secure")
	for _, tc := range []struct {
		perms  aztables.SASPermissions
		expiry time.Time
		want   string
	}{
		{aztables.SASPermissions{Read: true, Add: true}, time.Now().Add(time.Hour), ""},
		{aztables.SASPermissions{Read: true}, time.Now().Add(time.Hour), "403 AuthorizationPermissionMismatch"},
		{aztables.SASPermissions{Read: true, Add: true}, time.Now().Add(-time.Hour), "403 AuthenticationFailed"},
	} {
		sasURL, err := c.GetTableSASURL(tc.perms, time.Now().Add(-time.Minute), tc.expiry)
		if err != nil {
			t.Fatal(err)
		}
		// The SDK joins a path-style base and the table without a slash.
		_, query, _ := strings.Cut(sasURL, "?")
		sc, _ := aztables.NewClientWithNoCredential(url+"/Secure?"+query, nil)
		_, err = sc.AddEntity(ctx, entity("p", fmt.Sprint(time.Now().UnixNano()), nil), nil)
		if got := codeOf(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Fatalf("SAS %+v expiring %v: %v", tc.perms, tc.expiry, err)
		}
	}
	// An account SAS: the SDK's default allows HTTPS only, so over plain
	// HTTP it is refused; one that allows HTTP works.
	sasURL, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Object: true, Container: true, Service: true},
		aztables.AccountSASPermissions{Read: true, Add: true, Create: true, List: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	httpsOnly, _ := aztables.NewServiceClientWithNoCredential(sasURL, nil)
	if _, err := httpsOnly.NewClient("Secure").AddEntity(ctx, entity("p", "acct", nil), nil); codeOf(err) != "403 AuthorizationProtocolMismatch" {
		t.Fatalf("an HTTPS-only account SAS over HTTP: %v", err)
	}
	cred, _ := aztables.NewSharedKeyCredential(rest.DevAccount, rest.DevKey)
	qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: "racl", Services: "t", ResourceTypes: "sco"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	asvc, _ := aztables.NewServiceClientWithNoCredential(url+"?"+qp.Encode(), nil)
	if _, err := asvc.NewClient("Secure").AddEntity(ctx, entity("p", "acct", nil), nil); err != nil {
		t.Fatalf("account SAS: %v", err)
	}
}

func TestMalformedRequests(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, _ := engine.New(cfg)
	defer e.Close()
	e.CreateTable(ctx, "t1x")
	srv := httptest.NewServer(rest.New(e, rest.Config{Account: rest.DevAccount, Auth: rest.AuthNone}))
	defer srv.Close()
	base := srv.URL + "/" + rest.DevAccount
	for _, tc := range []struct {
		method, path, ctype, body string
		status                    int
		code                      string
	}{
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a"}`, 400, tables.CodePropertiesNeedValue},
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a","RowKey":`, 400, tables.CodeInvalidInput},
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a","RowKey":"b","X":{"y":1}}`, 400, tables.CodeInvalidInput},
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a","RowKey":"b","X":"z","X@odata.type":"Edm.Int64"}`, 400, tables.CodeInvalidValueType},
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a","RowKey":"b","X":"z","X@odata.type":"Edm.Money"}`, 400, tables.CodeInvalidInput},
		{"GET", "/t1x(PartitionKey='a',RowKey=b)", "", "", 400, tables.CodeInvalidInput},
		{"GET", "/t1x(PartitionKey='a')", "", "", 400, tables.CodeInvalidInput},
		{"GET", "/t1x()?$filter=Age%20eq", "", "", 400, tables.CodeInvalidInput},
		{"GET", "/t1x()?$top=0", "", "", 400, tables.CodeInvalidQueryParameterValue},
		{"GET", "/t1x()?NextPartitionKey=bogus", "", "", 400, tables.CodeInvalidInput},
		{"GET", "/nosuch()", "", "", 404, tables.CodeTableNotFound},
		{"POST", "/$batch", "multipart/mixed", "x", 400, tables.CodeInvalidInput},
		{"POST", "/$batch", "multipart/mixed; boundary=b", "--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--", 400, tables.CodeInvalidInput},
		{"POST", "/$batch", "multipart/mixed; boundary=b", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nnot http\r\n--c--\r\n--b--", 400, tables.CodeInvalidInput},
		{"PUT", "/Tables", "", "", 405, "UnsupportedHttpVerb"},
		{"POST", "/Tables", "application/json", `{"TableName":"a-b"}`, 400, tables.CodeInvalidResourceName},
		{"POST", "/t1x", "application/json", `{"PartitionKey":"a","RowKey":"b","P":"` + strings.Repeat("x", 6<<20) + `"}`, 413, tables.CodeRequestBodyTooLarge},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		var body struct {
			E struct {
				Code string `json:"code"`
			} `json:"odata.error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || body.E.Code != tc.code || resp.Header.Get("x-ms-error-code") != tc.code {
			t.Errorf("%s %s: %d %q, want %d %s", tc.method, tc.path, resp.StatusCode, body.E.Code, tc.status, tc.code)
		}
	}
}
