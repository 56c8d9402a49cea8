package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/tables"
)

func newRaw(t *testing.T, mod ...func(*engine.Config)) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile = engine.None()
	for _, m := range mod {
		m(&cfg)
	}
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateTable(context.Background(), "people"); err != nil {
		t.Fatal(err)
	}
	return e
}

// wantCode fails unless err is an engine error with this status and code.
func wantCode(t *testing.T, err error, status int, code string) *tables.Error {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("got error %v, want success", err)
		}
		return nil
	}
	e, ok := tables.AsError(err)
	if !ok {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("got %d %s (%s), want %d %s", e.Status, e.Code, e.Message, status, code)
	}
	if e.Message == "" {
		t.Fatalf("%s has no message", code)
	}
	return e
}

func ent(pk, rk string, props ...tables.Property) tables.Entity {
	return tables.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
}

var ctx = context.Background()

func TestTables(t *testing.T) {
	e := newRaw(t, func(c *engine.Config) { c.TableDeleteGrace = 0 })
	tests := []struct {
		name   string
		do     func() error
		status int
		code   string
	}{
		{"create", func() error { return e.CreateTable(ctx, "Orders2") }, 0, ""},
		{"create again", func() error { return e.CreateTable(ctx, "Orders2") }, 409, tables.CodeTableAlreadyExists},
		{"names are case-insensitive", func() error { return e.CreateTable(ctx, "ORDERS2") }, 409, tables.CodeTableAlreadyExists},
		{"too short", func() error { return e.CreateTable(ctx, "ab") }, 400, tables.CodeInvalidResourceName},
		{"starts with a digit", func() error { return e.CreateTable(ctx, "1abc") }, 400, tables.CodeInvalidResourceName},
		{"has a dash", func() error { return e.CreateTable(ctx, "ab-cd") }, 400, tables.CodeInvalidResourceName},
		{"too long", func() error { return e.CreateTable(ctx, "a"+strings.Repeat("b", 63)) }, 400, tables.CodeInvalidResourceName},
		{"63 characters", func() error { return e.CreateTable(ctx, "a"+strings.Repeat("b", 62)) }, 0, ""},
		{"reserved", func() error { return e.CreateTable(ctx, "Tables") }, 400, tables.CodeInvalidResourceName},
		{"delete missing", func() error { return e.DeleteTable(ctx, "nosuch") }, 404, tables.CodeTableNotFound},
		{"insert into missing", func() error { _, err := e.Client(nil).Insert(ctx, "nosuch", ent("a", "b")); return err }, 404, tables.CodeTableNotFound},
		{"get from missing", func() error { _, err := e.Client(nil).Get(ctx, "nosuch", "a", "b", nil); return err }, 404, tables.CodeTableNotFound},
		{"query missing", func() error { _, err := e.Client(nil).QueryEntities(ctx, "nosuch", tables.Query{}); return err }, 404, tables.CodeTableNotFound},
		{"batch into missing", func() error {
			_, err := e.Client(nil).Batch(ctx, "nosuch", []tables.BatchOp{{Entity: ent("a", "b")}})
			return err
		}, 404, tables.CodeTableNotFound},
		{"delete", func() error { return e.DeleteTable(ctx, "orders2") }, 0, ""},
		{"recreate at once without grace", func() error { return e.CreateTable(ctx, "Orders2") }, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.do(), tc.status, tc.code) })
	}
}

func TestTableBeingDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRaw(t) // the default 40 s grace
		wantCode(t, e.DeleteTable(ctx, "people"), 0, "")
		time.Sleep(39 * time.Second)
		wantCode(t, e.CreateTable(ctx, "People"), 409, tables.CodeTableBeingDeleted)
		time.Sleep(2 * time.Second)
		wantCode(t, e.CreateTable(ctx, "People"), 0, "")
	})
}

func TestListTables(t *testing.T) {
	e := newRaw(t)
	for _, n := range []string{"zeta", "Alpha", "beta"} {
		wantCode(t, e.CreateTable(ctx, n), 0, "")
	}
	names, next, err := e.ListTables(ctx, 2, "")
	wantCode(t, err, 0, "")
	if !slices.Equal(names, []string{"Alpha", "beta"}) || next != "people" {
		t.Fatalf("page 1 = %v next %q", names, next)
	}
	names, next, _ = e.ListTables(ctx, 2, next)
	if !slices.Equal(names, []string{"people", "zeta"}) || next != "" {
		t.Fatalf("page 2 = %v next %q", names, next)
	}
	_, _, err = e.ListTables(ctx, 1001, "")
	wantCode(t, err, 400, tables.CodeInvalidQueryParameterValue)
}

