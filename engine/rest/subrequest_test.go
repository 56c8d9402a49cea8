package rest

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// FuzzPlainTarget checks the operation URL reader against net/url: every
// URL it reads, url.ParseRequestURI accepts, with the same escaped path
// and raw query.
func FuzzPlainTarget(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:10002/devstoreaccount1/perf1()", "https://acct.table.core.windows.net/t(PartitionKey='a',RowKey='b')",
		"http://localhost:8080/acct/t(PartitionKey='a%2Fb',RowKey='c')", "http://h/t?$filter=x", "http://user@h/t", "http://[::1]:80/t",
		"http://h:8x/t", "/relative/t", "t()", "http://h/a b", "http://h/é", "http://h:/t", "http://-/t", "HTTP://h/t", "http://h",
		"http://127.0.0.1:43341/devstoreaccount1/perf1?%24format=application%2Fjson%3Bodata%3Dminimalmetadata", "http://h/t?", "http://h/t?a?b#c",
		"http://h/t?a\x01b", "http://h/t#frag",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		path, query, ok := plainTarget(target)
		if !ok {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatalf("%q: read as %q, which net/url refuses: %v", target, path, err)
		}
		if u.EscapedPath() != path || u.RawQuery != query {
			t.Fatalf("%q: read as path %q and query %q, net/url reads %q and %q", target, path, query, u.EscapedPath(), u.RawQuery)
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
		method, target, ok := plainRequestLine(line)
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
		"http://127.0.0.1:10002/devstoreaccount1/perf1?%24format=application%2Fjson%3Bodata%3Dminimalmetadata", // what the Go SDK sends
		"http://127.0.0.1:10002/devstoreaccount1/perf1",
		"https://acct.table.core.windows.net/people(PartitionKey='p',RowKey='r')",
		"http://localhost/devstoreaccount1/people(PartitionKey='a',RowKey='1_2')",
	} {
		if _, _, ok := plainTarget(target); !ok {
			t.Errorf("%q: not read by plainTarget", target)
		}
		if m, tg, ok := plainRequestLine("merge " + target + " HTTP/1.1"); !ok || m != "MERGE" || tg != target {
			t.Errorf("%q: request line read as %q %q %v", target, m, tg, ok)
		}
	}
	for target, want := range map[string]string{
		"people(PartitionKey='a',RowKey='b')":                        "/people(PartitionKey='a',RowKey='b')",
		"http://h/acct/people(PartitionKey='a%2Fb',RowKey='%C3%A9')": "/acct/people(PartitionKey='a%2Fb',RowKey='%C3%A9')",
		"http://h/acct/people()?$filter=RowKey%20eq%20'x'":           "/acct/people()",
	} {
		sub, err := parseSubRequest("GET "+target+" HTTP/1.1\r\nAccept: application/json\r\n\r\n", nil)
		if err != nil || sub.path != want || sub.method != "GET" {
			t.Errorf("%q: got %+v, %v; want path %q", target, sub, err, want)
		}
	}
	sub, _ := parseSubRequest("GET http://h/acct/people()?$filter=RowKey%20eq%20'x'&$top=5 HTTP/1.1\r\n\r\n", nil)
	if q := sub.query(); q.Get("$filter") != "RowKey eq 'x'" || q.Get("$top") != "5" {
		t.Errorf("query read as %v", q)
	}
}

// sdkBatch returns a $batch body of n inserts shaped byte for byte as the
// Go SDK sends them (captured from aztables), and its Content-Type.
func sdkBatch(n int) ([]byte, string) {
	const batch, changeset = "batch_42199aa0-fba1-4273-4041-63002cfbb0b7", "changeset_2fa04a0d-e2c2-49cf-7562-fab25378421e"
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batch, changeset)
	for i := range n {
		body := fmt.Sprintf(`{"PartitionKey":"w01","Payload":"%s","RowKey":"1_%d"}`, strings.Repeat("x", 440), i)
		fmt.Fprintf(&b, "--%s\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n", changeset)
		fmt.Fprintf(&b, "POST http://127.0.0.1:43341/devstoreaccount1/perf1?%%24format=application%%2Fjson%%3Bodata%%3Dminimalmetadata HTTP/1.1\r\n")
		fmt.Fprintf(&b, "Accept: application/json;odata=minimalmetadata\r\nContent-Length: %d\r\nContent-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n\r\n%s\r\n", len(body), body)
	}
	fmt.Fprintf(&b, "--%s--\r\n\r\n--%s--\r\n", changeset, batch)
	return b.Bytes(), "multipart/mixed; boundary=" + batch
}

// BenchmarkParseBatch reads a batch of 100 inserts as the Go SDK sends it,
// up to the operations the engine runs: the served engine's own work per
// batch beside storing it.
func BenchmarkParseBatch(b *testing.B) {
	s := New(nil, Config{Account: DevAccount})
	body, ct := sdkBatch(100)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		pb, err := s.parseBatch(ct, body, nil)
		if err != nil || len(pb.ops) != 100 {
			b.Fatalf("%v, %d operations", err, len(pb.ops))
		}
	}
}

