package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/workloads/gctune"
)

// serveFlags are serve's flags: the engine's, as every command names them,
// and the server's.
type serveFlags struct {
	eng                                engineFlags
	addr, account, keyEnv, auth        string
	cert, keyFile, faultsFile          string
	bearer, allowFaultHeader, insecure bool
	grace, deleteDelay                 time.Duration
}

func newServeFlags(e *env) (*flagSet, *serveFlags) {
	fs := newFlagSet(e, "serve", "[--addr 127.0.0.1:10002] [--profile wa2010|modern|none|FILE.yaml] [flags]")
	s := &serveFlags{}
	fs.StringVar(&s.addr, "addr", "127.0.0.1:10002", "address to listen on; port 0 picks a free one")
	s.eng.register(fs.FlagSet, served, true)
	fs.StringVar(&s.account, "account", rest.DevAccount, "account name clients use")
	fs.StringVar(&s.keyEnv, "account-key-env", "", "environment variable holding the account key (base64), as run names it; default: the well-known development key (--key-env is an older name)")
	fs.alias("key-env", "account-key-env")
	fs.StringVar(&s.auth, "auth", rest.AuthSharedKey, "sharedkey (SharedKeyLite, SharedKey and SAS; bearer tokens with --bearer) or none")
	fs.StringVar(&s.cert, "tls-cert", "", "TLS certificate file; with --tls-key, serve HTTPS and accept bearer tokens")
	fs.StringVar(&s.keyFile, "tls-key", "", "TLS key file")
	fs.BoolVar(&s.bearer, "bearer", false, "with TLS, accept bearer tokens: their form, expiry and storage audience are checked, their signature is not")
	fs.DurationVar(&s.grace, "grace", 10*time.Second, "on interrupt, how long requests in flight may finish before their connections are closed")
	fs.StringVar(&s.faultsFile, "faults", "", "YAML file of fault rules, reloaded when it changes (see the README); also enables the admin endpoint's rules")
	fs.BoolVar(&s.allowFaultHeader, "allow-fault-header", false, "let a request ask for its own fault with the x-tablebench-fault header")
	fs.DurationVar(&s.deleteDelay, "table-delete-delay", 0, "how long a deleted table's name is refused (409 TableBeingDeleted) before it can be created again; 0 allows it at once (default: 0 under --profile none, which models no time; 40s, the service's, under wa2010 and modern)")
	fs.BoolVar(&s.insecure, "allow-insecure-network", false, "serve on an address other hosts can reach with the publicly known development key or --auth none, so that anyone who reaches it can read and write (a container's published port, a test network)")
	return fs, s
}

// engineConfig checks the flags and returns the served engine's
// configuration, built from the same engine flags as run's.
func (s *serveFlags) engineConfig(fs *flagSet) (engine.Config, error) {
	cfg, err := s.eng.config(0)
	if err != nil {
		return cfg, err
	}
	switch {
	case s.auth != rest.AuthSharedKey && s.auth != rest.AuthNone:
		return cfg, usagef("--auth %q is not known: use sharedkey or none", s.auth)
	case (s.cert == "") != (s.keyFile == ""):
		return cfg, usagef("give both --tls-cert and --tls-key, or neither")
	case s.bearer && s.cert == "":
		return cfg, usagef("--bearer needs TLS: give --tls-cert and --tls-key too")
	case s.grace < 0:
		return cfg, usagef("--grace %v is negative: use a duration such as 10s", s.grace)
	case s.deleteDelay < 0:
		return cfg, usagef("--table-delete-delay %v is negative: use a duration such as 40s, or 0 to allow it at once", s.deleteDelay)
	}
	if !given(fs.FlagSet, "table-delete-delay") {
		s.deleteDelay = 0
		if cfg.Profile.Model {
			s.deleteDelay = engine.ServiceTableDeleteGrace
		}
	}
	cfg.TableDeleteGrace = s.deleteDelay
	return cfg, nil
}

// key returns the account key and how the connection string shows it: the
// development key itself, which is public, or the variable that holds one.
// It refuses to serve the public key, or no auth, where other hosts reach.
func (s *serveFlags) key(e *env) (key []byte, shown string, err error) {
	devKey := s.keyEnv == "" || e.getenv(s.keyEnv) == rest.DevKey
	if !s.insecure && (devKey || s.auth == rest.AuthNone) && !loopbackAddr(s.addr) {
		why := "the publicly known development key"
		if s.auth == rest.AuthNone {
			why = "--auth none"
		}
		return nil, "", usagef("--addr %s can be reached from other hosts, and with %s anyone there can read and write: give a key of your own (--account-key-env VAR), listen on 127.0.0.1, or accept the risk with --allow-insecure-network", s.addr, why)
	}
	text, shown := rest.DevKey, rest.DevKey
	if s.keyEnv != "" {
		text = e.getenv(s.keyEnv)
		if text == "" {
			return nil, "", usagef("--account-key-env: $%s is empty; set it to the base64 account key", s.keyEnv)
		}
		shown = "<the value of $" + s.keyEnv + ">"
	}
	key, err = rest.DecodeKey(text)
	if err != nil {
		return nil, "", usagef("--account-key-env: $%s is not a base64 key", s.keyEnv)
	}
	return key, shown, nil
}