func TestEntityValidation(t *testing.T) {
	e := newRaw(t)
	many := func(n int) []tables.Property {
		var ps []tables.Property
		for i := range n {
			ps = append(ps, tables.Int32(fmt.Sprintf("P%d", i), int32(i)))
		}
		return ps
	}
	big := func(n int) []tables.Property {
		var ps []tables.Property
		for i := range n {
			ps = append(ps, tables.String(fmt.Sprintf("S%d", i), strings.Repeat("x", tables.MaxStringUnits)))
		}
		return ps
	}
	astral := strings.Repeat("😀", 256) // 512 UTF-16 code units
	tests := []struct {
		name   string
		e      tables.Entity
		status int
		code   string
	}{
		{"plain", ent("pk", "rk", tables.String("Payload", "x")), 0, ""},
		{"empty keys are legal", ent("", ""), 0, ""},
		{"slash in PK", ent("a/b", "r"), 400, tables.CodeOutOfRangeInput},
		{"backslash in RK", ent("p", `a\b`), 400, tables.CodeOutOfRangeInput},
		{"hash in RK", ent("p", "a#b"), 400, tables.CodeOutOfRangeInput},
		{"question mark in PK", ent("a?b", "r"), 400, tables.CodeOutOfRangeInput},
		{"NUL in PK", ent("a\x00b", "r"), 400, tables.CodeOutOfRangeInput},
		{"U+001F in RK", ent("p", "a\x1fb"), 400, tables.CodeOutOfRangeInput},
		{"DEL in RK", ent("p", "a\x7fb"), 400, tables.CodeOutOfRangeInput},
		{"U+0085 in PK", ent("a\u0085b", "r"), 400, tables.CodeOutOfRangeInput},
		{"U+009F in RK", ent("p", "a\u009fb"), 400, tables.CodeOutOfRangeInput},
		{"U+00A0 is allowed", ent("a\u00a0b", "r"), 0, ""},
		{"key of 512 units", ent(strings.Repeat("k", 512), "r"), 0, ""},
		{"key of 513 units", ent(strings.Repeat("k", 513), "r"), 400, tables.CodeOutOfRangeInput},
		{"astral key of 512 units", ent(astral, "r"), 0, ""},
		{"astral key of 514 units", ent(astral+"😀", "r"), 400, tables.CodeOutOfRangeInput},
		{"name starts with a digit", ent("p", "r1", tables.Int32("1a", 1)), 400, tables.CodePropertyNameInvalid},
		{"name with a dash", ent("p", "r2", tables.Int32("a-b", 1)), 400, tables.CodePropertyNameInvalid},
		{"empty name", ent("p", "r3", tables.Int32("", 1)), 400, tables.CodePropertyNameInvalid},
		{"underscore name", ent("p", "r4", tables.Int32("_a1", 1)), 0, ""},
		{"name of 255", ent("p", "r5", tables.Int32(strings.Repeat("n", 255), 1)), 0, ""},
		{"name of 256", ent("p", "r6", tables.Int32(strings.Repeat("n", 256), 1)), 400, tables.CodePropertyNameTooLong},
		{"duplicate names", ent("p", "r7", tables.Int32("A", 1), tables.String("A", "x")), 400, tables.CodeDuplicatePropertiesSpecified},
		{"a key as a property", ent("p", "r8", tables.String("RowKey", "x")), 400, tables.CodeDuplicatePropertiesSpecified},
		{"252 properties", ent("p", "r9", many(252)...), 0, ""},
		{"253 properties", ent("p", "r10", many(253)...), 400, tables.CodeTooManyProperties},
		{"string of 32K units", ent("p", "r11", tables.String("S", strings.Repeat("x", tables.MaxStringUnits))), 0, ""},
		{"string over 32K units", ent("p", "r12", tables.String("S", strings.Repeat("x", tables.MaxStringUnits+1))), 400, tables.CodePropertyValueTooLarge},
		{"binary of 64 KiB", ent("p", "r13", tables.Binary("B", make([]byte, 64*1024))), 0, ""},
		{"binary over 64 KiB", ent("p", "r14", tables.Binary("B", make([]byte, 64*1024+1))), 400, tables.CodePropertyValueTooLarge},
		{"entity under 1 MiB", ent("p", "r15", big(15)...), 0, ""},
		{"entity over 1 MiB", ent("p", "r16", big(16)...), 400, tables.CodeEntityTooLarge},
		{"value of the wrong type", ent("p", "r17", tables.Property{Name: "N", Type: tables.EdmInt32, Value: "7"}), 400, tables.CodeInvalidValueType},
		{"DateTime before 1601", ent("p", "r18", tables.DateTime("D", time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC))), 400, tables.CodeOutOfRangeInput},
		{"DateTime in range", ent("p", "r19", tables.DateTime("D", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))), 0, ""},
		{"every type", ent("p", "r20", tables.String("S", "s"), tables.Int32("I", -1), tables.Int64("L", math.MaxInt64),
			tables.Double("D", 1.5), tables.Bool("B", true), tables.DateTime("T", time.Now()), tables.GUID("G", uuid.New()), tables.Binary("X", []byte{1})), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Client(nil).Insert(ctx, "people", tc.e)
			wantCode(t, err, tc.status, tc.code)
		})
	}
}

