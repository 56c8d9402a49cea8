package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tablebench/tablebench/engine/rest"
)

// adminCmd changes a running `tablebench serve`'s fault rules and rates
// through its admin endpoint, signing each request with the account key
// from the connection string serve printed.
func adminCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "admin", "faults [FILE|-] | rates [--partition-rate N] [--account-rate N]")
	csEnv := fs.String("connection-string-env", "TABLEBENCH_CONNECTION_STRING", "environment variable holding the served engine's connection string (serve prints it)")
	partition := fs.Float64("partition-rate", 0, "rates: new entities/s per PartitionKey (0: no limit)")
	account := fs.Float64("account-rate", 0, "rates: new entities/s per account (0: no limit)")
	if err := parseWords(fs, args); err != nil {
		return err
	}
	words := fs.Args()
	if len(words) == 0 || (words[0] != "faults" && words[0] != "rates") {
		return usagef("say what to change: admin faults [FILE|-] or admin rates [--partition-rate N] [--account-rate N]")
	}
	if err := parseWords(fs, words[1:]); err != nil { // flags may follow the word
		return err
	}
	words = append(words[:1], fs.Args()...)
	if *partition < 0 || *account < 0 {
		return usagef("rates must be 0 (no limit) or more entities/s, such as --partition-rate 200")
	}
	root, acct, key, err := adminTarget(e.getenv(*csEnv), *csEnv)
	if err != nil {
		return err
	}
	method, body, err := adminChange(e, fs, words, *partition, *account)
	if err != nil {
		return err
	}
	out, err := adminDo(ctx, root, acct, key, method, words[0], body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") != nil {
		pretty.Write(out)
	}
	fmt.Fprintln(e.stdout, pretty.String())
	return nil
}

// adminChange returns the request that words ask for: a GET that shows
// the rules or rates, or a PUT of new ones, from a file (- for stdin) or
// the rate flags given.
func adminChange(e *env, fs *flagSet, words []string, partition, account float64) (method string, body []byte, err error) {
	switch what := words[0]; {
	case what == "faults" && len(words) > 1:
		if words[1] == "-" {
			body, err = io.ReadAll(e.stdin)
		} else {
			body, err = os.ReadFile(words[1])
		}
		if err != nil {
			return "", nil, usagef("the rules file cannot be read: %v", err)
		}
		return http.MethodPut, body, nil
	case what == "rates" && (given(fs.FlagSet, "partition-rate") || given(fs.FlagSet, "account-rate")):
		in := map[string]float64{}
		if given(fs.FlagSet, "partition-rate") {
			in["partition_rate"] = partition
		}
		if given(fs.FlagSet, "account-rate") {
			in["account_rate"] = account
		}
		body, _ = json.Marshal(in)
		return http.MethodPut, body, nil
	case len(words) > 1:
		return "", nil, usagef("rates takes --partition-rate and --account-rate, not %q", words[1])
	}
	return http.MethodGet, nil, nil
}

// adminDo sends a signed request for what (faults or rates) to the served
// engine at root and returns its answer, or the error it gives.
func adminDo(ctx context.Context, root, acct string, key []byte, method, what string, body []byte) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, root+rest.AdminPath+what, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	rest.SignRequest(req, acct, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the served engine at %s did not answer: %v", root, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var se struct {
			Err struct {
				Message struct{ Value string } `json:"message"`
			} `json:"odata.error"`
		}
		msg := strings.TrimSpace(string(out))
		if json.Unmarshal(out, &se) == nil && se.Err.Message.Value != "" {
			msg, _, _ = strings.Cut(se.Err.Message.Value, "\nRequestId")
		}
		return nil, fmt.Errorf("%s %s: %s", resp.Status, what, msg)
	}
	return out, nil
}

// adminTarget reads the root URL, account and key of a served engine from
// its connection string. Errors never show the key.
func adminTarget(cs, envName string) (root, account string, key []byte, err error) {
	if cs == "" {
		return "", "", nil, usagef("$%s is empty: set it to the connection string tablebench serve printed", envName)
	}
	fields := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	ep, err := url.Parse(fields["tableendpoint"])
	if err != nil || ep.Scheme == "" || ep.Host == "" {
		return "", "", nil, usagef("$%s has no TableEndpoint: use the connection string tablebench serve printed", envName)
	}
	account = fields["accountname"]
	if account == "" {
		return "", "", nil, usagef("$%s has no AccountName", envName)
	}
	key, kerr := rest.DecodeKey(fields["accountkey"])
	if kerr != nil {
		return "", "", nil, usagef("$%s: its AccountKey is not a base64 key", envName)
	}
	return ep.Scheme + "://" + ep.Host, account, key, nil
}
