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
func wantCode(t *testing.T, err error, status int, code string) *engine.Error {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("got error %v, want success", err)
		}
		return nil
	}
	e, ok := engine.AsError(err)
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

func ent(pk, rk string, props ...engine.Property) engine.Entity {
	return engine.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
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
		{"create again", func() error { return e.CreateTable(ctx, "Orders2") }, 409, engine.CodeTableAlreadyExists},
		{"names are case-insensitive", func() error { return e.CreateTable(ctx, "ORDERS2") }, 409, engine.CodeTableAlreadyExists},
		{"too short", func() error { return e.CreateTable(ctx, "ab") }, 400, engine.CodeInvalidResourceName},
		{"starts with a digit", func() error { return e.CreateTable(ctx, "1abc") }, 400, engine.CodeInvalidResourceName},
		{"has a dash", func() error { return e.CreateTable(ctx, "ab-cd") }, 400, engine.CodeInvalidResourceName},
		{"too long", func() error { return e.CreateTable(ctx, "a"+strings.Repeat("b", 63)) }, 400, engine.CodeInvalidResourceName},
		{"63 characters", func() error { return e.CreateTable(ctx, "a"+strings.Repeat("b", 62)) }, 0, ""},
		{"reserved", func() error { return e.CreateTable(ctx, "Tables") }, 400, engine.CodeInvalidResourceName},
		{"delete missing", func() error { return e.DeleteTable(ctx, "nosuch") }, 404, engine.CodeTableNotFound},
		{"insert into missing", func() error { _, err := e.Insert(ctx, "nosuch", ent("a", "b")); return err }, 404, engine.CodeTableNotFound},
		{"get from missing", func() error { _, err := e.Get(ctx, "nosuch", "a", "b", nil); return err }, 404, engine.CodeTableNotFound},
		{"query missing", func() error { _, err := e.QueryEntities(ctx, "nosuch", engine.Query{}); return err }, 404, engine.CodeTableNotFound},
		{"batch into missing", func() error {
			_, err := e.Batch(ctx, "nosuch", []engine.BatchOp{{Entity: ent("a", "b")}})
			return err
		}, 404, engine.CodeTableNotFound},
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
		wantCode(t, e.CreateTable(ctx, "People"), 409, engine.CodeTableBeingDeleted)
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
	wantCode(t, err, 400, engine.CodeInvalidQueryParameterValue)
}

