// Package aztarget drives any Azure Table endpoint (an Azure storage
// account, the Cosmos DB Table API, Azurite, or tablebench serve) through
// the aztables SDK, as a workloads Target.
//
// The SDK's retries are off, so every throttling answer reaches the harness
// and is counted. A failed entity group transaction's inner status and code
// are parsed from the response body, which the SDK leaves unparsed, and a
// panic inside the SDK on a malformed response is recovered and counted as
// an error. Secrets never appear in what it returns.
package aztarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
)

// Auth methods.
const (
	AuthConnectionString = "connection-string" // a connection string in an environment variable
	AuthKey              = "key"               // account name and key, the key in an environment variable
	AuthSAS              = "sas"               // a SAS token in an environment variable
	AuthEntra            = "entra"             // Microsoft Entra ID through azidentity's default credential chain
)

// Config says how to reach and authenticate to an endpoint. Secrets are
// named by environment variable, never given directly, so they stay out of
// command lines and shell histories.
type Config struct {
	Auth                string // one of the Auth constants; empty picks from what is set
	ConnectionStringEnv string // default TABLEBENCH_CONNECTION_STRING
	Endpoint            string // the table service URL, e.g. https://acct.table.core.windows.net or http://127.0.0.1:10002/devstoreaccount1
	Account             string // with AuthKey; default: taken from the endpoint
	KeyEnv              string // with AuthKey, default TABLEBENCH_ACCOUNT_KEY
	SASEnv              string // with AuthSAS, default TABLEBENCH_SAS
	// Transport, when set, carries the requests (tests use it for TLS).
	Transport policy.Transporter
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	// Credential, when set, is used for AuthEntra instead of azidentity's
	// default chain.
	Credential azcore.TokenCredential
}

// DefaultConfig returns a configuration that reads a connection string from
// TABLEBENCH_CONNECTION_STRING.
func DefaultConfig() Config {
	return Config{ConnectionStringEnv: "TABLEBENCH_CONNECTION_STRING", KeyEnv: "TABLEBENCH_ACCOUNT_KEY", SASEnv: "TABLEBENCH_SAS"}
}

// DevelopmentKey is the well-known key of the local development account
// (devstoreaccount1) that Azurite and tablebench serve accept. It is public.
const DevelopmentKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// Target is a Table endpoint as a run's target.
type Target struct {
	svc      *aztables.ServiceClient
	endpoint string // without secrets
	secrets  []string
	clock    clock.Clock
	mu       sync.Mutex
	clients  map[string]*aztables.Client
}

var (
	_ workloads.Target    = (*Target)(nil)
	_ workloads.Describer = (*Target)(nil)
)

// New returns a target for the endpoint cfg describes.
func New(cfg Config) (*Target, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := &Target{clock: clock.NewScaled(1), clients: map[string]*aztables.Client{}}
	if err := t.connect(cfg, authOf(cfg, getenv), getenv, clientOptions(cfg)); err != nil {
		return nil, err
	}
	return t, nil
}

// clientOptions are the SDK's options for every client of a target: one
// try per request, and the configured transport or one that keeps a
// connection per worker thread.
func clientOptions(cfg Config) *aztables.ClientOptions {
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1}, // one try: the harness sees and counts every 503
		Transport:       cfg.Transport,
		PerCallPolicies: []policy.Policy{serviceSaysPolicy{}},
	}}
	if opts.Transport == nil {
		opts.Transport = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        4096,
			MaxIdleConnsPerHost: 4096, // one connection per worker thread, kept
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   false,
		}}
	}
	return opts
}

// authOf is the authentication cfg asks for, or else the one its
// environment holds credentials for: with an endpoint, a key, then a SAS;
// without one, a connection string.
func authOf(cfg Config, getenv func(string) string) string {
	auth := cfg.Auth
	if auth == "" {
		auth = AuthConnectionString
		if cfg.Endpoint != "" {
			switch {
			case getenv(orDefault(cfg.KeyEnv, "TABLEBENCH_ACCOUNT_KEY")) != "":
				auth = AuthKey
			case getenv(orDefault(cfg.SASEnv, "TABLEBENCH_SAS")) != "":
				auth = AuthSAS
			}
		}
	}
	return auth
}

