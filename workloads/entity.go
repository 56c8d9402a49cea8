package workloads

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/tables"
)

// entityTypes are the EDM types a workload's entities may carry, by the
// names a workload file gives them, in the order the docs list them.
var entityTypes = []struct {
	name string
	t    tables.EdmType
}{
	{"string", tables.EdmString}, {"binary", tables.EdmBinary}, {"int32", tables.EdmInt32}, {"int64", tables.EdmInt64},
	{"double", tables.EdmDouble}, {"bool", tables.EdmBoolean}, {"datetime", tables.EdmDateTime}, {"guid", tables.EdmGuid},
}

// EntityTypeNames lists the EDM types an entity's properties may take.
func EntityTypeNames() []string {
	var out []string
	for _, t := range entityTypes {
		out = append(out, t.name)
	}
	return out
}

// typed reports whether the spec shapes its entities' properties itself,
// rather than one Payload string.
func (s *Spec) typed() bool { return s.EntityProps > 0 || len(s.EntityTypes) > 0 }

// propertyTypes returns the types of the spec's entities' properties, in
// order: EntityProps of them (or one of each type given), cycling through
// EntityTypes (string when none is given).
func (s *Spec) propertyTypes() ([]tables.EdmType, error) {
	var kinds []tables.EdmType
	for _, name := range s.EntityTypes {
		i := slices.IndexFunc(entityTypes, func(t struct {
			name string
			t    tables.EdmType
		}) bool {
			return t.name == name
		})
		if i < 0 {
			return nil, fmt.Errorf("entity type %q is not known: use %s", name, orList(EntityTypeNames()))
		}
		kinds = append(kinds, entityTypes[i].t)
	}
	if len(kinds) == 0 {
		kinds = []tables.EdmType{tables.EdmString}
	}
	n := s.EntityProps
	if n == 0 {
		n = len(kinds)
	}
	out := make([]tables.EdmType, n)
	for i := range out {
		out[i] = kinds[i%len(kinds)]
	}
	return out, nil
}

// validateEntity checks the shape of typed entities: a property count the
// service takes, types it knows, room for them in the smallest entity, and
// a string or binary property to carry the rest of its size.
func (s *Spec) validateEntity(bad func(field, format string, args ...any)) {
	if !s.typed() {
		return
	}
	if s.EntityProps < 0 || s.EntityProps > tables.MaxProperties {
		bad("entity_properties", "%d properties is out of range: an entity holds 1 to %d", s.EntityProps, tables.MaxProperties)
		return
	}
	kinds, err := s.propertyTypes()
	if err != nil {
		bad("entity_types", "%v", err)
		return
	}
	if !slices.ContainsFunc(kinds, variable) {
		bad("entity_types", "entities of %s properties only have a fixed size, not %d bytes: add string or binary to the types", strings.Join(s.EntityTypes, ", "), s.EntitySize)
		return
	}
	fixed, _ := typedShape(kinds, 0, 0, 0)
	if s.EntitySize < 4+fixed {
		bad("entity_size", "entities of %d such properties need at least %d bytes beside their keys: use a larger size, or fewer properties", len(kinds), fixed)
	}
	_, each := typedShape(kinds, max(s.EntitySize, s.EntityMax), 0, 0)
	for i, t := range slices.DeleteFunc(slices.Clone(kinds), func(t tables.EdmType) bool { return !variable(t) }) {
		if t == tables.EdmString && each[i]/2 > tables.MaxStringUnits {
			bad("entity_properties", "a string property holds at most %d characters, and entities of %d bytes over %d properties need %d in each: give more properties", tables.MaxStringUnits, max(s.EntitySize, s.EntityMax), len(kinds), each[i]/2)
			return
		}
	}
}

// variable reports whether a type's size follows its value's length.
func variable(t tables.EdmType) bool { return t == tables.EdmString || t == tables.EdmBinary }

// propName names typed property i: P01, P02, ...
func propName(i int) string { return fmt.Sprintf("P%02d", i+1) }