func TestEntityValidation(t *testing.T) {
	e := newRaw(t)
	many := func(n int) []engine.Property {
		var ps []engine.Property
		for i := range n {
			ps = append(ps, engine.Int32(fmt.Sprintf("P%d", i), int32(i)))
		}
		return ps
	}
	big := func(n int) []engine.Property {
		var ps []engine.Property
		for i := range n {
			ps = append(ps, engine.String(fmt.Sprintf("S%d", i), strings.Repeat("x", engine.MaxStringUnits)))
		}
		return ps
	}
	astral := strings.Repeat("😀", 256) // 512 UTF-16 code units
	tests := []struct {
		name   string
		e      engine.Entity
		status int
		code   string
	}{
		{"plain", ent("pk", "rk", engine.String("Payload", "x")), 0, ""},
		{"empty keys are legal", ent("", ""), 0, ""},
		{"slash in PK", ent("a/b", "r"), 400, engine.CodeOutOfRangeInput},
		{"backslash in RK", ent("p", `a\b`), 400, engine.CodeOutOfRangeInput},
		{"hash in RK", ent("p", "a#b"), 400, engine.CodeOutOfRangeInput},
		{"question mark in PK", ent("a?b", "r"), 400, engine.CodeOutOfRangeInput},
		{"NUL in PK", ent("a\x00b", "r"), 400, engine.CodeOutOfRangeInput},
		{"U+001F in RK", ent("p", "a\x1fb"), 400, engine.CodeOutOfRangeInput},
		{"DEL in RK", ent("p", "a\x7fb"), 400, engine.CodeOutOfRangeInput},
		{"U+0085 in PK", ent("a\u0085b", "r"), 400, engine.CodeOutOfRangeInput},
		{"U+009F in RK", ent("p", "a\u009fb"), 400, engine.CodeOutOfRangeInput},
		{"U+00A0 is allowed", ent("a\u00a0b", "r"), 0, ""},
		{"key of 512 units", ent(strings.Repeat("k", 512), "r"), 0, ""},
		{"key of 513 units", ent(strings.Repeat("k", 513), "r"), 400, engine.CodeOutOfRangeInput},
		{"astral key of 512 units", ent(astral, "r"), 0, ""},
		{"astral key of 514 units", ent(astral+"😀", "r"), 400, engine.CodeOutOfRangeInput},
		{"name starts with a digit", ent("p", "r1", engine.Int32("1a", 1)), 400, engine.CodePropertyNameInvalid},
		{"name with a dash", ent("p", "r2", engine.Int32("a-b", 1)), 400, engine.CodePropertyNameInvalid},
		{"empty name", ent("p", "r3", engine.Int32("", 1)), 400, engine.CodePropertyNameInvalid},
		{"underscore name", ent("p", "r4", engine.Int32("_a1", 1)), 0, ""},
		{"name of 255", ent("p", "r5", engine.Int32(strings.Repeat("n", 255), 1)), 0, ""},
		{"name of 256", ent("p", "r6", engine.Int32(strings.Repeat("n", 256), 1)), 400, engine.CodePropertyNameTooLong},
		{"duplicate names", ent("p", "r7", engine.Int32("A", 1), engine.String("A", "x")), 400, engine.CodeDuplicatePropertiesSpecified},
		{"a key as a property", ent("p", "r8", engine.String("RowKey", "x")), 400, engine.CodeDuplicatePropertiesSpecified},
		{"252 properties", ent("p", "r9", many(252)...), 0, ""},
		{"253 properties", ent("p", "r10", many(253)...), 400, engine.CodeTooManyProperties},
		{"string of 32K units", ent("p", "r11", engine.String("S", strings.Repeat("x", engine.MaxStringUnits))), 0, ""},
		{"string over 32K units", ent("p", "r12", engine.String("S", strings.Repeat("x", engine.MaxStringUnits+1))), 400, engine.CodePropertyValueTooLarge},
		{"binary of 64 KiB", ent("p", "r13", engine.Binary("B", make([]byte, 64*1024))), 0, ""},
		{"binary over 64 KiB", ent("p", "r14", engine.Binary("B", make([]byte, 64*1024+1))), 400, engine.CodePropertyValueTooLarge},
		{"entity under 1 MiB", ent("p", "r15", big(15)...), 0, ""},
		{"entity over 1 MiB", ent("p", "r16", big(16)...), 400, engine.CodeEntityTooLarge},
		{"value of the wrong type", ent("p", "r17", engine.Property{Name: "N", Type: engine.EdmInt32, Value: "7"}), 400, engine.CodeInvalidValueType},
		{"DateTime before 1601", ent("p", "r18", engine.DateTime("D", time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC))), 400, engine.CodeOutOfRangeInput},
		{"DateTime in range", ent("p", "r19", engine.DateTime("D", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))), 0, ""},
		{"every type", ent("p", "r20", engine.String("S", "s"), engine.Int32("I", -1), engine.Int64("L", math.MaxInt64),
			engine.Double("D", 1.5), engine.Bool("B", true), engine.DateTime("T", time.Now()), engine.GUID("G", uuid.New()), engine.Binary("X", []byte{1})), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Insert(ctx, "people", tc.e)
			wantCode(t, err, tc.status, tc.code)
		})
	}
}