// connect makes the target's service client with the authentication auth
// and the credentials from the environment, remembering every secret so
// that no error or record shows it.
func (t *Target) connect(cfg Config, auth string, getenv func(string) string, opts *aztables.ClientOptions) error {
	var err error
	switch auth {
	case AuthConnectionString:
		env := orDefault(cfg.ConnectionStringEnv, "TABLEBENCH_CONNECTION_STRING")
		cs := getenv(env)
		if cs == "" {
			return fmt.Errorf("no connection string in $%s: set it (e.g. to your account's connection string), or give --endpoint with --auth key, sas or entra", env)
		}
		t.svc, t.endpoint, err = fromConnectionString(cs, opts, &t.secrets)
	case AuthKey:
		env := orDefault(cfg.KeyEnv, "TABLEBENCH_ACCOUNT_KEY")
		key := getenv(env)
		if key == "" {
			return fmt.Errorf("no account key in $%s: set it to the account's key", env)
		}
		t.secrets = append(t.secrets, key)
		if cfg.Endpoint == "" {
			return errors.New("key authentication needs --endpoint, the table service URL")
		}
		account := cfg.Account
		if account == "" {
			account = accountFromEndpoint(cfg.Endpoint)
		}
		var cred *aztables.SharedKeyCredential
		if cred, err = aztables.NewSharedKeyCredential(account, key); err == nil {
			t.svc, err = aztables.NewServiceClientWithSharedKey(cfg.Endpoint, cred, opts)
		}
		t.endpoint = cfg.Endpoint
	case AuthSAS:
		env := orDefault(cfg.SASEnv, "TABLEBENCH_SAS")
		sas := strings.TrimPrefix(getenv(env), "?")
		if sas == "" {
			return fmt.Errorf("no SAS token in $%s: set it to a token with table permissions", env)
		}
		t.secrets = append(t.secrets, sas)
		if cfg.Endpoint == "" {
			return errors.New("the SAS needs --endpoint, the table service URL")
		}
		t.svc, err = aztables.NewServiceClientWithNoCredential(strings.TrimRight(cfg.Endpoint, "/")+"?"+sas, opts)
		t.endpoint = cfg.Endpoint
	case AuthEntra:
		if cfg.Endpoint == "" {
			return errors.New("authentication with Microsoft Entra ID needs --endpoint, an https table service URL")
		}
		cred := cfg.Credential
		if cred == nil {
			if cred, err = azidentity.NewDefaultAzureCredential(nil); err != nil {
				return fmt.Errorf("the Microsoft Entra ID credential: %w", err)
			}
		}
		t.svc, err = aztables.NewServiceClient(cfg.Endpoint, cred, opts)
		t.endpoint = cfg.Endpoint
	default:
		return fmt.Errorf("auth %q is not known: use connection-string, key, sas or entra", auth)
	}
	t.endpoint = PublicEndpoint(t.endpoint)
	if err != nil {
		return fmt.Errorf("connecting to the table service: %s", t.redact(err.Error()))
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// fromConnectionString makes a client from a connection string. It also
// takes UseDevelopmentStorage=true (the local development account) and a
// SAS with a TableEndpoint, which the SDK itself does not.
func fromConnectionString(cs string, opts *aztables.ClientOptions, secrets *[]string) (*aztables.ServiceClient, string, error) {
	*secrets = append(*secrets, cs)
	kv := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			kv[k] = v
		}
	}
	for _, k := range []string{"AccountKey", "SharedAccessSignature"} {
		if v := kv[k]; v != "" {
			*secrets = append(*secrets, v)
		}
	}
	if strings.EqualFold(kv["UseDevelopmentStorage"], "true") {
		endpoint := "http://127.0.0.1:10002/devstoreaccount1"
		if p := kv["DevelopmentStorageProxyUri"]; p != "" {
			endpoint = strings.TrimRight(p, "/") + ":10002/devstoreaccount1"
		}
		cred, err := aztables.NewSharedKeyCredential("devstoreaccount1", DevelopmentKey)
		if err != nil {
			return nil, "", err
		}
		svc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, opts)
		return svc, endpoint, err
	}
	if kv["AccountName"] == "" && kv["SharedAccessSignature"] == "" {
		return nil, "", errors.New("the connection string has no AccountName: it should look like DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...;EndpointSuffix=core.windows.net")
	}
	if sas := kv["SharedAccessSignature"]; sas != "" && kv["AccountKey"] == "" {
		endpoint := kv["TableEndpoint"]
		if endpoint == "" {
			endpoint = fmt.Sprintf("%s://%s.table.%s", orDefault(kv["DefaultEndpointsProtocol"], "https"), kv["AccountName"], orDefault(kv["EndpointSuffix"], "core.windows.net"))
		}
		svc, err := aztables.NewServiceClientWithNoCredential(strings.TrimRight(endpoint, "/")+"?"+strings.TrimPrefix(sas, "?"), opts)
		return svc, endpoint, err
	}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, opts)
	endpoint := kv["TableEndpoint"]
	if endpoint == "" {
		endpoint = fmt.Sprintf("%s://%s.table.%s", orDefault(kv["DefaultEndpointsProtocol"], "https"), kv["AccountName"], orDefault(kv["EndpointSuffix"], "core.windows.net"))
	}
	return svc, endpoint, err
}

