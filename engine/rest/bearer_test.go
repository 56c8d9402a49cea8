package rest_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

// token is a token credential that hands out a fixed token, as Microsoft
// Entra ID would.
type token struct{}

func (token) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "any-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestBearerOverTLS(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	e, _ := engine.New(cfg)
	defer e.Close()
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	srv := httptest.NewTLSServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key, TLS: true}))
	defer srv.Close()
	svc, err := aztables.NewServiceClient(srv.URL+"/"+rest.DevAccount, token{}, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "Tokens", nil); err != nil {
		t.Fatalf("bearer over TLS: %v", err)
	}
	// The same server without TLS refuses bearer tokens.
	plain := httptest.NewServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key}))
	defer plain.Close()
	req := httptest.NewRequest("GET", plain.URL+"/"+rest.DevAccount+"/Tables", nil)
	req.Header.Set("Authorization", "Bearer any-token")
	w := httptest.NewRecorder()
	rest.New(e, rest.Config{Account: rest.DevAccount, Key: key}).ServeHTTP(w, req)
	if w.Code != 403 {
		t.Fatalf("bearer without TLS: %d", w.Code)
	}
}
