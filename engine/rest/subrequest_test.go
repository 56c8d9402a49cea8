package rest

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzPlainTarget checks the operation URL reader against net/url: every
// URL it reads, url.ParseRequestURI accepts, with the same escaped path
// and no query.
func FuzzPlainTarget(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:10002/devstoreaccount1/perf1()", "https://acct.table.core.windows.net/t(PartitionKey='a',RowKey='b')",
		"http://localhost:8080/acct/t(PartitionKey='a%2Fb',RowKey='c')", "http://h/t?$filter=x", "http://user@h/t", "http://[::1]:80/t",
		"http://h:8x/t", "/relative/t", "t()", "http://h/a b", "http://h/é", "http://h:/t", "http://-/t", "HTTP://h/t", "http://h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		path, ok := plainTarget(target)
		if !ok {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatalf("%q: read as %q, which net/url refuses: %v", target, path, err)
		}
		if u.EscapedPath() != path || u.RawQuery != "" {
			t.Fatalf("%q: read as path %q, net/url reads %q and query %q", target, path, u.EscapedPath(), u.RawQuery)
		}
	})
}

// FuzzPlainRequestLine checks the request line reader against
// strings.Fields: whatever it reads, Fields splits the same way.
func FuzzPlainRequestLine(f *testing.F) {
	for _, s := range []string{
		"POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1", "merge http://h/t(PartitionKey='a',RowKey='b') HTTP/1.1",
		"DELETE  http://h/t HTTP/1.1", "GET http://h/t HTTP/1.1 ", "PUT\thttp://h/t HTTP/1.1", "POST http://h/t FTP/1", "POST http://h/t\u00a0x HTTP/1.1", " POST a HTTP/1.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		method, target, ok := plainRequestLine([]byte(line))
		if !ok {
			return
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || !strings.HasPrefix(fields[2], "HTTP/") || method != strings.ToUpper(fields[0]) || target != fields[1] {
			t.Fatalf("%q: read as %q %q, strings.Fields gives %q", line, method, target, fields)
		}
	})
}

// TestPlainFormsAreRead checks that the URLs and request lines every SDK
// sends take the fast readers, and that forms they leave alone still
// parse: a relative URL, percent escapes, a query.
func TestPlainFormsAreRead(t *testing.T) {
	for _, target := range []string{
		"http://127.0.0.1:10002/devstoreaccount1/perf1",
		"https://acct.table.core.windows.net/people(PartitionKey='p',RowKey='r')",
		"http://localhost/devstoreaccount1/people(PartitionKey='a',RowKey='1_2')",
	} {
		if _, ok := plainTarget(target); !ok {
			t.Errorf("%q: not read by plainTarget", target)
		}
		if m, tg, ok := plainRequestLine([]byte("merge " + target + " HTTP/1.1")); !ok || m != "MERGE" || tg != target {
			t.Errorf("%q: request line read as %q %q %v", target, m, tg, ok)
		}
	}
	for target, want := range map[string]string{
		"people(PartitionKey='a',RowKey='b')":                        "/people(PartitionKey='a',RowKey='b')",
		"http://h/acct/people(PartitionKey='a%2Fb',RowKey='%C3%A9')": "/acct/people(PartitionKey='a%2Fb',RowKey='%C3%A9')",
		"http://h/acct/people()?$filter=RowKey%20eq%20'x'":           "/acct/people()",
	} {
		sub, err := parseSubRequest([]byte("GET " + target + " HTTP/1.1\r\nAccept: application/json\r\n\r\n"))
		if err != nil || sub.path != want || sub.method != "GET" {
			t.Errorf("%q: got %+v, %v; want path %q", target, sub, err, want)
		}
	}
	sub, _ := parseSubRequest([]byte("GET http://h/acct/people()?$filter=RowKey%20eq%20'x'&$top=5 HTTP/1.1\r\n\r\n"))
	if q := sub.query(); q.Get("$filter") != "RowKey eq 'x'" || q.Get("$top") != "5" {
		t.Errorf("query read as %v", q)
	}
}
