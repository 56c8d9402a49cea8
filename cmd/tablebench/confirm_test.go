package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestRealEndpointAsksFirst: against an endpoint off this machine, nothing
// is sent until the plan is confirmed. The endpoint is in the .invalid
// domain and every case stops before any request.
func TestRealEndpointAsksFirst(t *testing.T) {
	t.Chdir(t.TempDir()) // where a suite would make results/
	const key = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTIzNA=="
	getenv := func(k string) string {
		if k == "MY_KEY" {
			return key
		}
		return ""
	}
	for _, tc := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"run", "--op", "batch", "--vms", "2", "--threads", "10", "--duration", "60s"}, ""},
		{[]string{"run", "--op", "batch", "--vms", "2", "--threads", "10", "--duration", "60s"}, "n\n"},
		{[]string{"figures", "--quick", "--only", "3"}, "no\n"},
	} {
		args := append(tc.args, "--target", "table", "--endpoint", "https://tablebench-test.invalid/acct", "--auth", "key", "--account-key-env", "MY_KEY")
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(tc.stdin), &out, &errOut, getenv)
		msg := errOut.String()
		if code != 2 || !strings.Contains(msg, "is not on this machine") || !strings.Contains(msg, "billable transactions") ||
			!strings.Contains(msg, "not confirmed: nothing was sent; give --yes") || strings.Contains(out.String()+msg, key) {
			t.Fatalf("%v with %q: exit %d\n%s%s", tc.args, tc.stdin, code, out.String(), msg)
		}
		if left, _ := os.ReadDir("."); len(left) > 0 {
			t.Fatalf("%v declined, yet it left %v behind", tc.args, left)
		}
	}
}