// accountFromEndpoint returns the account of a service URL: the first label
// of its host, or the first path segment of a path-style (local) URL.
func accountFromEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	if seg, _, _ := strings.Cut(strings.Trim(u.Path, "/"), "/"); seg != "" {
		return seg
	}
	host, _, _ := strings.Cut(u.Hostname(), ".")
	return host
}

// PublicEndpoint returns an endpoint URL without its query (a SAS) or user
// information, so it can be printed and stored.
func PublicEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(unparseable endpoint)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}

// IsLoopback reports whether an endpoint is on this machine.
func IsLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redact removes the target's secrets, and anything that looks like a SAS
// signature, from s.
func (t *Target) redact(s string) string { return Redact(s, t.secrets...) }

// Redact removes secrets, and any sig= parameter, from s.
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
			if esc := url.QueryEscape(sec); esc != sec {
				s = strings.ReplaceAll(s, esc, "[REDACTED]")
			}
		}
	}
	for _, marker := range []string{"sig=", "Sig=", "AccountKey=", "SharedAccessSignature="} {
		for i := strings.Index(s, marker); i >= 0; {
			j := i + len(marker)
			k := j
			for k < len(s) && !strings.ContainsRune("&; \t\n\"'", rune(s[k])) {
				k++
			}
			if s[j:k] != "[REDACTED]" {
				s = s[:j] + "[REDACTED]" + s[k:]
			}
			next := strings.Index(s[j+len("[REDACTED]"):], marker)
			if next < 0 {
				break
			}
			i = j + len("[REDACTED]") + next
		}
	}
	return s
}

// Clock returns wall time: a service is measured as it is.
func (t *Target) Clock() clock.Clock { return t.clock }

// Describe describes the target, without secrets.
func (t *Target) Describe() results.Environment {
	return results.Environment{Target: "table", Endpoint: t.endpoint}
}

// Endpoint returns the endpoint, without secrets.
func (t *Target) Endpoint() string { return t.endpoint }

func (t *Target) client(table string) *aztables.Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.clients[table]
	if !ok {
		c = t.svc.NewClient(table)
		t.clients[table] = c
	}
	return c
}

// CreateTable creates a table.
func (t *Target) CreateTable(ctx context.Context, name string) (err error) {
	defer t.recoverInto(&err)
	_, err = t.svc.CreateTable(ctx, name, nil)
	return t.convert(err, false)
}

// DeleteTable deletes a table.
func (t *Target) DeleteTable(ctx context.Context, name string) (err error) {
	defer t.recoverInto(&err)
	_, err = t.svc.DeleteTable(ctx, name, nil)
	return t.convert(err, false)
}

// NewSession returns a worker's session.
func (t *Target) NewSession(seed uint64) workloads.Session { return &session{t: t} }

type session struct {
	t   *Target
	buf []byte
}

