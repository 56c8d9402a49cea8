package odata_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

// TestClientFormRoundTrips: what the SDK target sends, the served engine
// reads back as the same entity, every Edm type included.
func TestClientFormRoundTrips(t *testing.T) {
	in := tables.Entity{PartitionKey: "p\"q", RowKey: "ü'r", Properties: []tables.Property{
		tables.String("S", "tab\there"), tables.Int32("I", -7), tables.Int64("L", 1<<40), tables.Double("D", 2),
		tables.Double("N", math.Inf(-1)), tables.Bool("B", true), tables.DateTime("T", time.Date(2010, 11, 1, 12, 0, 0, 123456700, time.UTC)),
		tables.GUID("G", uuid.MustParse("c9da6455-213d-42c9-9a79-3e9149a57833")), tables.Binary("X", []byte{0, 1, 250}),
	}}
	out, err := odata.DecodeEntity(odata.AppendEntity(nil, &in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.PartitionKey != in.PartitionKey || out.RowKey != in.RowKey || len(out.Properties) != len(in.Properties) {
		t.Fatalf("decoded %+v", out)
	}
	for _, p := range in.Properties {
		got, ok := out.Property(p.Name)
		if !ok || got.Type != p.Type {
			t.Fatalf("%s: %+v, want %+v", p.Name, got, p)
		}
		switch v := p.Value.(type) {
		case []byte:
			if !bytes.Equal(got.Value.([]byte), v) {
				t.Fatalf("%s: %v", p.Name, got.Value)
			}
		case time.Time:
			if !got.Value.(time.Time).Equal(v) {
				t.Fatalf("%s: %v", p.Name, got.Value)
			}
		default:
			if got.Value != p.Value {
				t.Fatalf("%s: %v, want %v", p.Name, got.Value, p.Value)
			}
		}
	}
}

// TestServerFormReadsBack: each metadata level of a response decodes to
// the entity's values; nometadata loses only what JSON cannot carry.
func TestServerFormReadsBack(t *testing.T) {
	in := tables.Entity{PartitionKey: "p", RowKey: "r", Timestamp: time.Unix(1, 0).UTC(), Properties: []tables.Property{tables.Int64("L", 5), tables.String("S", "x")}}
	for _, meta := range []string{odata.MinimalMetadata, odata.FullMetadata} {
		var b bytes.Buffer
		odata.WriteEntity(&b, &in, meta, "http://h/acct", "acct", "tbl", true, nil)
		out, err := odata.DecodeEntity(b.Bytes(), nil)
		if err != nil {
			t.Fatalf("%s: %v in %s", meta, err, b.String())
		}
		if p, _ := out.Property("L"); p.Type != tables.EdmInt64 || p.Value != int64(5) {
			t.Fatalf("%s: %s", meta, b.String())
		}
	}
}

// FuzzEntityJSON: any body decodes to an entity or is refused with 400.
func FuzzEntityJSON(f *testing.F) {
	f.Add(`{"PartitionKey":"a","RowKey":"b","D@odata.type":"Edm.DateTime","D":"2010-01-01T00:00:00Z","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833"}`)
	f.Add(`{"PartitionKey":"a","RowKey":"b","X@odata.type":"Edm.Binary","X":"AAE=","N":1e400}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, body string) {
		if _, err := odata.DecodeEntity([]byte(body), nil); err != nil && err.Status != http.StatusBadRequest {
			t.Fatalf("%q: %v", body, err)
		}
	})
}

// TestRepeatedValuesAreStoredOnce: a long string value that entities
// repeat is decoded into one copy, which the request's body does not
// share; short, long and typed values, and the entity's other strings, are
// copies of their own.
func TestRepeatedValuesAreStoredOnce(t *testing.T) {
	payload := strings.Repeat("0123456789", 44)
	huge := strings.Repeat("y", 5000)
	decode := func(body []byte) tables.Entity {
		t.Helper()
		e, err := odata.DecodeEntity(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	data := func(e tables.Entity, name string) (*byte, string) {
		t.Helper()
		p, ok := e.Property(name)
		if !ok {
			t.Fatalf("no %s in %+v", name, e)
		}
		s := p.Value.(string)
		return unsafe.StringData(s), s
	}
	var seen []*byte
	for i := range 4 {
		body := []byte(`{"PartitionKey":"p","RowKey":"r` + strconv.Itoa(i) + `","Payload":"` + payload + `","Short":"` + payload[:63] +
			`","Huge":"` + huge + `","Typed@odata.type":"Edm.String","Typed":"` + payload + `"}`)
		e := decode(body)
		clear(body) // what was decoded must not change with the body
		p, s := data(e, "Payload")
		if s != payload {
			t.Fatalf("entity %d: Payload %q", i, s)
		}
		if _, s := data(e, "Short"); s != payload[:63] {
			t.Fatalf("entity %d: Short %q", i, s)
		}
		if _, s := data(e, "Huge"); s != huge {
			t.Fatalf("entity %d: Huge changed", i)
		}
		if typed, s := data(e, "Typed"); s != payload || i > 0 && typed != p {
			t.Fatalf("entity %d: the typed copy of the payload is %q, not shared", i, s)
		}
		if e.RowKey != "r"+strconv.Itoa(i) {
			t.Fatalf("entity %d: RowKey %q", i, e.RowKey)
		}
		seen = append(seen, p)
	}
	// The value enters the table when its hash is seen a second time (the
	// Typed value of the first entity), and every entity after shares it.
	if seen[1] != seen[2] || seen[2] != seen[3] {
		t.Fatalf("the payload is not shared by later entities: %v", seen)
	}
	// Values of 63 bytes and of more than 4 KiB are never shared.
	a, b := decode([]byte(`{"PartitionKey":"p","RowKey":"a","S":"`+payload[:63]+`","H":"`+huge+`"}`)), decode([]byte(`{"PartitionKey":"p","RowKey":"b","S":"`+payload[:63]+`","H":"`+huge+`"}`))
	for _, name := range []string{"S", "H"} {
		pa, _ := data(a, name)
		pb, _ := data(b, name)
		if pa == pb {
			t.Fatalf("%s is shared", name)
		}
	}
}

// TestRepeatedValuesConcurrently decodes repeating and distinct values
// from several goroutines at once, for the race detector: every value
// must read back as written.
func TestRepeatedValuesConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				v := fmt.Sprintf("%03d-%s", (g*7+i)%50, strings.Repeat("v", 80))
				if i%3 == 0 {
					v = fmt.Sprintf("%d-%d-%s", g, i, strings.Repeat("u", 80)) // never repeated
				}
				e, err := odata.DecodeEntity([]byte(`{"PartitionKey":"p","RowKey":"r","V":"`+v+`"}`), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if p, _ := e.Property("V"); p.Value != v {
					t.Errorf("decoded %q, want %q", p.Value, v)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWriteEntityMetadata checks the fields a response writes in place,
// without making their strings: the metadata URL, the ETag with its quotes
// escaped, and the Timestamp, for a plain root and one JSON must escape.
func TestWriteEntityMetadata(t *testing.T) {
	ts := time.Date(2021, 8, 31, 15, 40, 2, 195259500, time.UTC)
	in := tables.Entity{PartitionKey: "p", RowKey: "r", Timestamp: ts, Properties: []tables.Property{tables.String("S", "x")}}
	var b bytes.Buffer
	odata.WriteEntity(&b, &in, odata.MinimalMetadata, "http://h:1/acct", "acct", "tbl", true, nil)
	want := `{"odata.metadata":"http://h:1/acct/$metadata#tbl/@Element","odata.etag":"W/\"datetime'2021-08-31T15%3A40%3A02.1952595Z'\"",` +
		`"PartitionKey":"p","RowKey":"r","Timestamp":"2021-08-31T15:40:02.1952595Z","S":"x"}`
	if b.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	for _, base := range []string{`http://h\"q:1/acct`, "http://h:1/a\u00e9\x01"} {
		for _, meta := range []string{odata.MinimalMetadata, odata.FullMetadata} {
			b.Reset()
			odata.WriteEntity(&b, &in, meta, base, "acct", "tbl", true, nil)
			var m map[string]any
			if err := json.Unmarshal(b.Bytes(), &m); err != nil {
				t.Fatalf("%s, %s: %v in %s", base, meta, err, b.String())
			}
			if m["odata.metadata"] != base+"/$metadata#tbl/@Element" || m["odata.etag"] != in.ETag() || m["Timestamp"] != tables.FormatTimestamp(ts) {
				t.Fatalf("%s, %s: %v", base, meta, m)
			}
		}
	}
}