// watchFaults loads the fault rules, if a file is named, and reloads them
// when it changes until ctx ends.
func (s *serveFlags) watchFaults(ctx context.Context, e *env) (*faults.Set, error) {
	if s.faultsFile == "" {
		return nil, nil
	}
	rules := faults.NewSet(uint64(time.Now().UnixNano()))
	if err := faults.Watch(ctx, rules, s.faultsFile, time.Second, func(msg string) { fmt.Fprintln(e.stderr, msg) }); err != nil {
		return nil, usagef("--faults: %v", err)
	}
	return rules, nil
}

func serveCmd(ctx context.Context, e *env, args []string) error {
	fs, s := newServeFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := s.engineConfig(fs)
	if err != nil {
		return err
	}
	key, keyShown, err := s.key(e)
	if err != nil {
		return err
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	defer eng.Close()
	gctune.Use(gctune.Store) // the store grows with what clients write
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	rules, err := s.watchFaults(wctx, e)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return usagef("--addr: %v", err)
	}
	tls := s.cert != ""
	srv := rest.New(eng, rest.Config{Account: s.account, Key: key, Auth: s.auth, TLS: tls, Bearer: s.bearer, Faults: rules, AllowFaultHeader: s.allowFaultHeader}).HTTPServer(rest.DefaultTimeouts())
	s.announce(e, eng, ln.Addr(), keyShown, rules)
	return s.serveUntil(ctx, e, srv, ln)
}

// announce prints where the engine is served, with what, and how to
// connect to it.
func (s *serveFlags) announce(e *env, eng *engine.Engine, addr net.Addr, keyShown string, rules *faults.Set) {
	scheme := "http"
	if s.cert != "" {
		scheme = "https"
	}
	endpoint := fmt.Sprintf("%s://%s/%s", scheme, addr, s.account)
	rates := eng.Rates()
	profile := eng.Config().Profile.Name
	if _, file, _ := s.eng.resolveProfile(); file != nil && !file.Builtin {
		profile += fmt.Sprintf(" from %s, sha256 %.12s", file.path, file.SHA256)
	}
	fmt.Fprintf(e.stdout, "serving the engine (profile %s) at %s\n", profile, endpoint)
	fmt.Fprintf(e.stdout, "connection string: %s\n", rest.ConnectionString(scheme, s.account, keyShown, endpoint))
	if p := eng.Config().Profile; p.RequestUnits() {
		fmt.Fprintf(e.stdout, "throughput: %s, answered as Cosmos DB for Table (docs/cosmos.md); metrics at %s://%s%s\n", strings.TrimPrefix(s.eng.describeRU(), ", "), scheme, addr, rest.MetricsPath)
	} else {
		fmt.Fprintf(e.stdout, "budgets: %s entities/s per PartitionKey, %s per account; metrics at %s://%s%s\n", rateText(rates.Partition), rateText(rates.Account), scheme, addr, rest.MetricsPath)
	}
	fmt.Fprintf(e.stdout, "a deleted table's name can be created again after %v (--table-delete-delay)\n", s.deleteDelay)
	if rules != nil {
		fmt.Fprintf(e.stdout, "faults: %d rules from %s, reloaded when it changes\n", len(rules.Rules()), s.faultsFile)
	}
}

// serveUntil serves on ln until the server fails or ctx ends. Requests in
// flight may then finish within the grace period; connections still open
// after it (a stalled client, say) are closed, and the stop is still a
// clean one.
func (s *serveFlags) serveUntil(ctx context.Context, e *env, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() {
		if s.cert != "" {
			errc <- srv.ServeTLS(ln, s.cert, s.keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		srv.Close()
		fmt.Fprintf(e.stderr, "closed the connections still open after the %v grace period\n", s.grace)
	}
	fmt.Fprintln(e.stderr, "stopped")
	return nil
}

func rateText(r float64) string {
	if r <= 0 {
		return "no limit"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// loopbackAddr reports whether a listen address takes connections from this
// host only. An empty host, a wildcard or a name other than localhost may
// reach other hosts.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
