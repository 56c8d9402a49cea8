package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

func keys(es []tables.Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PartitionKey+"/"+e.RowKey)
	}
	return out
}

func TestFilters(t *testing.T) {
	e := newRaw(t)
	g := uuid.MustParse("c9da6455-213d-42c9-9a79-3e9149a57833")
	when := time.Date(2010, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, x := range []tables.Entity{
		ent("a", "1", tables.String("Name", "Smith"), tables.Int32("Age", 30), tables.Int64("Big", 1<<40), tables.Double("Score", 1.5),
			tables.Bool("Active", true), tables.DateTime("Born", when), tables.GUID("ID", g), tables.Binary("Blob", []byte{0x0a, 0x0b})),
		ent("a", "2", tables.String("Name", "O'Brien"), tables.Int32("Age", 40), tables.Bool("Active", false)),
		ent("b", "1", tables.String("Name", "Jones"), tables.Int32("Age", 25)),
		ent("c", "1", tables.String("Age", "thirty")),
	} {
		if _, err := e.Client(nil).Insert(ctx, "people", x); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		filter string
		want   []string
		code   string
	}{
		{"", []string{"a/1", "a/2", "b/1", "c/1"}, ""},
		{"PartitionKey eq 'a'", []string{"a/1", "a/2"}, ""},
		{"PartitionKey eq 'a' and RowKey eq '2'", []string{"a/2"}, ""},
		{"PartitionKey ge 'b'", []string{"b/1", "c/1"}, ""},
		{"PartitionKey gt 'a' and PartitionKey lt 'c'", []string{"b/1"}, ""},
		{"Age gt 26", []string{"a/1", "a/2"}, ""},
		{"26 lt Age", []string{"a/1", "a/2"}, ""},
		{"Age ge 25 and Age le 30", []string{"a/1", "b/1"}, ""},
		{"Age ne 30", []string{"a/2", "b/1"}, ""}, // a missing or mistyped property never matches
		{"not (Age eq 30)", []string{"a/2", "b/1", "c/1"}, ""},
		{"Age eq 25 or Name eq 'Smith'", []string{"a/1", "b/1"}, ""},
		{"(Age eq 25 or Age eq 40) and Active eq false", []string{"a/2"}, ""},
		{"Name eq 'O''Brien'", []string{"a/2"}, ""},
		{"Big eq 1099511627776L", []string{"a/1"}, ""},
		{"Big eq 1099511627776", []string{"a/1"}, ""}, // too big for Int32: an Int64 literal
		{"Score gt 1.0", []string{"a/1"}, ""},
		{"Score eq 1.5d", []string{"a/1"}, ""},
		{"Active eq true", []string{"a/1"}, ""},
		{"Active eq True", []string{"a/1"}, ""}, // boolean literals in any case
		{"Active eq FALSE", []string{"a/2"}, ""},
		{"True", []string{"a/1", "a/2", "b/1", "c/1"}, ""},
		{"fAlse", nil, ""},
		{"Born eq datetime'2010-11-01T12:00:00Z'", []string{"a/1"}, ""},
		{"Born eq datetime'2010-11-01T12:00:00'", []string{"a/1"}, ""}, // zoneless is UTC
		{"Born lt datetime'2010-11-01T12:00:00Z'", nil, ""},
		{"ID eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'", []string{"a/1"}, ""},
		{"Blob eq X'0A0B'", []string{"a/1"}, ""},
		{"Blob eq binary'0a0b'", []string{"a/1"}, ""},
		{"Age eq 'thirty'", []string{"c/1"}, ""},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z'", []string{"a/1", "a/2", "b/1", "c/1"}, ""},
		{"Age eq", nil, tables.CodeInvalidInput},
		{"Age equals 3", nil, tables.CodeInvalidInput},
		{"(Age eq 3", nil, tables.CodeInvalidInput},
		{"Name eq 'open", nil, tables.CodeInvalidInput},
		{"Born eq datetime'yesterday'", nil, tables.CodeInvalidInput},
		{"Age eq Name", nil, tables.CodeInvalidInput},
		{"Age eq 3 Age", nil, tables.CodeInvalidInput},
		{"Age eq 99999999999999999999", nil, tables.CodeInvalidInput},
		{strings.Repeat("Age eq 1 or ", 15) + "Age eq 1", nil, tables.CodeInvalidInput},
		{strings.Repeat("Age eq 1 or ", 14) + "Age eq 25", []string{"b/1"}, ""},
		{strings.Repeat("(", 200) + "Age eq 1" + strings.Repeat(")", 200), nil, tables.CodeInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			p, err := e.Client(nil).QueryEntities(ctx, "people", tables.Query{Filter: tc.filter})
			if tc.code != "" {
				wantCode(t, err, 400, tc.code)
				return
			}
			wantCode(t, err, 0, "")
			if got := keys(p.Entities); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOrderIsUTF16(t *testing.T) {
	e := newRaw(t)
	// In UTF-8 bytes U+FF5E sorts before U+1F600; in UTF-16 code units,
	// which the service compares, U+1F600 (0xD83D 0xDE00) sorts first.
	for _, pk := range []string{"～", "😀", "z", "A"} {
		e.Client(nil).Insert(ctx, "people", ent(pk, "r"))
	}
	p, _ := e.Client(nil).QueryEntities(ctx, "people", tables.Query{})
	got := keys(p.Entities)
	want := []string{"A/r", "z/r", "😀/r", "～/r"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestPaging(t *testing.T) {
	e := newRaw(t)
	for i := range 2500 {
		e.Client(nil).Insert(ctx, "people", ent("p", fmt.Sprintf("r%05d", i), tables.Int32("N", int32(i)), tables.Int32("Other", 0)))
	}
	collect := func(q tables.Query) (pages []int, all []string) {
		for {
			p, err := e.Client(nil).QueryEntities(ctx, "people", q)
			wantCode(t, err, 0, "")
			pages = append(pages, len(p.Entities))
			all = append(all, keys(p.Entities)...)
			if p.Continuation == nil {
				return
			}
			q.Continuation = p.Continuation
		}
	}
	pages, all := collect(tables.Query{})
	if !slices.Equal(pages, []int{1000, 1000, 500}) || len(all) != 2500 || all[2499] != "p/r02499" {
		t.Fatalf("pages %v, %d entities", pages, len(all))
	}
	pages, all = collect(tables.Query{Top: 700, Filter: "N ge 100"})
	if !slices.Equal(pages, []int{700, 700, 700, 300}) || all[0] != "p/r00100" {
		t.Fatalf("$top pages %v first %v", pages, all[0])
	}
	p, _ := e.Client(nil).QueryEntities(ctx, "people", tables.Query{Top: 1, Select: []string{"N"}})
	if len(p.Entities[0].Properties) != 1 || p.Entities[0].Properties[0].Name != "N" {
		t.Fatalf("$select gave %v", p.Entities[0].Properties)
	}
	if p.Scanned != 1 {
		t.Fatalf("a $top=1 page scanned %d entities", p.Scanned)
	}
	p, _ = e.Client(nil).QueryEntities(ctx, "people", tables.Query{Filter: "PartitionKey eq 'p' and RowKey ge 'r02400' and RowKey lt 'r02410'"})
	if len(p.Entities) != 10 || p.Scanned != 10 {
		t.Fatalf("a key-range query returned %d and scanned %d, want 10 and 10", len(p.Entities), p.Scanned)
	}
	_, err := e.Client(nil).QueryEntities(ctx, "people", tables.Query{Top: 1001})
	wantCode(t, err, 400, tables.CodeInvalidQueryParameterValue)
}

func TestContinuationAtPartitionBoundary(t *testing.T) {
	e := newRaw(t, func(c *engine.Config) { c.PreSplit = 16 })
	e.Client(nil).Insert(ctx, "people", ent("0a", "r", tables.Int32("N", 1)))
	e.Client(nil).Insert(ctx, "people", ent("fa", "r", tables.Int32("N", 2)))
	q := tables.Query{Filter: "N eq 2"}
	var pages, empty int
	var found []string
	for {
		p, err := e.Client(nil).QueryEntities(ctx, "people", q)
		wantCode(t, err, 0, "")
		pages++
		if len(p.Entities) == 0 && p.Continuation != nil {
			empty++
		}
		found = append(found, keys(p.Entities)...)
		if p.Continuation == nil {
			break
		}
		q.Continuation = p.Continuation
	}
	if pages != 16 || empty != 15 || !slices.Equal(found, []string{"fa/r"}) {
		t.Fatalf("%d pages (%d empty with a continuation), found %v", pages, empty, found)
	}
}

func TestTokens(t *testing.T) {
	for key, tok := range map[string]string{"Smith": "1!8!U21pdGg-", "Ben1898": "1!12!QmVuMTg5OA--", "": "1!0!"} {
		if got := tables.EncodeToken(key); got != tok {
			t.Errorf("EncodeToken(%q) = %q, want %q", key, got, tok)
		}
		if got, err := tables.DecodeToken(tok); err != nil || got != key {
			t.Errorf("DecodeToken(%q) = %q, %v", tok, got, err)
		}
	}
	for _, bad := range []string{"", "2!8!U21pdGg-", "1!9!U21pdGg-", "1!8!U21p!Gg-", "1!x!"} {
		if _, err := tables.DecodeToken(bad); !tables.IsCode(err, tables.CodeInvalidInput) {
			t.Errorf("DecodeToken(%q) = %v, want InvalidInput", bad, err)
		}
	}
}
