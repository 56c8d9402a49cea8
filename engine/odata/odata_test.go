package odata_test

import (
	"bytes"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine/odata"
	"github.com/tablebench/tablebench/engine/tables"
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
