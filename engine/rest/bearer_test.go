package rest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

// jwt makes a token of the form Microsoft Entra ID issues, with the given
// claims and a signature the server cannot check.
func jwt(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "RS256", "typ": "JWT"}) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte("signature"))
}

// tenant is the tenant the test tokens name.
const tenant = "ab1f708d-50f6-404c-a006-d71b2ac7a606"

func validClaims() map[string]any {
	now := time.Now()
	return map[string]any{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/" + tenant + "/", "tid": tenant,
		"exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix()}
}

// token is a token credential that hands out a fixed token, as Microsoft
// Entra ID would.
type token struct{ tok string }

func (t token) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: t.tok, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// bearerServer serves an engine over TLS that takes bearer tokens, for the
// test, and returns it with its engine and key; both close when the test ends.
func bearerServer(t *testing.T) (*httptest.Server, *engine.Engine, []byte) {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	srv := httptest.NewTLSServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key, TLS: true, Bearer: true}))
	t.Cleanup(srv.Close)
	return srv, e, key
}

func TestBearerTokens(t *testing.T) {
	srv, e, key := bearerServer(t)
	svc, err := aztables.NewServiceClient(srv.URL+"/"+rest.DevAccount, token{jwt(validClaims())}, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "Tokens", nil); err != nil {
		t.Fatalf("bearer over TLS: %v", err)
	}
	expired, notYet, otherAud, noExp := validClaims(), validClaims(), validClaims(), validClaims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	notYet["nbf"] = time.Now().Add(time.Hour).Unix()
	otherAud["aud"] = "https://management.azure.com"
	delete(noExp, "exp")
	arrayAud := validClaims()
	arrayAud["aud"] = []string{"https://example.org", "https://storage.azure.com/"}
	for _, tc := range []struct {
		name, tok string
		status    int
		code      string
	}{
		{"valid", jwt(validClaims()), 200, ""},
		{"audience in a list", jwt(arrayAud), 200, ""},
		{"expired", jwt(expired), 401, "InvalidAuthenticationInfo"},
		{"not yet valid", jwt(notYet), 401, "InvalidAuthenticationInfo"},
		{"another audience", jwt(otherAud), 401, "InvalidAuthenticationInfo"},
		{"no expiry", jwt(noExp), 401, "InvalidAuthenticationInfo"},
		{"not a JWT", "any-token", 401, "InvalidAuthenticationInfo"},
		{"unsigned", jwt(validClaims())[:len(jwt(validClaims()))-len("c2lnbmF0dXJl")], 401, "InvalidAuthenticationInfo"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/"+rest.DevAccount+"/Tables", nil)
		req.Header.Set("Authorization", "Bearer "+tc.tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code)
		}
	}
	// Without TLS, or without the operator's consent, no token is accepted,
	// even a well-formed one.
	for name, cfg := range map[string]rest.Config{
		"plain HTTP":  {Account: rest.DevAccount, Key: key, Bearer: true},
		"not enabled": {Account: rest.DevAccount, Key: key, TLS: true},
		"private key": {Account: rest.DevAccount, Key: []byte("another key"), TLS: true},
	} {
		req := httptest.NewRequest("GET", "https://127.0.0.1/"+rest.DevAccount+"/Tables", nil)
		req.Header.Set("Authorization", "Bearer "+jwt(validClaims()))
		w := httptest.NewRecorder()
		rest.New(e, cfg).ServeHTTP(w, req)
		if w.Code != 403 {
			t.Errorf("bearer, %s: %d, want 403", name, w.Code)
		}
	}
}

