// Package resttest starts a served engine for a Go test, as httptest starts
// a server: an Azure Table endpoint on a loopback port with the engine's
// model, rate overrides and fault rules, and a connection string any SDK
// takes. It is how a test of an application's retry and backoff code meets
// 503 ServerBusy, timeouts and moving partitions without an account.
package resttest

import (
	"net/http/httptest"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/faults"
)

// Options configure a test server; the zero value serves the engine
// without a model (no latency, no throttling) and with no faults.
type Options struct {
	// Profile is the engine's model: "none" (default), "wa2010", "modern"
	// or "cosmos".
	Profile string
	// RU is, under the cosmos profile, each table's provisioned
	// throughput in RU/s; 0 keeps the profile's.
	RU float64
	// PartitionRate and AccountRate override the profile's budgets, in
	// entities/s; 0 keeps them.
	PartitionRate, AccountRate float64
	// LatencyScale multiplies the profile's latencies; 0 keeps them.
	LatencyScale float64
	// Faults are rules in force from the start; the server's Faults set
	// changes them later.
	Faults []faults.Rule
	// AllowFaultHeader honours the x-tablebench-fault request header.
	AllowFaultHeader bool
}

// Server is a served engine for one test, closed when the test ends.
type Server struct {
	// URL is the Table endpoint, such as http://127.0.0.1:PORT/devstoreaccount1.
	URL string
	// ConnectionString is the endpoint with the development account's
	// (public) key, for any Azure Tables SDK.
	ConnectionString string
	Account          string
	Key              []byte
	Engine           *engine.Engine
	Faults           *faults.Set
	srv              *httptest.Server
}

// NewServer starts a served engine for t and closes it when t ends.
func NewServer(t testing.TB, o Options) *Server {
	t.Helper()
	name := o.Profile
	if name == "" {
		name = "none"
	}
	p, err := engine.ProfileByName(name)
	if err != nil {
		t.Fatalf("resttest: %v", err)
	}
	if o.LatencyScale > 0 {
		p = p.ScaleLatency(o.LatencyScale)
	}
	if o.RU > 0 {
		p.RU = o.RU
	}
	cfg := engine.DefaultConfig()
	cfg.Profile = p
	cfg.PartitionRate, cfg.AccountRate = o.PartitionRate, o.AccountRate
	cfg.TableDeleteGrace = 0 // tests make and drop tables freely
	if p.Model {
		cfg.PreSplit = p.SteadySplit()
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatalf("resttest: %v", err)
	}
	set := faults.NewSet(1)
	set.Replace(o.Faults)
	s := &Server{Account: rest.DevAccount, Engine: eng, Faults: set}
	key, err := rest.DecodeKey(rest.DevKey)
	if err != nil {
		t.Fatalf("resttest: %v", err)
	}
	s.Key = key
	s.srv = httptest.NewServer(rest.New(eng, rest.Config{Account: s.Account, Key: key, Faults: set, AllowFaultHeader: o.AllowFaultHeader}))
	s.URL = s.srv.URL + "/" + s.Account
	s.ConnectionString = rest.ConnectionString("http", s.Account, rest.DevKey, s.URL)
	t.Cleanup(func() {
		s.srv.Close()
		eng.Close()
	})
	return s
}

// Root returns the server's root URL, where its metrics and admin
// endpoints are.
func (s *Server) Root() string { return s.srv.URL }
