package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/tablebench/tablebench/workloads/aztarget"
	"github.com/tablebench/tablebench/workloads/gctune"
)

// TestGCPolicyIsTheCommands: building a target leaves the process's
// collector policy alone; the command names it, once: a run against an
// endpoint is a load generator, a run on the engine holds its store.
func TestGCPolicyIsTheCommands(t *testing.T) {
	defer gctune.Use(gctune.Using())
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close() // every request fails at once
	getenv := csEnv("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + aztarget.DevelopmentKey + ";TableEndpoint=" + url + "/devstoreaccount1;")

	gctune.Use(gctune.Store)
	tf := targetFlags{target: "table", az: aztarget.DefaultConfig()}
	_, release, err := tf.build(getenv, 1)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if p := gctune.Using(); p != gctune.Store {
		t.Fatalf("building a Table target made the process's GC policy %v", p)
	}

	tb(t, context.Background(), getenv, "run", "--target=table", "--quiet", "--duration=1s", "--warmup=0s")
	if p := gctune.Using(); p != gctune.Load {
		t.Fatalf("after a run against an endpoint the GC policy is %v, want load", p)
	}
	tb(t, context.Background(), nil, "run", "--quiet", "--threads=1", "--duration=1s", "--warmup=0s")
	if p := gctune.Using(); p != gctune.Store {
		t.Fatalf("after a run on the engine the GC policy is %v, want store", p)
	}
}
