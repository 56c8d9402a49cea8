package workloads

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/tables"
)

// TestTypedEntitiesWeighTheirSize: entities of a workload's property
// count and EDM types weigh their size by the service's formula, to within
// a byte for each string property (two bytes a character), whatever their
// keys; each property has its type, in turn.
func TestTypedEntitiesWeighTheirSize(t *testing.T) {
	pk, rk := strings.Repeat("p", 36), "tb_1_7_0000000001"
	for _, c := range []struct {
		props int
		types []string
		size  int
	}{
		{10, nil, 1024},
		{0, []string{"string", "int64", "datetime", "guid", "double", "bool", "int32", "binary"}, 1024},
		{20, []string{"int64", "binary"}, 4000},
		{4, []string{"string"}, 200_000},
	} {
		s := DefaultSpec()
		s.EntityProps, s.EntityTypes, s.EntitySize = c.props, c.types, c.size
		if err := s.Validate(); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		kinds, _ := s.propertyTypes()
		p := newTypedPayloads(rand.New(rand.NewPCG(1, 2)), kinds, c.size, len(pk), len(rk), 2)
		strs := 0
		for i, k := range kinds {
			if k == tables.EdmString {
				strs++
			}
			if got := p.props[0][i].Type; got != k {
				t.Fatalf("%+v: property %d is %v, want %v", c, i, got, k)
			}
		}
		got := tables.EntitySize(pk, rk, p.nextProps())
		if got > c.size || got < c.size-strs {
			t.Errorf("%+v: %d bytes, want %d (to within %d)", c, got, c.size, strs)
		}
	}
}

// TestTypedEntitiesBadInput: a property count or types the service cannot
// hold, or that cannot make the size, are refused by field.
func TestTypedEntitiesBadInput(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"mix: {insert: 1}\nentity:\n  types: [string, money]\n", `line 3: entity.types: entity type "money" is not known: use string, binary, int32`},
		{"mix: {insert: 1}\nentity: {properties: 300}\n", "line 2: entity.properties: 300 properties is out of range: an entity holds 1 to 252"},
		{"mix: {insert: 1}\nentity: {types: [int64, guid]}\n", "entity.types: entities of int64, guid properties only have a fixed size"},
		{"mix: {insert: 1}\nentity: {size: 300, properties: 40, types: [string, int64]}\n", "entity.size: entities of 40 such properties need at least"},
		{"mix: {insert: 1}\nentity: {size: 500000, properties: 2}\n", "entity.properties: a string property holds at most 32768 characters"},
	} {
		p, err := ParseWorkload([]byte(c.file))
		if err == nil {
			_, err = p.Spec(DefaultSpec())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.file, err, c.want)
		}
	}
	p, err := ParseWorkload([]byte("mix: {insert: 1}\nentity: {size: 2048, properties: 6, types: int64}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Spec(DefaultSpec()); err == nil || !strings.Contains(err.Error(), "only have a fixed size") {
		t.Fatalf("one type as a word: %v", err)
	}
}