// TestOperationsKeepTheirHeaders checks that each operation of a changeset
// keeps its own If-Match and Prefer, though their headers are read into one
// reused slice, and that the parts' headers split as written.
func TestOperationsKeepTheirHeaders(t *testing.T) {
	const cs = "changeset_x"
	var b strings.Builder
	b.WriteString("--batch_x\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n")
	tags := []string{`W/"datetime'2026-01-01T00%3A00%3A00Z'"`, "*", `W/"datetime'2026-01-02T00%3A00%3A00Z'"`}
	for i, tag := range tags {
		b.WriteString("--" + cs + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		prefer := "Prefer: return-content\r\n" // as many headers as the next operation, to tell them apart by value
		if i == 1 {
			prefer = "Prefer: return-no-content\r\n"
		}
		fmt.Fprintf(&b, "MERGE http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r%d') HTTP/1.1\r\nIf-Match: %s\r\n%sContent-Type: application/json\r\n\r\n{\"N\":%d}\r\n", i, tag, prefer, i)
	}
	b.WriteString("--" + cs + "--\r\n--batch_x--\r\n")
	s := New(nil, Config{Account: DevAccount})
	// As sent, and after a preamble or with bare LFs, which only the
	// general readers read.
	for _, body := range []string{b.String(), "preamble\r\n" + b.String(), strings.ReplaceAll(b.String(), "\r\n", "\n")} {
		pb, err := s.parseBatch("multipart/mixed; boundary=batch_x", []byte(body), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, op := range pb.ops {
			if op.IfMatch != tags[i] || pb.noContent[i] != (i == 1) || op.Entity.RowKey != fmt.Sprint("r", i) {
				t.Fatalf("operation %d: If-Match %q, no content %v, RowKey %q", i, op.IfMatch, pb.noContent[i], op.Entity.RowKey)
			}
		}
	}
	parts, ok := splitMultipart(b.String()[len("--batch_x\r\nContent-Type: multipart/mixed; boundary="+cs+"\r\n\r\n"):], cs)
	if !ok || len(parts) != 3 {
		t.Fatalf("split into %d parts, %v", len(parts), ok)
	}
	for i, p := range parts {
		if len(p.header) != 2 || p.header.Get("Content-Type") != "application/http" || p.header.Get("Content-Transfer-Encoding") != "binary" {
			t.Fatalf("part %d: headers %v", i, p.header)
		}
	}
}

// TestParsedBatchOutlivesItsBody: a changeset is read in place, from a body
// the server reuses for its next request, so what the engine keeps (each
// entity, its keys from a body or a URL, the table) must not share its
// bytes. The parse is printed, the body overwritten, the parse printed
// again.
func TestParsedBatchOutlivesItsBody(t *testing.T) {
	const cs = "changeset_y"
	var b strings.Builder
	b.WriteString("--batch_y\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n")
	op := func(line, headers, body string) {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n%s HTTP/1.1\r\n%sContent-Type: application/json\r\n\r\n%s\r\n", cs, line, headers, body)
	}
	op("POST http://h/devstoreaccount1/People", "Prefer: return-no-content\r\n",
		`{"PartitionKey":"pk","RowKey":"r1","Name":"Ann","Bin":"AQID","Bin@odata.type":"Edm.Binary","Big":"12","Big@odata.type":"Edm.Int64","N":3.5,"B":true}`)
	op("MERGE http://h/devstoreaccount1/People(PartitionKey='pk',RowKey='r2')", "If-Match: *\r\n", `{"Name":"Bo"}`)
	op("PUT http://h/devstoreaccount1/People(PartitionKey='pk',RowKey='r3')", "", `{"Name":"Cy"}`)
	op("DELETE http://h/devstoreaccount1/People(PartitionKey='pk',RowKey='r4')", "If-Match: *\r\n", "")
	b.WriteString("--" + cs + "--\r\n--batch_y--\r\n")
	body := []byte(b.String())
	s := New(nil, Config{Account: DevAccount})
	pb, err := s.parseBatch("multipart/mixed; boundary=batch_y", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := func() string { return fmt.Sprintf("%s %#v", pb.table, pb.ops) }
	before := kept()
	for _, want := range []string{`"Ann"`, `"r2"`, `"Cy"`, `"r4"`, "People"} {
		if !strings.Contains(before, want) {
			t.Fatalf("the parse lacks %s: %s", want, before)
		}
	}
	for i := range body {
		body[i] = 'Z'
	}
	if after := kept(); after != before {
		t.Fatalf("the parse changed with its body:\nbefore %s\nafter  %s", before, after)
	}
}

// TestPrintableAgreesWithTheByteLoop checks the word-wise test of a
// request line against the plain definition, for every byte value at every
// position of a word and of the tail after it.
func TestPrintableAgreesWithTheByteLoop(t *testing.T) {
	byByte := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 19; n++ {
		for at := range n {
			for c := range 256 {
				for _, fill := range []byte{'x', ' ', '~', 0x7f, 0xff} {
					b := bytes.Repeat([]byte{fill}, n)
					b[at] = byte(c)
					if got, want := printable(string(b)), byByte(b); got != want {
						t.Fatalf("printable(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}

// TestPlainValueAgreesWithTheByteLoop checks the word-wise test of a
// header value against the plain definition, for every byte value at
// every position of a word and of the tail after it.
func TestPlainValueAgreesWithTheByteLoop(t *testing.T) {
	byByte := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 19; n++ {
		for at := range n {
			for c := range 256 {
				for _, fill := range []byte{'x', '\t', 0x7e, 0x80, 0xff} {
					b := bytes.Repeat([]byte{fill}, n)
					b[at] = byte(c)
					if got, want := plainValue(string(b)), byByte(b); got != want {
						t.Fatalf("plainValue(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
