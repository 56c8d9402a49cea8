package odata

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// FuzzScanFlat checks the one-pass scanner against encoding/json: whatever
// it accepts, encoding/json reads to the same members and values.
func FuzzScanFlat(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"a","RowKey":"b","Payload":"xyz","N":12,"F":-1.5e3,"B":true,"Z":null}`,
		` { "a\"b" : "c\\d\/e\u00e9\ud83d\ude00" , "n" : 0 } `,
		`{"x":"\ud800"}`, `{"x":"\udc00\ud800"}`, `{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":[1]}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":1}x`, `{}`, `{"a":"` + "\x01" + `"}`,
		`{"a":"\u0000"}`, `{"a":1,}`, `{,}`, `[1]`,
		// Long strings, read eight bytes at a time: a quote, an escape, a
		// control character or a multi-byte character after the first words.
		`{"Payload":"abcdefghijklmnopqrstu\"vwxyz0123456789é0123456789\n0123456789"}`,
		`{"Payload":"abcdefghijklmnop` + "\x1f" + `qrstuvwxyz"}`, `{"Payload":"ééééééééé€€€€€€abcdefghijk😀abcdefghijklmnop"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !utf8.ValidString(body) { // DecodeEntity refuses it first
			return
		}
		fast, ok := scanFlat([]byte(body), nil)
		if !ok {
			return
		}
		general, err := decodeGeneral([]byte(body))
		if err != nil {
			t.Fatalf("%q: the scanner accepts what encoding/json refuses: %v", body, err)
		}
		want := map[string]any{}
		for _, f := range general {
			want[f.name] = f.value()
		}
		got := map[string]any{}
		for _, f := range fast {
			got[f.name] = f.value()
		}
		if len(fast) != len(got) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scanned %v, encoding/json reads %v", body, got, want)
		}
	})
}

// TestScanFlatReadsLongStrings checks that the scanner itself reads long
// strings with escapes and multi-byte characters anywhere in them, rather
// than leaving them to encoding/json, and reads them as it does.
func TestScanFlatReadsLongStrings(t *testing.T) {
	x := strings.Repeat("abcdefgh", 3)
	for _, v := range []string{x, x + `\"` + x, x + "é" + x + `\n` + x, "€" + x + "😀" + x + `\u00e9`, x + `\\` + x + `\/`} {
		body := `{"PartitionKey":"p","RowKey":"` + x + `","Payload":"` + v + `"}`
		fast, ok := scanFlat([]byte(body), nil)
		if !ok {
			t.Fatalf("%s: left to encoding/json", body)
		}
		general, err := decodeGeneral([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range general {
			if i := slices.IndexFunc(fast, func(f field) bool { return f.name == g.name }); i < 0 || fast[i].value() != g.value() {
				t.Fatalf("%s: %s scanned as %v, encoding/json reads %q", body, g.name, fast, g.value())
			}
		}
	}
}

// FuzzPlainJSON checks the word-at-a-time scan for text a JSON string
// holds as it is against the byte loop it stands for.
func FuzzPlainJSON(f *testing.F) {
	for _, s := range []string{"", "plain payload text", "a\"b", "a\\b", "tab\there", "é", "0123456789abcdef\x1f", "\x7f\x80", "abcdefgh\xc3\xa9ijklmnop", "abcdefgh\\ijklmnop", strings.Repeat("x", 40) + "\"" + strings.Repeat("y", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := 0
		for want < len(s) {
			if c := s[want]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			want++
		}
		if got := plainJSON(s); got != want {
			t.Fatalf("plainJSON(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestNamesReadAtTheirPlace checks the cache of names by position: a
// name matched there is the name, and one that only starts like it, one
// written with escapes or one that is not plain JSON is read in full.
// Property names come out interned, one copy for every entity.
func TestNamesReadAtTheirPlace(t *testing.T) {
	bodies := []string{
		`{"PartitionKey":"p","RowKey":"r","Payload":"a"}`,
		`{"PartitionKey":"p","RowKey":"r","Payload":"b"}`,
		`{"PartitionKey":"p","RowKey":"r","Payload2":"c"}`,
		`{"PartitionKey":"p","RowKey":"r","Pay\u006coad":"d"}`,
		`{"PartitionKey":"p","RowKey":"r","Pay\"load":"e"}`,
		`{"PartitionKey":"p","RowKey":"r","Pay\"load":"f"}`,
		`{"PartitionKey":"p","RowKey":"r","Pay":"g"}`,
		`{"Payload":"h","PartitionKey":"p","RowKey":"r"}`,
		`{"PartitionKey":"p","RowKey":"r","a\\b":"i"}`,
		`{"PartitionKey":"p","RowKey":"r","a\b":"j"}`,
	}
	want := []string{"Payload", "Payload", "Payload2", "Payload", `Pay"load`, `Pay"load`, "Pay", "Payload", `a\b`, "a\b"}
	var first *byte
	for i, body := range bodies {
		e, err := DecodeEntity([]byte(body), nil)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if len(e.Properties) != 1 || e.Properties[0].Name != want[i] {
			t.Fatalf("%s: properties %v, want one named %q", body, e.Properties, want[i])
		}
		if e.Properties[0].Name == "Payload" {
			if p := unsafe.StringData(e.Properties[0].Name); first == nil {
				first = p
			} else if p != first {
				t.Fatalf("%s: the name Payload is a copy of its own", body)
			}
		}
	}
}

// TestKeysAreNotBoxed checks that reading an entity boxes only the values
// that become properties: its keys and type annotations stay strings. The
// eight allocations are the four strings copied out of the body (the keys,
// the payload, the annotation), the boxes of the two property values, the
// properties' slice and the annotations' list; boxing the keys and the
// annotation made eleven.
func TestKeysAreNotBoxed(t *testing.T) {
	body := []byte(`{"PartitionKey":"partition-0001","RowKey":"row-000000001","Payload":"` + strings.Repeat("x", 440) + `","N":5,"N@odata.type":"Edm.Int64"}`)
	if e, err := DecodeEntity(body, nil); err != nil || e.RowKey != "row-000000001" || len(e.Properties) != 2 || e.Properties[1].Value != int64(5) {
		t.Fatalf("read %+v, %v", e, err)
	}
	if n := testing.AllocsPerRun(100, func() { DecodeEntity(body, nil) }); n > 8 {
		t.Fatalf("reading the entity made %v allocations, want 8 at most", n)
	}
}

// TestUnescapedAgreesWithTheByteLoop checks the word-wise test for a
// string's plain contents against the plain definition, for every byte
// value at every position of a word and of the tail after it.
func TestUnescapedAgreesWithTheByteLoop(t *testing.T) {
	byByte := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c == '\\' {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 19; n++ {
		for at := range n {
			for c := range 256 {
				for _, fill := range []byte{'x', 0xe9, 0x7f, ' '} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					b[at] = byte(c)
					if got, want := unescaped(b), byByte(b); got != want {
						t.Fatalf("unescaped(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
