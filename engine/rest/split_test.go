package rest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"reflect"
	"strings"
	"testing"
)

// FuzzSplitMultipart checks the in-memory splitter against mime/multipart:
// whatever it accepts, mime/multipart reads to the same parts.
func FuzzSplitMultipart(f *testing.F) {
	for _, s := range []string{
		"--b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nPOST /t HTTP/1.1\r\n\r\n{}\r\n--b\r\n\r\nx\r\n--b--\r\n",
		"preamble\r\n--b  \r\nA: 1\r\n\r\n\r\n--b--", "--b\nA: 1\n\nx\n--b--\n", "--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=41\r\n--b--",
		"--b\r\n\r\nx--b\r\n--b--", "--b\r\nA: 1\r\n\r\nx\r\n--bX\r\n--b--\r\n", "--b\r\n\r\n--b--",
		strings.Repeat("a", 5000) + "\r\n--b--", // a preamble line longer than mime/multipart's buffer
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		parts, ok := splitMultipart(body, "b")
		if !ok {
			return
		}
		r := multipart.NewReader(bytes.NewReader([]byte(body)), "b")
		for i := 0; ; i++ {
			p, err := r.NextPart()
			if err == io.EOF {
				if i != len(parts) {
					t.Fatalf("%q: split into %d parts, multipart reads %d", body, len(parts), i)
				}
				return
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				// A line outside the parts (a preamble, a delimiter's
				// trailing blanks) longer than mime/multipart's 4 KiB
				// buffer: its limit, not a verdict on the body, which is
				// valid multipart.
				return
			}
			if err != nil {
				t.Fatalf("%q: split into %d parts, multipart fails at part %d: %v", body, len(parts), i, err)
			}
			content, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("%q: part %d: %v", body, i, err)
			}
			if i >= len(parts) || string(content) != parts[i].body || !reflect.DeepEqual(map[string][]string(p.Header), map[string][]string(parts[i].header.mime())) && !(len(p.Header) == 0 && len(parts[i].header) == 0) {
				t.Fatalf("%q: part %d differs from what multipart reads", body, i)
			}
		}
	})
}

// FuzzIndexDelim checks the delimiter search against strings.Index.
func FuzzIndexDelim(f *testing.F) {
	for _, s := range []string{"a\r\n--b", "\r\r\n--b\r\n--b", "\r\n-", "\r\n--", "x\r\n--c\r\n--bb", "",
		strings.Repeat("\r\n-", 100) + "\r\n--b", strings.Repeat("\r", 100)} { // past the misses it hops
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, s, boundary string) {
		delim := "\r\n--" + boundary
		if got, want := indexDelim(s, delim), strings.Index(s, delim); got != want {
			t.Fatalf("indexDelim(%q, %q) = %d, strings.Index says %d", s, delim, got, want)
		}
	})
}