// TestBearerAudiencesAndIssuers checks the audiences and issuers the service
// takes for a Table service token, and some it refuses.
func TestBearerAudiencesAndIssuers(t *testing.T) {
	srv, _, _ := bearerServer(t)
	endpoint := srv.URL + "/" + rest.DevAccount
	with := func(claim string, v any) string {
		c := validClaims()
		if v == nil {
			delete(c, claim)
		} else {
			c[claim] = v
		}
		return jwt(c)
	}
	for _, tc := range []struct {
		name, tok string
		ok        bool
	}{
		{"audience storage", with("aud", "https://storage.azure.com"), true},
		{"audience storage with a slash", with("aud", "https://storage.azure.com/"), true},
		{"audience the storage application", with("aud", "e406a681-f3d4-42a8-90b6-c2b029497af1"), true},
		{"audience the account's endpoint", with("aud", "https://devstoreaccount1.table.core.windows.net"), true},
		{"audience the account's endpoint with a slash", with("aud", "https://devstoreaccount1.table.core.windows.net/"), true},
		{"audience the served endpoint", with("aud", endpoint), true},
		{"audience the served endpoint with a slash", with("aud", endpoint+"/"), true},
		{"audience another account", with("aud", "https://invalidaccount.table.core.windows.net"), false},
		{"audience the account's blob endpoint", with("aud", "https://devstoreaccount1.blob.core.windows.net"), false},
		{"audience another host", with("aud", "https://example.org/"+rest.DevAccount), false},
		{"audience another application", with("aud", "00000003-0000-0000-c000-000000000000"), false},
		{"audience a scope", with("aud", "https://storage.azure.com/.default"), false},
		{"no audience", with("aud", nil), false},
		{"issuer v1.0", with("iss", "https://sts.windows.net/"+tenant+"/"), true},
		{"issuer v2.0", with("iss", "https://login.microsoftonline.com/"+tenant+"/v2.0"), true},
		{"no issuer", with("iss", nil), false},
		{"issuer elsewhere", with("iss", "https://invalidissuer/"+tenant+"/"), false},
		{"issuer on a lookalike host", with("iss", "https://sts.windows.net.example.org/"+tenant+"/"), false},
		{"issuer without a tenant", with("iss", "https://sts.windows.net/"), false},
		{"issuer with a tenant that is not a GUID", with("iss", "https://sts.windows.net/contoso/"), false},
		{"issuer v2.0 without its version", with("iss", "https://login.microsoftonline.com/"+tenant+"/"), false},
		{"issuer for another tenant than tid", with("iss", "https://sts.windows.net/00000000-0000-0000-0000-000000000001/"), false},
	} {
		req, _ := http.NewRequest("GET", endpoint+"/Tables", nil)
		req.Header.Set("Authorization", "Bearer "+tc.tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ok := resp.StatusCode == 200; ok != tc.ok {
			t.Errorf("%s: %d %s, want accepted %v", tc.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.ok)
		} else if !ok && (resp.StatusCode != 401 || resp.Header.Get("x-ms-error-code") != "InvalidAuthenticationInfo") {
			t.Errorf("%s: %d %s, want 401 InvalidAuthenticationInfo", tc.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
}

// TestBearerTokenCannotReachTableACL checks that a bearer token cannot read
// or set a table's stored access policies: only the account owner may, and
// the service answers a token 404 ResourceNotFound.
func TestBearerTokenCannotReachTableACL(t *testing.T) {
	srv, _, _ := bearerServer(t)
	svc, err := aztables.NewServiceClient(srv.URL+"/"+rest.DevAccount, token{jwt(validClaims())},
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: srv.Client(), Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "Policies", nil); err != nil {
		t.Fatalf("bearer create table: %v", err)
	}
	c := svc.NewClient("Policies")
	if _, err := c.GetAccessPolicy(ctx, nil); codeOf(err) != "404 ResourceNotFound" {
		t.Errorf("bearer get ACL: %v, want 404 ResourceNotFound", err)
	}
	id := "p1"
	start, expiry, perm := time.Now().Add(-time.Minute), time.Now().Add(time.Hour), "r"
	if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: &id, AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: &perm}}}}); codeOf(err) != "404 ResourceNotFound" {
		t.Errorf("bearer set ACL: %v, want 404 ResourceNotFound", err)
	}
	// Entities are the token's to use.
	if _, err := c.AddEntity(ctx, entity("p", "r", nil), nil); err != nil {
		t.Errorf("bearer add entity: %v", err)
	}
}