func TestEntitySize(t *testing.T) {
	// 4 + 2·len(PK+RK) + Σ(8 + 2·len(name) + sizeof(value)).
	x := ent("ab", "cde", tables.String("Payload", "hello"), tables.Int32("N", 1), tables.Int64("L", 1),
		tables.Bool("B", true), tables.GUID("G", uuid.Nil), tables.Binary("X", []byte{1, 2, 3}), tables.Double("D", 0), tables.DateTime("T", time.Now()))
	want := 4 + 2*5 + (8 + 14 + 14) + (8 + 2 + 4) + (8 + 2 + 8) + (8 + 2 + 1) + (8 + 2 + 16) + (8 + 2 + 7) + (8 + 2 + 8) + (8 + 2 + 8)
	if got := x.Size(); got != want {
		t.Fatalf("Size() = %d, want %d", got, want)
	}
}

var etagRE = regexp.MustCompile(`^W/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$`)

func TestTimestampsAndETags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // time stands still: every write is at the same instant
		e := newRaw(t)
		var last time.Time
		for i := range 5 {
			got, err := e.Client(nil).Upsert(ctx, "people", ent("p", "r", tables.Int32("N", int32(i))), tables.Replace)
			wantCode(t, err, 0, "")
			if !etagRE.MatchString(got.ETag()) {
				t.Fatalf("ETag %q is not of the service's form", got.ETag())
			}
			if !got.Timestamp.After(last) {
				t.Fatalf("timestamp %v does not follow %v", got.Timestamp, last)
			}
			last = got.Timestamp
		}
		stored, _ := e.Client(nil).Get(ctx, "people", "p", "r", nil)
		if !stored.Timestamp.Equal(last) || stored.Timestamp.Nanosecond()%100 != 0 {
			t.Fatalf("stored timestamp %v, want %v at 100 ns precision", stored.Timestamp, last)
		}
	})
}

