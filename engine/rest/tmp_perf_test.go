package rest_test

import (
	"encoding/base64"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/resttest"
)

func BenchmarkTmpOne(b *testing.B) {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit = engine.None(), 16
	e, _ := engine.New(cfg)
	defer e.Close()
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	var srv *httptest.Server
	if os.Getenv("TMP_CANNED") != "" {
		srv = httptest.NewServer(resttest.Canned())
	} else {
		srv = httptest.NewServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key}))
	}
	defer srv.Close()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + rest.DevKey + ";TableEndpoint=" + srv.URL + "/devstoreaccount1;"
	for b.Loop() {
		r := rate(b, conn, os.Getenv("TMP_OP"), 8*time.Second)
		b.ReportMetric(r, "ops/s")
	}
}
