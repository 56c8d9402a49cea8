package odata

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/tablebench/tablebench/tables"
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
		// Bytes that are not UTF-8, in a plain string, one with an escape,
		// a name and outside any string.
		`{"Payload":"abcdefgh` + "\xff" + `ijklmnop"}`, `{"P":"ab\n` + "\xc3" + `"}`, `{"` + "\xe9" + `":1}`, `{"a":1` + "\x80" + `}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fast, ok := scanFlat([]byte(body), nil)
		if !ok {
			return
		}
		if !utf8.ValidString(body) { // DecodeEntity relies on the scanner to refuse it
			t.Fatalf("%q: the scanner reads a body that is not UTF-8", body)
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

// FuzzAppendString checks the JSON strings the engine writes: each reads
// back as the string written, and escapes as encoding/json escapes (but
// for <, > and &, which it need not).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `W/"datetime'2026-01-01T00%3A00%3A00Z'"`, "a\\b<c>&d", "\x00\x01\b\f\n\r\t\x1f\x7f", "é\"", "\xff\"", "\u2028", strings.Repeat("x", 20) + "<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("prefix"), s)[len("prefix"):]
		want, _ := json.Marshal(s)
		if html := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&"); html.Replace(string(got)) != html.Replace(string(want)) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || utf8.ValidString(s) && back != s {
			t.Fatalf("%q: wrote %s, which reads back as %q, %v", s, got, back, err)
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
// five allocations are the one copy of the strings the entity keeps (the
// keys and the payload), the boxes of the payload and of the number read,
// the properties' slice and the annotations' list; boxing the keys and the
// annotation made eight more.
func TestKeysAreNotBoxed(t *testing.T) {
	body := []byte(`{"PartitionKey":"partition-0001","RowKey":"row-000000001","Payload":"` + strings.Repeat("x", 440) + `","N":5,"N@odata.type":"Edm.Int64"}`)
	if e, err := DecodeEntity(body, nil); err != nil || e.RowKey != "row-000000001" || len(e.Properties) != 2 || e.Properties[1].Value != int64(5) {
		t.Fatalf("read %+v, %v", e, err)
	}
	if n := testing.AllocsPerRun(100, func() { DecodeEntity(body, nil) }); n > 5 {
		t.Fatalf("reading the entity made %v allocations, want 5 at most", n)
	}
}

// TestDecoderSharesWhatItCan checks what a batch's entities share: one
// array of properties, each entity's part of it capped so that growing one
// entity's properties cannot write over the next's, and the copy of a
// PartitionKey they repeat. An entity of a batch costs two allocations:
// its strings and its payload's box.
func TestDecoderSharesWhatItCan(t *testing.T) {
	body := func(rk string) []byte {
		return []byte(`{"PartitionKey":"pk-0001","RowKey":"` + rk + `","Payload":"` + strings.Repeat("x", 64) + `","N":7}`)
	}
	d := NewDecoder(3)
	var ents []tables.Entity
	for _, rk := range []string{"a", "b", "c"} {
		e, err := d.Decode(body(rk), nil)
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e)
	}
	if unsafe.StringData(ents[0].PartitionKey) != unsafe.StringData(ents[2].PartitionKey) {
		t.Error("each entity holds its own copy of the PartitionKey they share")
	}
	if cap(ents[0].Properties) != 2 {
		t.Errorf("the first entity's properties have room for %d: they reach into the next's", cap(ents[0].Properties))
	}
	if unsafe.Add(unsafe.Pointer(&ents[0].Properties[0]), 2*unsafe.Sizeof(tables.Property{})) != unsafe.Pointer(&ents[1].Properties[0]) {
		t.Error("the entities' properties do not share one array")
	}
	grown := append(ents[0].Properties, tables.String("Extra", "x"))
	if grown[0].Name != "Payload" || ents[1].Properties[0].Name != "Payload" || ents[1].RowKey != "b" {
		t.Fatalf("growing one entity's properties changed the next: %+v", ents[1])
	}
	d = NewDecoder(1000)
	b := []byte(`{"PartitionKey":"pk-0001","RowKey":"r","Payload":"` + strings.Repeat("x", 440) + `"}`)
	if n := testing.AllocsPerRun(100, func() { d.Decode(b, nil) }); n > 2 {
		t.Fatalf("an entity of a batch made %v allocations, want 2 at most", n)
	}
}

// TestDecodedEntityOwnsItsMemory checks that nothing a decoded entity holds
// is a view of the body it was read from, which a server reuses for its
// next request: every kind of value, strings with escapes and not, and
// keys given apart from the body.
func TestDecodedEntityOwnsItsMemory(t *testing.T) {
	for _, text := range []string{
		`{"PartitionKey":"p\u00e9","RowKey":"r1","S":"plain","E":"esc\"aped\u00e9","U":"café €","N":12,"F":-1.5,"B":true,` +
			`"L":"1234567890123","L@odata.type":"Edm.Int64","D":"2026-01-01T00:00:00Z","D@odata.type":"Edm.DateTime",` +
			`"G":"c9da6455-213d-42c9-9a79-3e9149a57833","G@odata.type":"Edm.Guid","X":"AQID","X@odata.type":"Edm.Binary","T":"s","T@odata.type":"Edm.String"}`,
		`{"S":"from the URL's keys"}`,
		`{"S": {"nested": 1}}`, // read by encoding/json: refused
	} {
		body := []byte(text)
		keys := [2]string{string([]byte("url-pk")), string([]byte("url-rk"))}
		for _, d := range []*Decoder{NewDecoder(2), {}} {
			e, err := d.Decode(body, &keys)
			if err != nil {
				continue
			}
			before := fmt.Sprintf("%#v", e)
			scribbled := slices.Clone(body)
			for i := range body {
				body[i] = 'Z'
			}
			if after := fmt.Sprintf("%#v", e); after != before {
				t.Fatalf("the entity changed with its body:\nbefore %s\nafter  %s", before, after)
			}
			copy(body, scribbled)
			if e.PartitionKey == "url-pk" && unsafe.StringData(e.PartitionKey) == unsafe.StringData(keys[0]) {
				t.Fatal("the entity holds the caller's key, not a copy")
			}
		}
	}
}

// TestBadUTF8IsRefused checks that bytes that are not UTF-8 are refused
// wherever they are: in a plain string, one with escapes, a name, or
// outside any string. The scanner checks them, not a pass over the body.
func TestBadUTF8IsRefused(t *testing.T) {
	for _, body := range []string{
		`{"PartitionKey":"p","RowKey":"r","Payload":"abcdefgh` + "\xff" + `ijklmnop"}`,
		`{"PartitionKey":"p","RowKey":"r","Payload":"a\n` + "\xc3" + `"}`,
		`{"PartitionKey":"p` + "\xed\xa0\x80" + `","RowKey":"r"}`, // a surrogate, encoded
		`{"PartitionKey":"p","RowKey":"r","` + "\xe9" + `":1}`,
		`{"PartitionKey":"p","RowKey":"r"` + "\x80" + `}`,
	} {
		_, err := DecodeEntity([]byte(body), nil)
		if err == nil || !strings.Contains(err.Message, "UTF-8") {
			t.Errorf("%q: %v, want the UTF-8 error", body, err)
		}
	}
}

// TestUnescapedAgreesWithTheByteLoop checks the word-wise test for a
// string's plain contents, and for ASCII, against the plain definitions,
// for every byte value at every position of four words, of a word and of
// the tail after them.
func TestUnescapedAgreesWithTheByteLoop(t *testing.T) {
	byByte := func(b []byte) (plain, ascii bool) {
		ascii = true
		for _, c := range b {
			if c < 0x20 || c == '\\' {
				return false, false
			}
			ascii = ascii && c < 0x80
		}
		return true, ascii
	}
	for n := 1; n <= 43; n++ { // the four-word steps, the word steps and the tail
		for at := range n {
			for c := range 256 {
				for _, fill := range []byte{'x', 0xe9, 0x7f, ' '} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					b[at] = byte(c)
					plain, ascii := unescaped(b)
					if wantPlain, wantASCII := byByte(b); plain != wantPlain || ascii != wantASCII {
						t.Fatalf("unescaped(%q) = %v, %v, want %v, %v", b, plain, ascii, wantPlain, wantASCII)
					}
				}
			}
		}
	}
}