func TestSingleOperations(t *testing.T) {
	e := newRaw(t)
	first, err := e.Client(nil).Insert(ctx, "people", ent("p", "r", tables.String("A", "a"), tables.Int32("B", 1), tables.Property{Name: "Timestamp", Type: tables.EdmString, Value: "ignored"}))
	wantCode(t, err, 0, "")
	if _, ok := first.Property("Timestamp"); ok {
		t.Fatal("a client Timestamp property was stored")
	}
	stale := first.ETag()
	tests := []struct {
		name   string
		do     func() (tables.Entity, error)
		status int
		code   string
		props  map[string]any // what the entity holds afterwards
	}{
		{"insert existing", func() (tables.Entity, error) { return e.Client(nil).Insert(ctx, "people", ent("p", "r")) }, 409, tables.CodeEntityAlreadyExists, nil},
		{"get missing", func() (tables.Entity, error) { return e.Client(nil).Get(ctx, "people", "p", "nope", nil) }, 404, tables.CodeResourceNotFound, nil},
		{"update missing", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "nope"), tables.Merge, "*")
		}, 404, tables.CodeResourceNotFound, nil},
		{"update needs If-Match", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r"), tables.Merge, "")
		}, 400, tables.CodeInvalidInput, nil},
		{"update with a malformed ETag", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r"), tables.Merge, `abc`)
		}, 400, tables.CodeInvalidInput, nil},
		{"update with a well-formed ETag the service never issued", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r"), tables.Merge, `W/"wrong"`)
		}, 412, tables.CodeUpdateConditionNotSatisfied, nil},
		{"merge with the current ETag", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r", tables.Int32("B", 2), tables.Bool("C", true)), tables.Merge, stale)
		}, 0, "", map[string]any{"A": "a", "B": int32(2), "C": true}},
		{"merge with a stale ETag", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r", tables.Int32("B", 3)), tables.Merge, stale)
		}, 412, tables.CodeUpdateConditionNotSatisfied, map[string]any{"A": "a", "B": int32(2), "C": true}},
		{"replace with *", func() (tables.Entity, error) {
			return e.Client(nil).Update(ctx, "people", ent("p", "r", tables.Int32("D", 4)), tables.Replace, "*")
		}, 0, "", map[string]any{"D": int32(4)}},
		{"upsert merge into existing", func() (tables.Entity, error) {
			return e.Client(nil).Upsert(ctx, "people", ent("p", "r", tables.Int32("E", 5)), tables.Merge)
		}, 0, "", map[string]any{"D": int32(4), "E": int32(5)}},
		{"upsert replace of existing", func() (tables.Entity, error) {
			return e.Client(nil).Upsert(ctx, "people", ent("p", "r", tables.Int32("F", 6)), tables.Replace)
		}, 0, "", map[string]any{"F": int32(6)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.do()
			wantCode(t, err, tc.status, tc.code)
			if tc.props == nil {
				return
			}
			got, err := e.Client(nil).Get(ctx, "people", "p", "r", nil)
			wantCode(t, err, 0, "")
			if len(got.Properties) != len(tc.props) {
				t.Fatalf("entity holds %v, want %v", got.Properties, tc.props)
			}
			for name, v := range tc.props {
				if p, ok := got.Property(name); !ok || p.Value != v {
					t.Fatalf("property %s = %v, want %v", name, p.Value, v)
				}
			}
		})
	}

	t.Run("upsert inserts", func(t *testing.T) {
		_, err := e.Client(nil).Upsert(ctx, "people", ent("p", "new"), tables.Merge)
		wantCode(t, err, 0, "")
	})
	t.Run("select", func(t *testing.T) {
		e.Client(nil).Upsert(ctx, "people", ent("p", "sel", tables.Int32("X", 1), tables.Int32("Y", 2)), tables.Replace)
		got, _ := e.Client(nil).Get(ctx, "people", "p", "sel", []string{"Y", "Missing"})
		if len(got.Properties) != 1 || got.Properties[0].Name != "Y" {
			t.Fatalf("selected %v", got.Properties)
		}
	})
	t.Run("delete", func(t *testing.T) {
		cur, _ := e.Client(nil).Get(ctx, "people", "p", "new", nil)
		wantCode(t, e.Client(nil).Delete(ctx, "people", "p", "new", FormatOld(cur)), 412, tables.CodeUpdateConditionNotSatisfied)
		wantCode(t, e.Client(nil).Delete(ctx, "people", "p", "new", ""), 400, tables.CodeInvalidInput)
		wantCode(t, e.Client(nil).Delete(ctx, "people", "p", "new", cur.ETag()), 0, "")
		wantCode(t, e.Client(nil).Delete(ctx, "people", "p", "new", "*"), 404, tables.CodeResourceNotFound)
		_, err := e.Client(nil).Get(ctx, "people", "p", "new", nil)
		wantCode(t, err, 404, tables.CodeResourceNotFound)
	})
}

// FormatOld returns an ETag of the entity one tick before its own.
func FormatOld(e tables.Entity) string {
	return tables.FormatETag(e.Timestamp.Add(-100 * time.Nanosecond))
}

