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

func validClaims() map[string]any {
	now := time.Now()
	return map[string]any{"aud": "https://storage.azure.com", "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix()}
}

// token is a token credential that hands out a fixed token, as Microsoft
// Entra ID would.
type token struct{ tok string }

func (t token) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: t.tok, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestBearerTokens(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, _ := engine.New(cfg)
	defer e.Close()
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	srv := httptest.NewTLSServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key, TLS: true, Bearer: true}))
	defer srv.Close()
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
