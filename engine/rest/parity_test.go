package rest_test

import (
	"strings"
	"testing"
)

// Requests in shapes recorded clients replay, each a regression test for a
// way the served engine once answered them otherwise than the service.

// TestTrailingSlashAndRecordedHosts: a client that joins paths sends
// /Tables/ and /$batch/, and a recorded batch names the host it was
// recorded against, not this one. The service routes both by their path.
func TestTrailingSlashAndRecordedHosts(t *testing.T) {
	r := newRaw(t)
	json := map[string]string{"Content-Type": "application/json"}
	r.must("POST", "/Tables/", json, `{"TableName":"flows"}`, 201)
	r.must("GET", "/Tables/", nil, "", 200)
	const elsewhere = "http://127.0.0.1:10002/devstoreaccount1"
	op := func(path, rk string) string {
		return "POST " + elsewhere + path + " HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" + `{"PartitionKey":"p","RowKey":"` + rk + `"}`
	}
	sdk := func(path, a, b string) (string, string) { return batch(op(path, a), op(path, b)) }
	for _, c := range []struct {
		name, path, a, b string
		bareLF           bool // the general reader; CRLF takes the one-walk reader
	}{
		{"as SDKs write it", "/flows", "1", "2", false},
		{"with bare LFs", "/flows", "3", "4", true},
		{"with a slash after the table", "/flows/", "5", "6", false},
	} {
		ctype, b := sdk(c.path, c.a, c.b)
		if c.bareLF {
			b = strings.ReplaceAll(b, "\r\n", "\n")
		}
		got := r.do("POST", "/$batch/", map[string]string{"Content-Type": ctype}, b, true)
		if got.status != 202 || innerStatus(got.body) != "204" {
			t.Fatalf("%s: %d %s %s", c.name, got.status, got.code, got.body)
		}
	}
	for _, rk := range []string{"1", "2", "3", "4", "5", "6"} {
		if _, st := r.get("flows", "p", rk); st != 200 {
			t.Errorf("entity %s: %d, want 200", rk, st)
		}
	}
	r.must("GET", "/flows(PartitionKey='p',RowKey='1')/", nil, "", 200)
}