func TestBatch(t *testing.T) {
	e := newRaw(t)
	ins := func(pk, rk string) tables.BatchOp {
		return tables.BatchOp{Kind: tables.BatchInsert, Entity: ent(pk, rk, tables.String("Payload", rk))}
	}
	e.Client(nil).Insert(ctx, "people", ent("p", "exists", tables.Int32("N", 1)))
	t.Run("all share one timestamp", func(t *testing.T) {
		var ops []tables.BatchOp
		for i := range 100 {
			ops = append(ops, ins("p", fmt.Sprintf("b%03d", i)))
		}
		out, err := e.Client(nil).Batch(ctx, "people", ops)
		wantCode(t, err, 0, "")
		for _, o := range out {
			if !o.Timestamp.Equal(out[0].Timestamp) {
				t.Fatalf("timestamps differ: %v and %v", o.Timestamp, out[0].Timestamp)
			}
		}
	})
	t.Run("append", func(t *testing.T) {
		dst := []tables.Entity{ent("x", "kept")}
		out, err := e.Client(nil).BatchAppend(ctx, "people", []tables.BatchOp{ins("p", "ap1"), ins("p", "ap2")}, dst)
		wantCode(t, err, 0, "")
		if len(out) != 3 || out[0].RowKey != "kept" || out[1].RowKey != "ap1" || out[2].RowKey != "ap2" || out[2].Timestamp.IsZero() {
			t.Fatalf("appended %+v", out)
		}
		again, err := e.Client(nil).BatchAppend(ctx, "people", []tables.BatchOp{ins("p", "ap3"), ins("p", "exists")}, out[:1])
		wantCode(t, err, 409, tables.CodeEntityAlreadyExists)
		if len(again) != 1 || again[0].RowKey != "kept" {
			t.Fatalf("a failed batch returned %+v, not dst", again)
		}
	})
	tests := []struct {
		name   string
		ops    []tables.BatchOp
		status int
		code   string
		index  int
	}{
		{"empty", nil, 400, tables.CodeInvalidInput, -1},
		{"101 operations", slices.Repeat([]tables.BatchOp{ins("p", "x")}, 101), 400, tables.CodeInvalidInput, -1},
		{"two partitions", []tables.BatchOp{ins("p", "a1"), ins("q", "a2")}, 400, tables.CodeCommandsInBatchActOnDifferentPK, 1},
		{"same row twice", []tables.BatchOp{ins("p", "a1"), ins("p", "a2"), ins("p", "a1")}, 400, tables.CodeInvalidDuplicateRow, 2},
		{"invalid entity", []tables.BatchOp{ins("p", "a1"), ins("p", "a#2")}, 400, tables.CodeOutOfRangeInput, 1},
		{"third insert exists", []tables.BatchOp{ins("p", "a1"), ins("p", "a2"), ins("p", "exists")}, 409, tables.CodeEntityAlreadyExists, 2},
		{"update of a missing entity", []tables.BatchOp{ins("p", "a1"), {Kind: tables.BatchUpdateMerge, Entity: ent("p", "nope"), IfMatch: "*"}}, 404, tables.CodeResourceNotFound, 1},
		{"stale ETag", []tables.BatchOp{ins("p", "a1"), {Kind: tables.BatchDelete, Entity: ent("p", "exists"), IfMatch: tables.FormatETag(time.Unix(1, 0))}}, 412, tables.CodeUpdateConditionNotSatisfied, 1},
		{"over 4 MiB", func() []tables.BatchOp {
			var ops []tables.BatchOp
			for i := range 70 {
				ops = append(ops, tables.BatchOp{Entity: ent("p", fmt.Sprint("big", i), tables.String("S", strings.Repeat("x", tables.MaxStringUnits)))})
			}
			return ops
		}(), 413, tables.CodeRequestBodyTooLarge, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Client(nil).Batch(ctx, "people", tc.ops)
			got := wantCode(t, err, tc.status, tc.code)
			if got.Index != tc.index {
				t.Fatalf("index = %d, want %d", got.Index, tc.index)
			}
			if !strings.HasPrefix(got.Error(), fmt.Sprint(tc.status)) {
				t.Fatalf("Error() = %q", got.Error())
			}
			_, err = e.Client(nil).Get(ctx, "people", "p", "a1", nil)
			wantCode(t, err, 404, tables.CodeResourceNotFound) // nothing was left behind
		})
	}
	t.Run("mixed operations", func(t *testing.T) {
		cur, _ := e.Client(nil).Get(ctx, "people", "p", "exists", nil)
		e.Client(nil).Insert(ctx, "people", ent("p", "gone"))
		e.Client(nil).Insert(ctx, "people", ent("p", "repl", tables.Int32("Old", 1)))
		_, err := e.Client(nil).Batch(ctx, "people", []tables.BatchOp{
			ins("p", "m1"),
			{Kind: tables.BatchUpdateMerge, Entity: ent("p", "exists", tables.Int32("M", 2)), IfMatch: cur.ETag()},
			{Kind: tables.BatchUpdateReplace, Entity: ent("p", "repl", tables.Int32("New", 1)), IfMatch: "*"},
			{Kind: tables.BatchUpsertMerge, Entity: ent("p", "um", tables.Int32("U", 1))},
			{Kind: tables.BatchUpsertReplace, Entity: ent("p", "ur", tables.Int32("U", 1))},
			{Kind: tables.BatchDelete, Entity: ent("p", "gone"), IfMatch: "*"},
		})
		wantCode(t, err, 0, "")
		got, _ := e.Client(nil).Get(ctx, "people", "p", "exists", nil)
		if _, ok := got.Property("N"); !ok || len(got.Properties) != 2 {
			t.Fatalf("merge lost properties: %v", got.Properties)
		}
		got, _ = e.Client(nil).Get(ctx, "people", "p", "repl", nil)
		if _, ok := got.Property("Old"); ok {
			t.Fatalf("replace kept properties: %v", got.Properties)
		}
		_, err = e.Client(nil).Get(ctx, "people", "p", "gone", nil)
		wantCode(t, err, 404, tables.CodeResourceNotFound)
	})
	keysOf := func(pk string) []string {
		t.Helper()
		p, err := e.Client(nil).QueryEntities(ctx, "people", tables.Query{Filter: "PartitionKey eq '" + pk + "'"})
		if err != nil {
			t.Fatal(err)
		}
		var rks []string
		for _, x := range p.Entities {
			rks = append(rks, x.RowKey)
		}
		return rks
	}
	t.Run("a batch deleting a key's last row, then writing it again", func(t *testing.T) {
		e.Client(nil).Insert(ctx, "people", ent("solo", "only"))
		_, err := e.Client(nil).Batch(ctx, "people", []tables.BatchOp{{Kind: tables.BatchDelete, Entity: ent("solo", "only"), IfMatch: "*"}, ins("solo", "next")})
		wantCode(t, err, 0, "")
		if rks := keysOf("solo"); !slices.Equal(rks, []string{"next"}) {
			t.Fatalf("rows = %v, want [next]", rks)
		}
		_, err = e.Client(nil).Batch(ctx, "people", []tables.BatchOp{{Kind: tables.BatchDelete, Entity: ent("solo", "next"), IfMatch: "*"}})
		wantCode(t, err, 0, "")
		if rks := keysOf("solo"); len(rks) != 0 {
			t.Fatalf("rows = %v, want none", rks)
		}
		e.Client(nil).Insert(ctx, "people", ent("solo", "again"))
		if rks := keysOf("solo"); !slices.Equal(rks, []string{"again"}) {
			t.Fatalf("rows = %v, want [again]", rks)
		}
	})
}