func TestEntitySize(t *testing.T) {
	// 4 + 2·len(PK+RK) + Σ(8 + 2·len(name) + sizeof(value)).
	x := ent("ab", "cde", engine.String("Payload", "hello"), engine.Int32("N", 1), engine.Int64("L", 1),
		engine.Bool("B", true), engine.GUID("G", uuid.Nil), engine.Binary("X", []byte{1, 2, 3}), engine.Double("D", 0), engine.DateTime("T", time.Now()))
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
			got, err := e.Upsert(ctx, "people", ent("p", "r", engine.Int32("N", int32(i))), engine.Replace)
			wantCode(t, err, 0, "")
			if !etagRE.MatchString(got.ETag()) {
				t.Fatalf("ETag %q is not of the service's form", got.ETag())
			}
			if !got.Timestamp.After(last) {
				t.Fatalf("timestamp %v does not follow %v", got.Timestamp, last)
			}
			last = got.Timestamp
		}
		stored, _ := e.Get(ctx, "people", "p", "r", nil)
		if !stored.Timestamp.Equal(last) || stored.Timestamp.Nanosecond()%100 != 0 {
			t.Fatalf("stored timestamp %v, want %v at 100 ns precision", stored.Timestamp, last)
		}
	})
}

func TestSingleOperations(t *testing.T) {
	e := newRaw(t)
	first, err := e.Insert(ctx, "people", ent("p", "r", engine.String("A", "a"), engine.Int32("B", 1), engine.Property{Name: "Timestamp", Type: engine.EdmString, Value: "ignored"}))
	wantCode(t, err, 0, "")
	if _, ok := first.Property("Timestamp"); ok {
		t.Fatal("a client Timestamp property was stored")
	}
	stale := first.ETag()
	tests := []struct {
		name   string
		do     func() (engine.Entity, error)
		status int
		code   string
		props  map[string]any // what the entity holds afterwards
	}{
		{"insert existing", func() (engine.Entity, error) { return e.Insert(ctx, "people", ent("p", "r")) }, 409, engine.CodeEntityAlreadyExists, nil},
		{"get missing", func() (engine.Entity, error) { return e.Get(ctx, "people", "p", "nope", nil) }, 404, engine.CodeResourceNotFound, nil},
		{"update missing", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "nope"), engine.Merge, "*")
		}, 404, engine.CodeResourceNotFound, nil},
		{"update needs If-Match", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r"), engine.Merge, "")
		}, 400, engine.CodeInvalidInput, nil},
		{"update with a malformed ETag", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r"), engine.Merge, `abc`)
		}, 400, engine.CodeInvalidInput, nil},
		{"update with a well-formed ETag the service never issued", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r"), engine.Merge, `W/"wrong"`)
		}, 412, engine.CodeUpdateConditionNotSatisfied, nil},
		{"merge with the current ETag", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r", engine.Int32("B", 2), engine.Bool("C", true)), engine.Merge, stale)
		}, 0, "", map[string]any{"A": "a", "B": int32(2), "C": true}},
		{"merge with a stale ETag", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r", engine.Int32("B", 3)), engine.Merge, stale)
		}, 412, engine.CodeUpdateConditionNotSatisfied, map[string]any{"A": "a", "B": int32(2), "C": true}},
		{"replace with *", func() (engine.Entity, error) {
			return e.Update(ctx, "people", ent("p", "r", engine.Int32("D", 4)), engine.Replace, "*")
		}, 0, "", map[string]any{"D": int32(4)}},
		{"upsert merge into existing", func() (engine.Entity, error) {
			return e.Upsert(ctx, "people", ent("p", "r", engine.Int32("E", 5)), engine.Merge)
		}, 0, "", map[string]any{"D": int32(4), "E": int32(5)}},
		{"upsert replace of existing", func() (engine.Entity, error) {
			return e.Upsert(ctx, "people", ent("p", "r", engine.Int32("F", 6)), engine.Replace)
		}, 0, "", map[string]any{"F": int32(6)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.do()
			wantCode(t, err, tc.status, tc.code)
			if tc.props == nil {
				return
			}
			got, err := e.Get(ctx, "people", "p", "r", nil)
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
		_, err := e.Upsert(ctx, "people", ent("p", "new"), engine.Merge)
		wantCode(t, err, 0, "")
	})
	t.Run("select", func(t *testing.T) {
		e.Upsert(ctx, "people", ent("p", "sel", engine.Int32("X", 1), engine.Int32("Y", 2)), engine.Replace)
		got, _ := e.Get(ctx, "people", "p", "sel", []string{"Y", "Missing"})
		if len(got.Properties) != 1 || got.Properties[0].Name != "Y" {
			t.Fatalf("selected %v", got.Properties)
		}
	})
	t.Run("delete", func(t *testing.T) {
		cur, _ := e.Get(ctx, "people", "p", "new", nil)
		wantCode(t, e.Delete(ctx, "people", "p", "new", FormatOld(cur)), 412, engine.CodeUpdateConditionNotSatisfied)
		wantCode(t, e.Delete(ctx, "people", "p", "new", ""), 400, engine.CodeInvalidInput)
		wantCode(t, e.Delete(ctx, "people", "p", "new", cur.ETag()), 0, "")
		wantCode(t, e.Delete(ctx, "people", "p", "new", "*"), 404, engine.CodeResourceNotFound)
		_, err := e.Get(ctx, "people", "p", "new", nil)
		wantCode(t, err, 404, engine.CodeResourceNotFound)
	})
}

