package rest

import (
	"bufio"
	"bytes"
	"net/textproto"
	"reflect"
	"testing"
)

// FuzzPlainHeaders checks the operation header reader against textproto:
// whatever it accepts, textproto reads to the same headers.
func FuzzPlainHeaders(f *testing.F) {
	for _, s := range []string{
		"Accept: application/json;odata=minimalmetadata\r\nContent-Length: 48\r\nContent-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n",
		"If-Match: *\nX-HTTP-Method: MERGE", "a: b\r\n c", "Bad Name: x", "x-a: 1\r\nX-A: 2", ": v", "k:\tv \t", "k: v\x00", "\r\n\r\n", "k: v\r\n\r\nbody",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := plainHeaders([]byte(text))
		if !ok {
			return
		}
		want, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append([]byte(text), "\r\n\r\n"...)))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("%q: read as %v, which textproto refuses: %v", text, got, err)
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: read as %v, textproto reads %v", text, got, want)
		}
	})
}