func TestErrorValues(t *testing.T) {
	e := newRaw(t)
	_, err := e.Client(nil).Get(ctx, "people", "a", "b", nil)
	var ee *tables.Error
	if !errors.As(err, &ee) || ee.Status != 404 || ee.Throttled() {
		t.Fatalf("got %#v", err)
	}
	if !tables.IsCode(fmt.Errorf("wrapped: %w", err), tables.CodeResourceNotFound) {
		t.Fatal("IsCode does not see through wrapping")
	}
	if (&tables.Error{Code: tables.CodeServerBusy}).Throttled() != true || (&tables.Error{Code: tables.CodeOperationTimedOut}).Throttled() != true {
		t.Fatal("503 ServerBusy and 500 OperationTimedOut are throttling")
	}
}

// TestETagsAreOpaque: an If-Match matches only the ETag as the service
// wrote it; the same instant written otherwise is another ETag.
func TestETagsAreOpaque(t *testing.T) {
	ctx := context.Background()
	e := newRaw(t)
	stored, err := e.Client(nil).Insert(ctx, "people", tables.Entity{PartitionKey: "p", RowKey: "r"})
	if err != nil {
		t.Fatal(err)
	}
	tag := stored.ETag()
	other := strings.ReplaceAll(tag, "%3A", ":")
	if _, err := e.Client(nil).Update(ctx, "people", tables.Entity{PartitionKey: "p", RowKey: "r"}, tables.Merge, other); !tables.IsCode(err, tables.CodeUpdateConditionNotSatisfied) {
		t.Fatalf("If-Match %s for %s: %v, want 412", other, tag, err)
	}
	// The service's tags are weak: the same tag made strong is malformed.
	if _, err := e.Client(nil).Update(ctx, "people", tables.Entity{PartitionKey: "p", RowKey: "r"}, tables.Merge, strings.TrimPrefix(tag, "W/")); !tables.IsCode(err, tables.CodeInvalidInput) {
		t.Fatalf("If-Match %s for %s: %v, want 400 InvalidInput", strings.TrimPrefix(tag, "W/"), tag, err)
	}
	if _, err := e.Client(nil).Update(ctx, "people", tables.Entity{PartitionKey: "p", RowKey: "r"}, tables.Merge, tag); err != nil {
		t.Fatalf("the ETag itself: %v", err)
	}
}