// FormatOld returns an ETag of the entity one tick before its own.
func FormatOld(e engine.Entity) string {
	return engine.FormatETag(e.Timestamp.Add(-100 * time.Nanosecond))
}

func TestBatch(t *testing.T) {
	e := newRaw(t)
	ins := func(pk, rk string) engine.BatchOp {
		return engine.BatchOp{Kind: engine.BatchInsert, Entity: ent(pk, rk, engine.String("Payload", rk))}
	}
	e.Insert(ctx, "people", ent("p", "exists", engine.Int32("N", 1)))
	t.Run("all share one timestamp", func(t *testing.T) {
		var ops []engine.BatchOp
		for i := range 100 {
			ops = append(ops, ins("p", fmt.Sprintf("b%03d", i)))
		}
		out, err := e.Batch(ctx, "people", ops)
		wantCode(t, err, 0, "")
		for _, o := range out {
			if !o.Timestamp.Equal(out[0].Timestamp) {
				t.Fatalf("timestamps differ: %v and %v", o.Timestamp, out[0].Timestamp)
			}
		}
	})
	tests := []struct {
		name   string
		ops    []engine.BatchOp
		status int
		code   string
		index  int
	}{
		{"empty", nil, 400, engine.CodeInvalidInput, -1},
		{"101 operations", slices.Repeat([]engine.BatchOp{ins("p", "x")}, 101), 400, engine.CodeInvalidInput, -1},
		{"two partitions", []engine.BatchOp{ins("p", "a1"), ins("q", "a2")}, 400, engine.CodeCommandsInBatchActOnDifferentPK, 1},
		{"same row twice", []engine.BatchOp{ins("p", "a1"), ins("p", "a2"), ins("p", "a1")}, 400, engine.CodeInvalidDuplicateRow, 2},
		{"invalid entity", []engine.BatchOp{ins("p", "a1"), ins("p", "a#2")}, 400, engine.CodeOutOfRangeInput, 1},
		{"third insert exists", []engine.BatchOp{ins("p", "a1"), ins("p", "a2"), ins("p", "exists")}, 409, engine.CodeEntityAlreadyExists, 2},
		{"update of a missing entity", []engine.BatchOp{ins("p", "a1"), {Kind: engine.BatchUpdateMerge, Entity: ent("p", "nope"), IfMatch: "*"}}, 404, engine.CodeResourceNotFound, 1},
		{"stale ETag", []engine.BatchOp{ins("p", "a1"), {Kind: engine.BatchDelete, Entity: ent("p", "exists"), IfMatch: engine.FormatETag(time.Unix(1, 0))}}, 412, engine.CodeUpdateConditionNotSatisfied, 1},
		{"over 4 MiB", func() []engine.BatchOp {
			var ops []engine.BatchOp
			for i := range 70 {
				ops = append(ops, engine.BatchOp{Entity: ent("p", fmt.Sprint("big", i), engine.String("S", strings.Repeat("x", engine.MaxStringUnits)))})
			}
			return ops
		}(), 413, engine.CodeRequestBodyTooLarge, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Batch(ctx, "people", tc.ops)
			got := wantCode(t, err, tc.status, tc.code)
			if got.Index != tc.index {
				t.Fatalf("index = %d, want %d", got.Index, tc.index)
			}
			if !strings.HasPrefix(got.Error(), fmt.Sprint(tc.status)) {
				t.Fatalf("Error() = %q", got.Error())
			}
			_, err = e.Get(ctx, "people", "p", "a1", nil)
			wantCode(t, err, 404, engine.CodeResourceNotFound) // nothing was left behind
		})
	}
	t.Run("mixed operations", func(t *testing.T) {
		cur, _ := e.Get(ctx, "people", "p", "exists", nil)
		e.Insert(ctx, "people", ent("p", "gone"))
		e.Insert(ctx, "people", ent("p", "repl", engine.Int32("Old", 1)))
		_, err := e.Batch(ctx, "people", []engine.BatchOp{
			ins("p", "m1"),
			{Kind: engine.BatchUpdateMerge, Entity: ent("p", "exists", engine.Int32("M", 2)), IfMatch: cur.ETag()},
			{Kind: engine.BatchUpdateReplace, Entity: ent("p", "repl", engine.Int32("New", 1)), IfMatch: "*"},
			{Kind: engine.BatchUpsertMerge, Entity: ent("p", "um", engine.Int32("U", 1))},
			{Kind: engine.BatchUpsertReplace, Entity: ent("p", "ur", engine.Int32("U", 1))},
			{Kind: engine.BatchDelete, Entity: ent("p", "gone"), IfMatch: "*"},
		})
		wantCode(t, err, 0, "")
		got, _ := e.Get(ctx, "people", "p", "exists", nil)
		if _, ok := got.Property("N"); !ok || len(got.Properties) != 2 {
			t.Fatalf("merge lost properties: %v", got.Properties)
		}
		got, _ = e.Get(ctx, "people", "p", "repl", nil)
		if _, ok := got.Property("Old"); ok {
			t.Fatalf("replace kept properties: %v", got.Properties)
		}
		_, err = e.Get(ctx, "people", "p", "gone", nil)
		wantCode(t, err, 404, engine.CodeResourceNotFound)
	})
}

