package engine_test

import (
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

// FuzzParseFilter: any $filter parses or is refused with 400 InvalidInput,
// and a parsed filter evaluates without failing.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"PartitionKey eq 'a' and RowKey ge 'b'", "not (Age gt 30) or Name eq 'O''Brien'",
		"Big eq 1099511627776L", "D eq datetime'2010-11-01T12:00:00Z'", "G eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'",
		"X eq X'0A0B'", "F lt 1.5e3", "((((A eq 1))))", "A eq", "'x' eq A", "A eq -", "A eq 1.2.3L"} {
		f.Add(s)
	}
	e := tables.Entity{PartitionKey: "a", RowKey: "b", Timestamp: time.Unix(1, 0), Properties: []tables.Property{
		tables.Int32("Age", 31), tables.String("Name", "x"), tables.Int64("Big", 5), tables.Double("F", 2), tables.Bool("B", true)}}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := engine.ParseFilter(s)
		if err != nil {
			if !tables.IsCode(err, tables.CodeInvalidInput) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		flt.Match(&e)
	})
}

// FuzzDecodeToken: tokens round trip, and any string decodes or is refused.
func FuzzDecodeToken(f *testing.F) {
	f.Add("1!8!U21pdGg-", "Smith")
	f.Add("1!0!", "")
	f.Add("2!x!!", "é/\x00")
	f.Fuzz(func(t *testing.T, tok, key string) {
		if k, err := tables.DecodeToken(tables.EncodeToken(key)); err != nil || k != key {
			t.Fatalf("%q did not round trip: %q %v", key, k, err)
		}
		if _, err := tables.DecodeToken(tok); err != nil && !tables.IsCode(err, tables.CodeInvalidInput) {
			t.Fatalf("%q: %v", tok, err)
		}
	})
}