// Do sends op and returns when its response arrived.
func (s *session) Do(ctx context.Context, op *workloads.Op) (done time.Time, err error) {
	var said serviceSaid
	ctx = context.WithValue(ctx, serviceSaidKey{}, &said)
	defer func() {
		done = s.t.clock.Now()
		said.apply(op, err)
	}()
	defer s.t.recoverInto(&err)
	c := s.t.client(op.Table)
	switch op.Kind {
	case workloads.OpInsert:
		s.buf = odata.AppendEntity(s.buf[:0], &op.Entity)
		_, err = c.AddEntity(ctx, s.buf, nil)
	case workloads.OpUpsert:
		s.buf = odata.AppendEntity(s.buf[:0], &op.Entity)
		mode := aztables.UpdateModeReplace
		if op.Merge {
			mode = aztables.UpdateModeMerge
		}
		_, err = c.UpsertEntity(ctx, s.buf, &aztables.UpsertEntityOptions{UpdateMode: mode})
	case workloads.OpUpdate:
		s.buf = odata.AppendEntity(s.buf[:0], &op.Entity)
		etag := azcore.ETag(op.IfMatch)
		_, err = c.UpdateEntity(ctx, s.buf, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &etag})
	case workloads.OpDelete:
		etag := azcore.ETag(op.IfMatch)
		_, err = c.DeleteEntity(ctx, op.PartitionKey, op.RowKey, &aztables.DeleteEntityOptions{IfMatch: &etag})
	case workloads.OpGet:
		var resp aztables.GetEntityResponse
		resp, err = c.GetEntity(ctx, op.PartitionKey, op.RowKey, nil)
		if err == nil {
			op.ETag = string(resp.ETag)
		}
		if err == nil && op.Read != nil {
			e, derr := odata.DecodeEntity(resp.Value, nil)
			if derr != nil {
				return time.Time{}, derr
			}
			*op.Read = e
		}
	case workloads.OpBatch:
		actions := make([]aztables.TransactionAction, len(op.Batch))
		for i := range op.Batch {
			actions[i] = transactionAction(&op.Batch[i])
		}
		_, err = c.SubmitTransaction(ctx, actions, nil)
		return time.Time{}, s.t.convert(err, true)
	case workloads.OpQuery, workloads.OpRange, workloads.OpScan:
		top := int32(op.Query.Top)
		opts := &aztables.ListEntitiesOptions{Filter: &op.Query.Filter}
		if top > 0 {
			opts.Top = &top
		}
		if c := op.Query.Continuation; c != nil {
			opts.NextPartitionKey, opts.NextRowKey = &c.PartitionKey, &c.RowKey
		}
		pager := c.NewListEntitiesPager(opts)
		var page aztables.ListEntitiesResponse
		page, err = pager.NextPage(ctx)
		op.Returned, op.Next = len(page.Entities), nil
		if err == nil && (page.NextPartitionKey != nil || page.NextRowKey != nil) {
			op.Next = &tables.Continuation{PartitionKey: deref(page.NextPartitionKey), RowKey: deref(page.NextRowKey)}
		}
	default:
		return time.Time{}, fmt.Errorf("operation %q is not known", op.Kind)
	}
	return time.Time{}, s.t.convert(err, false)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func transactionAction(op *tables.BatchOp) aztables.TransactionAction {
	a := aztables.TransactionAction{Entity: odata.AppendEntity(nil, &op.Entity)}
	switch op.Kind {
	case tables.BatchInsert:
		a.ActionType = aztables.TransactionTypeAdd
	case tables.BatchUpdateMerge:
		a.ActionType = aztables.TransactionTypeUpdateMerge
	case tables.BatchUpdateReplace:
		a.ActionType = aztables.TransactionTypeUpdateReplace
	case tables.BatchUpsertMerge:
		a.ActionType = aztables.TransactionTypeInsertMerge
	case tables.BatchUpsertReplace:
		a.ActionType = aztables.TransactionTypeInsertReplace
	case tables.BatchDelete:
		a.ActionType = aztables.TransactionTypeDelete
	}
	if op.IfMatch != "" {
		etag := azcore.ETag(op.IfMatch)
		a.IfMatch = &etag
	}
	return a
}

// recoverInto turns a panic inside the SDK (it slices a malformed batch
// response without checking it) into an error.
func (t *Target) recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = tables.NewError(0, CodeMalformedResponse,
			t.redact(fmt.Sprintf("the SDK failed on a malformed response: %v", r)))
	}
}

// CodeMalformedResponse is the outcome of a response the SDK could not read.
const CodeMalformedResponse = "MalformedResponse"

// Skew measures the service's clock against this machine's from the Date
// header of cheap requests (reads of a row that need not exist): the
// service's time minus local time. The header has whole seconds, so Skew
// reads back to back until the service's second ticks over, which places
// the tick between two reads: good to the time of two round trips. If the
// second never ticks over within skewWindow (a service whose Date does not
// move), it falls back to the median of the reads, each good to half a
// second.
func (t *Target) Skew(ctx context.Context) (d time.Duration, err error) {
	defer t.recoverInto(&err)
	c := t.svc.NewClient("tablebenchclock")
	var skews []time.Duration
	var prevDate, prevBefore time.Time
	deadline := time.Now().Add(skewWindow)
	for n := 0; n < 5 || time.Now().Before(deadline); n++ {
		var resp *http.Response
		before := time.Now()
		_, err := c.GetEntity(policy.WithCaptureResponse(ctx, &resp), "clock", "clock", nil)
		after := time.Now()
		if resp == nil {
			if err == nil {
				err = errors.New("no response")
			}
			return 0, t.convert(err, false)
		}
		date, perr := http.ParseTime(resp.Header.Get("Date"))
		if perr != nil {
			return 0, fmt.Errorf("the service's Date header %q is not a date", resp.Header.Get("Date"))
		}
		if n > 0 && date.Sub(prevDate) == time.Second {
			// The service's second began after the previous read was sent and
			// before this one came back.
			tick := prevBefore.Add(after.Sub(prevBefore) / 2)
			return date.Sub(tick), nil
		}
		prevDate, prevBefore = date, before
		mid := before.Add(after.Sub(before) / 2)
		skews = append(skews, date.Add(500*time.Millisecond).Sub(mid)) // Date is truncated to the second
	}
	slices.Sort(skews)
	return skews[len(skews)/2], nil
}

// skewWindow is how long Skew reads waiting for the service's second to
// tick over: a little over a second.
const skewWindow = 1200 * time.Millisecond