func TestErrorValues(t *testing.T) {
	e := newRaw(t)
	_, err := e.Get(ctx, "people", "a", "b", nil)
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Status != 404 || ee.Throttled() {
		t.Fatalf("got %#v", err)
	}
	if !engine.IsCode(fmt.Errorf("wrapped: %w", err), engine.CodeResourceNotFound) {
		t.Fatal("IsCode does not see through wrapping")
	}
	if (&engine.Error{Code: engine.CodeServerBusy}).Throttled() != true || (&engine.Error{Code: engine.CodeOperationTimedOut}).Throttled() != true {
		t.Fatal("503 ServerBusy and 500 OperationTimedOut are throttling")
	}
}

// TestETagsAreOpaque: an If-Match matches only the ETag as the service
// wrote it; the same instant written otherwise is another ETag.
func TestETagsAreOpaque(t *testing.T) {
	ctx := context.Background()
	e := newRaw(t)
	stored, err := e.Insert(ctx, "people", engine.Entity{PartitionKey: "p", RowKey: "r"})
	if err != nil {
		t.Fatal(err)
	}
	tag := stored.ETag()
	for _, other := range []string{strings.ReplaceAll(tag, "%3A", ":"), strings.TrimPrefix(tag, "W/")} {
		if _, err := e.Update(ctx, "people", engine.Entity{PartitionKey: "p", RowKey: "r"}, engine.Merge, other); !engine.IsCode(err, engine.CodeUpdateConditionNotSatisfied) {
			t.Fatalf("If-Match %s for %s: %v, want 412", other, tag, err)
		}
	}
	if _, err := e.Update(ctx, "people", engine.Entity{PartitionKey: "p", RowKey: "r"}, engine.Merge, tag); err != nil {
		t.Fatalf("the ETag itself: %v", err)
	}
}
