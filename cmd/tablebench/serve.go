package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/workloads/gctune"
)

func serveCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "[--addr 127.0.0.1:10002] [--profile wa2010|modern|none] [flags]")
	addr := fs.String("addr", "127.0.0.1:10002", "address to listen on; port 0 picks a free one")
	profile := fs.String("profile", "wa2010", "engine model: wa2010, modern or none")
	scale := fs.Float64("time-scale", 1, "model seconds per wall second")
	presplit := fs.Bool("presplit", true, "start tables split into one range partition per server core, as after a warm-up (default: true under wa2010 and modern; false under none, which models no servers, so a scan is not cut into a page per range partition)")
	account := fs.String("account", rest.DevAccount, "account name clients use")
	keyEnv := fs.String("key-env", "", "environment variable holding the account key (base64); default: the well-known development key")
	auth := fs.String("auth", rest.AuthSharedKey, "sharedkey (SharedKeyLite, SharedKey and SAS; bearer tokens with --bearer) or none")
	cert := fs.String("tls-cert", "", "TLS certificate file; with --tls-key, serve HTTPS and accept bearer tokens")
	keyFile := fs.String("tls-key", "", "TLS key file")
	bearer := fs.Bool("bearer", false, "with TLS, accept bearer tokens: their form, expiry and storage audience are checked, their signature is not")
	grace := fs.Duration("grace", 10*time.Second, "on interrupt, how long requests in flight may finish before their connections are closed")
	partitionRate := fs.Float64("partition-rate", 0, "entities/s one PartitionKey serves before 503 ServerBusy (default: the profile's; any profile, none included)")
	accountRate := fs.Float64("account-rate", 0, "entities/s the account serves before 503 ServerBusy (default: the profile's)")
	latencyScale := fs.Float64("latency-scale", 1, "multiply the profile's latencies (front end, commit, stalls) by this factor; a partition's capacity is kept")
	faultsFile := fs.String("faults", "", "YAML file of fault rules, reloaded when it changes (see the README); also enables the admin endpoint's rules")
	allowHeader := fs.Bool("allow-fault-header", false, "let a request ask for its own fault with the x-tablebench-fault header")
	deleteDelay := fs.Duration("table-delete-delay", 0, "how long a deleted table's name is refused (409 TableBeingDeleted) before it can be created again; 0 allows it at once (default: 0 under --profile none, which models no time; 40s, the service's, under wa2010 and modern)")
	insecure := fs.Bool("allow-insecure-network", false, "serve on an address other hosts can reach with the publicly known development key or --auth none, so that anyone who reaches it can read and write (a container's published port, a test network)")
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := engine.ProfileByName(*profile)
	if err != nil {
		return usagef("--profile: %v", err)
	}
	if *scale <= 0 || *scale > 1000 {
		return usagef("--time-scale %g is out of range: use a factor above 0 up to 1000", *scale)
	}
	if *auth != rest.AuthSharedKey && *auth != rest.AuthNone {
		return usagef("--auth %q is not known: use sharedkey or none", *auth)
	}
	if (*cert == "") != (*keyFile == "") {
		return usagef("give both --tls-cert and --tls-key, or neither")
	}
	if *bearer && *cert == "" {
		return usagef("--bearer needs TLS: give --tls-cert and --tls-key too")
	}
	if *grace < 0 {
		return usagef("--grace %v is negative: use a duration such as 10s", *grace)
	}
	if *partitionRate < 0 || *accountRate < 0 {
		return usagef("--partition-rate and --account-rate must be positive entities/s, such as 200")
	}
	if *latencyScale <= 0 || *latencyScale > 1000 {
		return usagef("--latency-scale %g is out of range: use a factor above 0 up to 1000", *latencyScale)
	}
	if *deleteDelay < 0 {
		return usagef("--table-delete-delay %v is negative: use a duration such as 40s, or 0 to allow it at once", *deleteDelay)
	}
	if !given(fs.FlagSet, "table-delete-delay") {
		*deleteDelay = 0
		if p.Model {
			*deleteDelay = engine.ServiceTableDeleteGrace
		}
	}
	if *latencyScale != 1 && !p.Model {
		return usagef("--latency-scale: profile %s models no latency; use wa2010 or modern", p.Name)
	}
	devKey := *keyEnv == "" || e.getenv(*keyEnv) == rest.DevKey
	if !*insecure && (devKey || *auth == rest.AuthNone) && !loopbackAddr(*addr) {
		why := "the publicly known development key"
		if *auth == rest.AuthNone {
			why = "--auth none"
		}
		return usagef("--addr %s can be reached from other hosts, and with %s anyone there can read and write: give a key of your own (--key-env VAR), listen on 127.0.0.1, or accept the risk with --allow-insecure-network", *addr, why)
	}
	keyText, keyShown := rest.DevKey, rest.DevKey
	if *keyEnv != "" {
		keyText = e.getenv(*keyEnv)
		if keyText == "" {
			return usagef("--key-env: $%s is empty; set it to the base64 account key", *keyEnv)
		}
		keyShown = "<the value of $" + *keyEnv + ">"
	}
	key, err := rest.DecodeKey(keyText)
	if err != nil {
		return usagef("--key-env: $%s is not a base64 key", *keyEnv)
	}
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.TimeScale = p.ScaleLatency(*latencyScale), *scale
	cfg.PartitionRate, cfg.AccountRate = *partitionRate, *accountRate
	cfg.TableDeleteGrace = *deleteDelay
	if !given(fs.FlagSet, "presplit") && !p.Model {
		// Range partitions only matter to the model; unmodelled, they would
		// only end a query's pages at their bounds, which a client of a
		// local endpoint would read as the service's paging.
		*presplit = false
	}
	if *presplit {
		cfg.PreSplit = p.SteadySplit()
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	defer eng.Close()
	gctune.Use(gctune.Store) // the store grows with what clients write

	rates := eng.Rates()
	var rules *faults.Set
	if *faultsFile != "" {
		rules = faults.NewSet(uint64(time.Now().UnixNano()))
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		if err := faults.Watch(wctx, rules, *faultsFile, time.Second, func(msg string) { fmt.Fprintln(e.stderr, msg) }); err != nil {
			return usagef("--faults: %v", err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("--addr: %v", err)
	}
	tls := *cert != ""
	srv := rest.New(eng, rest.Config{Account: *account, Key: key, Auth: *auth, TLS: tls, Bearer: *bearer, Faults: rules, AllowFaultHeader: *allowHeader}).HTTPServer(rest.DefaultTimeouts())
	scheme := "http"
	if tls {
		scheme = "https"
	}
	endpoint := fmt.Sprintf("%s://%s/%s", scheme, ln.Addr(), *account)
	fmt.Fprintf(e.stdout, "serving the engine (profile %s) at %s\n", p.Name, endpoint)
	fmt.Fprintf(e.stdout, "connection string: %s\n", rest.ConnectionString(scheme, *account, keyShown, endpoint))
	fmt.Fprintf(e.stdout, "budgets: %s entities/s per PartitionKey, %s per account; metrics at %s://%s%s\n", rateText(rates.Partition), rateText(rates.Account), scheme, ln.Addr(), rest.MetricsPath)
	fmt.Fprintf(e.stdout, "a deleted table's name can be created again after %v (--table-delete-delay)\n", *deleteDelay)
	if rules != nil {
		fmt.Fprintf(e.stdout, "faults: %d rules from %s, reloaded when it changes\n", len(rules.Rules()), *faultsFile)
	}
	errc := make(chan error, 1)
	go func() {
		if tls {
			errc <- srv.ServeTLS(ln, *cert, *keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Requests in flight may finish within the grace period; connections
	// still open then (a stalled client, say) are closed, and the stop is
	// still a clean one.
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		srv.Close()
		fmt.Fprintf(e.stderr, "closed the connections still open after the %v grace period\n", *grace)
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