// TestOnlyVariants checks that the writes that return nothing store what
// their namesakes store, and refuse what they refuse.
func TestOnlyVariants(t *testing.T) {
	e := newRaw(t)
	cl := e.Client(nil)
	in := ent("p", "r1", tables.String("A", "a"))
	wantCode(t, cl.InsertOnly(ctx, "people", &in), 0, "")
	wantCode(t, cl.InsertOnly(ctx, "people", &in), 409, tables.CodeEntityAlreadyExists)
	bad := ent("p", "r/2")
	wantCode(t, cl.InsertOnly(ctx, "people", &bad), 400, tables.CodeOutOfRangeInput)
	ops := []tables.BatchOp{{Kind: tables.BatchInsert, Entity: ent("p", "r2", tables.Int32("B", 2))}, {Kind: tables.BatchInsert, Entity: ent("p", "r3")}}
	wantCode(t, cl.BatchOnly(ctx, "people", ops), 0, "")
	err := cl.BatchOnly(ctx, "people", ops)
	if te := wantCode(t, err, 409, tables.CodeEntityAlreadyExists); te.Index != 0 {
		t.Fatalf("failed at operation %d, want 0", te.Index)
	}
	up := ent("p", "r3", tables.Int64("C", 3))
	wantCode(t, cl.UpsertOnly(ctx, "people", &up, tables.Merge), 0, "")
	missing := ent("p", "r4")
	wantCode(t, cl.UpdateOnly(ctx, "people", &missing, tables.Merge, "*"), 404, tables.CodeResourceNotFound)
	wantCode(t, cl.UpdateOnly(ctx, "people", &up, tables.Merge, "bad"), 400, tables.CodeInvalidInput)
	upd := ent("p", "r2", tables.Int64("D", 4))
	wantCode(t, cl.UpdateOnly(ctx, "people", &upd, tables.Merge, "*"), 0, "")
	for rk, want := range map[string]int{"r1": 1, "r2": 2, "r3": 1} {
		got, err := cl.Get(ctx, "people", "p", rk, nil)
		wantCode(t, err, 0, "")
		if len(got.Properties) != want {
			t.Fatalf("%s holds %d properties, want %d", rk, len(got.Properties), want)
		}
	}
}

// TestBatchPartitionKeyErrors checks that a batch's bad PartitionKey is
// reported at its first operation, whatever its kind, and a long one
// counted in UTF-16 code units.
func TestBatchPartitionKeyErrors(t *testing.T) {
	e := newRaw(t)
	cl := e.Client(nil)
	for _, kind := range []tables.BatchOpKind{tables.BatchInsert, tables.BatchDelete} {
		ops := []tables.BatchOp{{Kind: kind, Entity: ent("p/q", "r1"), IfMatch: "*"}, {Kind: tables.BatchInsert, Entity: ent("p/q", "r2")}}
		_, err := cl.Batch(ctx, "people", ops)
		if te := wantCode(t, err, 400, tables.CodeOutOfRangeInput); te.Index != 0 {
			t.Fatalf("kind %d: failed at operation %d, want 0", kind, te.Index)
		}
	}
	pk := strings.Repeat("é", 300) // 600 bytes, 300 code units: allowed
	ops := []tables.BatchOp{{Kind: tables.BatchInsert, Entity: ent(pk, "r1")}, {Kind: tables.BatchInsert, Entity: ent(pk, "r2")}}
	_, err := cl.Batch(ctx, "people", ops)
	wantCode(t, err, 0, "")
}
