package rest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine/rest"
)

// TestUnknownAccountIsNotFound checks that a path-style request naming an
// account other than the server's gets 404 ResourceNotFound, in the
// storage services' XML error form, whatever its credentials: the account
// does not exist here, so nothing about the request is checked against it.
func TestUnknownAccountIsNotFound(t *testing.T) {
	base := servedEngine(t)
	other := strings.TrimSuffix(base, rest.DevAccount) + "devstoreaccountnotexist"
	noRetry := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}

	cred, _ := aztables.NewSharedKeyCredential("devstoreaccountnotexist", rest.DevKey)
	svc, err := aztables.NewServiceClientWithSharedKey(other, cred, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "Missing", nil); codeOf(err) != "404 ResourceNotFound" {
		t.Errorf("shared key for another account: %v, want 404 ResourceNotFound", err)
	}
	qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: "racwdl", Services: "t", ResourceTypes: "sco"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	sas, _ := aztables.NewServiceClientWithNoCredential(other+"?"+qp.Encode(), noRetry)
	if _, err := sas.CreateTable(ctx, "Missing", nil); codeOf(err) != "404 ResourceNotFound" {
		t.Errorf("account SAS for another account: %v, want 404 ResourceNotFound", err)
	}

	for _, path := range []string{"/Tables", "/Missing(PartitionKey='p',RowKey='r')", "/$batch", "/?restype=service&comp=properties"} {
		resp, err := http.Get(other + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || resp.Header.Get("x-ms-error-code") != "ResourceNotFound" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") ||
			!strings.Contains(string(body), "<Error><Code>ResourceNotFound</Code><Message>The specified resource does not exist.") {
			t.Errorf("GET %s on another account: %d %s %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}

	// The server's own account, path style and host style, is served as before.
	mine, _ := aztables.NewSharedKeyCredential(rest.DevAccount, rest.DevKey)
	own, _ := aztables.NewServiceClientWithSharedKey(base, mine, noRetry)
	if _, err := own.CreateTable(ctx, "Present", nil); err != nil {
		t.Fatalf("own account: %v", err)
	}
	hostStyle, _ := aztables.NewServiceClientWithSharedKey(strings.TrimSuffix(base, "/"+rest.DevAccount), mine, noRetry)
	if _, err := hostStyle.NewClient("Present").AddEntity(ctx, entity("p", "r", nil), nil); err != nil {
		t.Fatalf("host style: %v", err)
	}
}
