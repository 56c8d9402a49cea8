package rest

import (
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// changesetSeeds are batches of one changeset: as the Go SDK sends them,
// and shapes around the edges of what readChangeset reads.
func changesetSeeds() (bodies []string, boundary string) {
	sdk, _ := sdkBatch(3)
	const b, cs = "batch_1", "changeset_1"
	part := func(req string) string {
		return "--" + cs + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + req + "\r\n"
	}
	wrap := func(parts ...string) string {
		return "--" + b + "\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n" + strings.Join(parts, "") + "--" + cs + "--\r\n--" + b + "--\r\n"
	}
	insert := part("POST http://h/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n" + `{"PartitionKey":"p","RowKey":"r1"}`)
	del := part("DELETE http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r2') HTTP/1.1\r\nIf-Match: *\r\nContent-Length: 0\r\n\r\n")
	merge := part("POST http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r3') HTTP/1.1\r\nX-HTTP-Method: merge\r\nIf-Match: *\r\nContent-Length: 8\r\n\r\n" + `{"N": 1}`)
	return []string{
		strings.ReplaceAll(string(sdk), "batch_42199aa0-fba1-4273-4041-63002cfbb0b7", b),
		wrap(insert, del, merge),
		wrap(insert),
		wrap(),
		strings.Replace(wrap(insert, del), "--"+cs+"--\r\n", "--"+cs+"--  \r\n\r\n\r\n", 1), // blanks, then an epilogue of blank lines
		strings.Replace(wrap(insert), "Content-Length: 34", "Content-Length: 30", 1),        // a body shorter than its part
		strings.Replace(wrap(insert), "Content-Length: 34\r\n", "", 1),                      // no Content-Length
		strings.Replace(wrap(insert, del), "\r\n\r\n--"+cs, "\r\n\r\n\r\n--"+cs, 1),         // a blank line before the first operation
		strings.Replace(wrap(insert), "boundary="+cs, "boundary="+b+"x", 1),                 // an inner boundary that starts as the batch's
		"preamble\r\n" + wrap(insert),
		wrap(insert) + "epilogue",
		strings.ReplaceAll(wrap(insert, del), "\r\n", "\n"),
		// As the JavaScript SDK writes a batch: a blank line before the
		// first operation and before each body, no Content-Length.
		"--" + b + "\r\ncontent-type: multipart/mixed; boundary=" + cs + "\r\n\r\n\r\n" +
			"--" + cs + "\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n" +
			"POST http://h/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\r\n\r\n" + `{"PartitionKey":"p","RowKey":"r1"}` + "\r\n" +
			"--" + cs + "\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n" +
			"DELETE http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r2') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n" +
			"--" + cs + "--\r\n\r\n--" + b + "--\r\n",
		strings.Replace(wrap(insert), `"r1"}`, `"r1"}`+"\r\n--"+b+"\r\n", 1),                                                // the batch's delimiter inside a body
		strings.Replace(strings.Replace(wrap(insert), "Content-Length: 34\r\n", "", 1), `"r1"}`, `"r1"}`+"\r\n--"+b+"x", 1), // and without a length
		// Headers that run into the next delimiter: its CRLF is their blank
		// line (found by FuzzReadChangeset).
		"--" + b + "\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n--" + cs + "\r\n\r\nT http://h/ HTTP/\r\n\r\n--" + cs + "\r\n--" + cs + "--\r\n--" + b + "--",
		strings.Replace(wrap(del), "Content-Length: 0\r\n\r\n\r\n", "Content-Length: 0\r\n\r\n", 1),
	}, b
}

// FuzzReadChangeset checks the one-walk reader against the general split:
// whatever readChangeset reads, splitChangeset and parseSubRequest read to
// the same operations (method, URL, headers and body). The batch's
// boundary is the fuzzer's too, to reach the checks on delimiters.
func FuzzReadChangeset(f *testing.F) {
	bodies, boundary := changesetSeeds()
	for _, body := range bodies {
		f.Add(body, boundary)
	}
	f.Fuzz(func(t *testing.T, body, boundary string) {
		subs, ok := readChangeset(body, boundary, new(changesetBuf))
		if !ok {
			return
		}
		next, n, ok := splitChangeset(body, boundary)
		if !ok || n != len(subs) {
			t.Fatalf("%q: read %d operations; the general split reads %d (%v)", body, len(subs), n, ok)
		}
		for i, sub := range subs {
			raw, err := next()
			if err != nil {
				t.Fatal(err)
			}
			want, err := parseSubRequest(raw, nil)
			if err != nil {
				t.Fatalf("%q: operation %d read, but the general reader refuses it: %v", body, i, err)
			}
			if sub.method != want.method || sub.path != want.path || sub.rawQuery != want.rawQuery || sub.body != want.body || !slices.Equal(sub.header, want.header) {
				t.Fatalf("%q: operation %d read as\n%+v\nthe general reader reads\n%+v", body, i, sub, want)
			}
		}
	})
}

// TestReadChangesetReadsWhatSDKsSend checks that the one-walk reader, not
// the general split, reads the batches SDKs send, and leaves to the
// general reader the shapes it does not read.
func TestReadChangesetReadsWhatSDKsSend(t *testing.T) {
	bodies, boundary := changesetSeeds()
	sdk, ct := sdkBatch(100)
	if subs, ok := readChangeset(string(sdk), strings.TrimPrefix(ct, "multipart/mixed; boundary="), new(changesetBuf)); !ok || len(subs) != 100 {
		t.Fatalf("the Go SDK's batch of 100: read %d operations, %v", len(subs), ok)
	}
	for i, want := range []int{3, 3, 1, 0, 2, 0, 1, 2, 0, 0, 1, 0, 2, 0, 0, 0, 0} {
		subs, ok := readChangeset(bodies[i], boundary, new(changesetBuf))
		if want == 0 && ok || want > 0 && (!ok || len(subs) != want) {
			t.Errorf("seed %d: read %d operations, %v; want %d (0: left to the general reader)\n%q", i, len(subs), ok, want, bodies[i])
		}
	}
	subs, _ := readChangeset(bodies[1], boundary, new(changesetBuf))
	if subs[2].method != "MERGE" || subs[1].body != "" || subs[1].header.Get("If-Match") != "*" {
		t.Errorf("operations read as %+v", subs)
	}
}

// TestChangesetMemoFollowsTheBody checks that what readChangeset remembers
// of an operation's lines is only ever this body's: the lines of the
// operation before, never a pooled buffer's earlier batch, whose bytes a
// later request overwrites (as the server's pooled body buffers are), and
// that an operation whose lines repeat the one before's only in part
// reads as its own.
func TestChangesetMemoFollowsTheBody(t *testing.T) {
	const b, cs = "batch_1", "changeset_1"
	op := func(method, url string, headers ...string) string {
		return "--" + cs + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			method + " " + url + " HTTP/1.1\r\n" + strings.Join(headers, "\r\n") + "\r\nContent-Length: 0\r\n\r\n\r\n"
	}
	wrap := func(ops ...string) string {
		return "--" + b + "\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n" + strings.Join(ops, "") + "--" + cs + "--\r\n--" + b + "--\r\n"
	}
	u := "http://h/a/t(PartitionKey='p',RowKey='r1')"
	body := wrap(
		op("DELETE", u, "If-Match: *", "Prefer: x", "Accept: a"),
		op("DELETE", u, "If-Match: *", "Prefer: y", "Accept: a"), // the second line differs
		op("DELETE", u, "If-Match: *"),                           // fewer lines
		op("DELETE", u, "If-Match: *", "Prefer: x", "Accept: a", "X-Extra: 1"))
	buf := new(changesetBuf)
	read := func(mem []byte) []subRequest {
		subs, ok := readChangeset(unsafe.String(&mem[0], len(mem)), b, buf)
		if !ok || len(subs) != 4 {
			t.Fatalf("read %d operations, %v", len(subs), ok)
		}
		return subs
	}
	// The same batch twice, in two buffers; then the first buffer is
	// overwritten by another request.
	earlier, later := []byte(body), []byte(body)
	read(earlier)
	subs := read(later)
	copy(earlier, strings.Repeat("#", len(earlier)))
	next, _, _ := splitChangeset(body, b)
	for i, sub := range subs {
		raw, _ := next()
		want, err := parseSubRequest(raw, nil)
		if err != nil || sub.method != want.method || sub.path != want.path || !slices.Equal(sub.header, want.header) {
			t.Fatalf("operation %d read as %+v; the general reader reads %+v (%v)", i, sub, want, err)
		}
	}
}