// typedShape returns the bytes the fixed parts of typed properties take
// (their names and headers, and the values of fixed-size types) and, of
// room bytes left beside the keys, the value bytes each variable property
// gets.
func typedShape(kinds []tables.EdmType, size, pkLen, rkLen int) (fixed int, each []int) {
	vars := 0
	for i, t := range kinds {
		fixed += 8 + 2*len(propName(i))
		switch {
		case t == tables.EdmString || t == tables.EdmBinary:
			fixed += 4
			vars++
		default:
			fixed += tables.ValueSize(sample(t, nil))
		}
	}
	room := max(0, size-4-2*(pkLen+rkLen)-fixed)
	each = make([]int, vars)
	for i := range each {
		each[i] = room / vars
		if i < room%vars {
			each[i]++
		}
	}
	return fixed, each
}

// sample returns a value of type t, drawn from rng (or a zero one).
func sample(t tables.EdmType, rng *rand.Rand) tables.Property {
	u := func() uint64 {
		if rng == nil {
			return 0
		}
		return rng.Uint64()
	}
	switch t {
	case tables.EdmInt32:
		return tables.Int32("", int32(u()))
	case tables.EdmInt64:
		return tables.Int64("", int64(u()>>1))
	case tables.EdmDouble:
		return tables.Double("", float64(u()>>11)/(1<<53))
	case tables.EdmBoolean:
		return tables.Bool("", u()&1 == 1)
	case tables.EdmDateTime:
		return tables.DateTime("", time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(u()%(1<<58))))
	case tables.EdmGuid:
		var g uuid.UUID
		a, b := u(), u()
		for j := range 8 {
			g[j], g[8+j] = byte(a>>(8*j)), byte(b>>(8*j))
		}
		return tables.GUID("", g)
	}
	return tables.String("", "")
}

// newTypedPayloads makes count entities' properties of the given types so
// that an entity with keys of the given lengths weighs size bytes by the
// service's formula: the fixed-size values drawn at random, the string
// (two bytes a character) and binary values sharing what is left. A string
// property holds at most 32K characters: its share beyond goes to the
// others, or is left out.
func newTypedPayloads(rng *rand.Rand, kinds []tables.EdmType, size, pkLen, rkLen, count int) payloads {
	_, each := typedShape(kinds, size, pkLen, rkLen)
	var p payloads
	for range count {
		props := make([]tables.Property, len(kinds))
		v := 0
		for i, t := range kinds {
			name := propName(i)
			switch t {
			case tables.EdmString:
				b := make([]byte, min(each[v]/2, tables.MaxStringUnits))
				for j := range b {
					b[j] = payloadAlphabet[rng.IntN(len(payloadAlphabet))]
				}
				props[i] = tables.String(name, string(b))
				v++
			case tables.EdmBinary:
				b := make([]byte, each[v])
				for j := range b {
					b[j] = byte(rng.Uint32())
				}
				props[i] = tables.Binary(name, b)
				v++
			default:
				props[i] = sample(t, rng)
				props[i].Name = name
			}
		}
		p.props = append(p.props, props)
	}
	return p
}

// typedPayloads makes a thread's typed entities' properties, of the spec's
// size or of sizes drawn from its range, from the thread's own random
// source.
func typedPayloads(rng *rand.Rand, s *Spec, pkLen, rkLen int) payloads {
	kinds, _ := s.propertyTypes() // Validate refused unknown types
	if s.EntityMax <= s.EntitySize {
		return newTypedPayloads(rng, kinds, s.EntitySize, pkLen, rkLen, payloadCopies)
	}
	var p payloads
	for range 64 {
		one := newTypedPayloads(rng, kinds, s.EntitySize+rng.IntN(s.EntityMax-s.EntitySize+1), pkLen, rkLen, 1)
		p.props = append(p.props, one.props...)
	}
	return p
}

// Words is a list of words that a file may give as one word.
type Words []string

// UnmarshalYAML reads a word or a list of them.
func (w *Words) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*w = Words{n.Value}
		return nil
	}
	var list []string
	err := n.Decode(&list)
	*w = list
	return err
}
