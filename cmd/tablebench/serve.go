package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

func serveCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "[--addr 127.0.0.1:10002] [--profile wa2010|modern|none] [flags]")
	addr := fs.String("addr", "127.0.0.1:10002", "address to listen on; port 0 picks a free one")
	profile := fs.String("profile", "wa2010", "engine model: wa2010, modern or none")
	scale := fs.Float64("time-scale", 1, "model seconds per wall second")
	presplit := fs.Bool("presplit", true, "start tables split into one range partition per server core, as after a warm-up")
	account := fs.String("account", rest.DevAccount, "account name clients use")
	keyEnv := fs.String("key-env", "", "environment variable holding the account key (base64); default: the well-known development key")
	auth := fs.String("auth", rest.AuthSharedKey, "sharedkey (SharedKeyLite, SharedKey and SAS; bearer tokens with --bearer) or none")
	cert := fs.String("tls-cert", "", "TLS certificate file; with --tls-key, serve HTTPS and accept bearer tokens")
	keyFile := fs.String("tls-key", "", "TLS key file")
	bearer := fs.Bool("bearer", false, "with TLS, accept bearer tokens: their form, expiry and storage audience are checked, their signature is not")
	grace := fs.Duration("grace", 10*time.Second, "on interrupt, how long requests in flight may finish before their connections are closed")
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
	keyText, keyShown := rest.DevKey, rest.DevKey
	if *keyEnv != "" {
		keyText = e.getenv(*keyEnv)
		if keyText == "" {
			return usagef("--key-env: $%s is empty; set it to the base64 account key", *keyEnv)
		}
		keyShown = "<the value of $" + *keyEnv + ">"
	}
	key, err := base64.StdEncoding.DecodeString(keyText)
	if err != nil || len(key) == 0 {
		return usagef("--key-env: $%s is not a base64 key", *keyEnv)
	}
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.TimeScale = p, *scale
	if *presplit {
		cfg.PreSplit = p.SteadySplit()
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	defer eng.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("--addr: %v", err)
	}
	tls := *cert != ""
	srv := rest.New(eng, rest.Config{Account: *account, Key: key, Auth: *auth, TLS: tls, Bearer: *bearer}).HTTPServer(rest.DefaultTimeouts())
	scheme := "http"
	if tls {
		scheme = "https"
	}
	endpoint := fmt.Sprintf("%s://%s/%s", scheme, ln.Addr(), *account)
	fmt.Fprintf(e.stdout, "serving the engine (profile %s) at %s\n", p.Name, endpoint)
	fmt.Fprintf(e.stdout, "connection string: DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s;\n", scheme, *account, keyShown, endpoint)
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
