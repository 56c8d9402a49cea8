// Package odata is the Table service's OData JSON form of entities, the one
// codec the served engine (engine/rest) and the SDK target
// (workloads/aztarget) share: decoding a request's entity with its
// @odata.type annotations, writing one in each metadata level of a
// response, and the compact form a client sends. It sits at the wire, on
// either side of it: between a target and the service, not in the engine.
package odata

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unique"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/tables"
)

// Metadata levels of JSON responses: the odata= parameter of Accept or
// $format.
const (
	NoMetadata      = "nometadata"
	MinimalMetadata = "minimalmetadata"
	FullMetadata    = "fullmetadata"
)

// DecodeEntity reads an entity from a JSON body: properties with their
// @odata.type annotations. PartitionKey and RowKey are required, except
// where keys (the URL's, for updates) are given: a body without them takes
// those. Timestamp and odata.* are ignored, as the service ignores them.
// Nothing it returns shares memory with body or keys.
func DecodeEntity(body []byte, keys *[2]string) (tables.Entity, *tables.Error) {
	var d Decoder
	return d.Decode(body, keys)
}

// A Decoder decodes the entities of one request, a batch's above all, with
// fewer allocations than a DecodeEntity call each: an entity's strings are
// one copy, less the long values entities repeat (see repeated), and the
// entities share one array of properties and the copy of a PartitionKey
// that repeats the entity's before. Entities a server
// stores as they come keep that array while any of them is stored, as the
// engine keeps a batch's records: a few dozen bytes for each entity of the
// batch that is gone, for an allocation each entity saves.
type Decoder struct {
	left  int               // entities still to come, to size the array
	props []tables.Property // the array's room for the next entities
	pk    string            // the last PartitionKey, as copied
}

// NewDecoder returns a Decoder for a request of n entities.
func NewDecoder(n int) *Decoder { return &Decoder{left: n} }

// Decode reads the next entity, as DecodeEntity does.
func (d *Decoder) Decode(body []byte, keys *[2]string) (tables.Entity, *tables.Error) {
	d.left--
	var e tables.Entity
	var buf [8]field // an entity's members, on the stack for the usual few
	fields, ok := scanFlat(body, buf[:0])
	if !ok { // nested values, odd escapes, repeated names, bad JSON or bad UTF-8: the general decoder decides
		if !utf8.Valid(body) { // encoding/json would read it, with U+FFFD for the bad bytes
			return e, tables.BadRequest(tables.CodeInvalidInput, "The request body is not valid UTF-8.")
		}
		var err *tables.Error
		if fields, err = decodeGeneral(body); err != nil {
			return e, err
		}
	}
	types, err := annotations(fields)
	if err != nil {
		return e, err
	}
	pk, rk, err := entityKeys(fields, keys, body)
	if err != nil {
		return e, err
	}
	// The strings read are views of body: those the entity keeps are
	// copied out, together. Others (annotations, values parsed into
	// numbers, times or GUIDs) are not kept.
	size, n := len(rk), 0
	if pk != d.pk {
		size += len(pk)
	}
	for i := range fields {
		f := &fields[i]
		if f.prop = f.property(); !f.prop {
			continue
		}
		n++
		f.edm = typeOf(types, f.name)
		if f.str && keptString(f.edm) {
			if f.v = repeated(f.s); f.v == nil {
				size += len(f.s)
			}
		}
	}
	arena := make([]byte, 0, size)
	keep := func(s string) string {
		if s == "" {
			return ""
		}
		arena = append(arena, s...) // within its capacity: earlier strings stay where they are
		return unsafe.String(&arena[len(arena)-len(s)], len(s))
	}
	if pk != d.pk {
		d.pk = keep(pk)
	}
	e.PartitionKey, e.RowKey = d.pk, keep(rk)
	if n > 0 {
		if cap(d.props)-len(d.props) < n {
			d.props = make([]tables.Property, 0, n*max(d.left+1, 1))
		}
		e.Properties = d.props[len(d.props) : len(d.props) : len(d.props)+n]
	}
	for _, f := range fields {
		if !f.prop {
			continue
		}
		if f.str && keptString(f.edm) {
			if f.v != nil { // a value stored before, as boxed then
				e.Properties = append(e.Properties, tables.Property{Name: f.name, Type: tables.EdmString, Value: f.v})
				continue
			}
			f.s = keep(f.s)
		}
		p, err := decodeValue(f.name, f.value(), f.edm) // the name is interned by both readers
		if err != nil {
			return e, err
		}
		e.Properties = append(e.Properties, p)
	}
	d.props = d.props[:len(d.props)+len(e.Properties)]
	return e, nil
}

// annotations are the @odata.type annotations among an entity's fields,
// few, each as a field of the property it types.
func annotations(fields []field) ([]field, *tables.Error) {
	var types []field
	for _, f := range fields {
		if name, ok := strings.CutSuffix(f.name, "@odata.type"); ok {
			if !f.str {
				return nil, tables.BadRequest(tables.CodeInvalidInput, "The type annotation of "+name+" is not a string.")
			}
			types = append(types, stringField(name, f.s))
		}
	}
	return types, nil
}

// entityKeys are an entity's PartitionKey and RowKey, from its fields or,
// where they leave one out, from the keys its URL names (nil for none).
func entityKeys(fields []field, keys *[2]string, body []byte) (pk, rk string, err *tables.Error) {
	var hasPK, hasRK, presentPK, presentRK bool
	for _, f := range fields {
		switch f.name {
		case "PartitionKey":
			pk, hasPK = f.s, f.str
			presentPK = true
		case "RowKey":
			rk, hasRK = f.s, f.str
			presentRK = true
		}
	}
	if keys != nil {
		if !presentPK {
			pk, hasPK = keys[0], true
		}
		if !presentRK {
			rk, hasRK = keys[1], true
		}
	}
	if !hasPK || !hasRK {
		return "", "", tables.BadRequest(tables.CodePropertiesNeedValue, "The values are not specified for all properties in the entity: PartitionKey and RowKey are required strings.")
	}
	// encoding/json turns a lone UTF-16 surrogate escape into U+FFFD, which
	// would make distinct keys collide; refuse it, as invalid UTF-8.
	if (strings.ContainsRune(pk, utf8.RuneError) || strings.ContainsRune(rk, utf8.RuneError)) && loneSurrogate(body) {
		return "", "", tables.BadRequest(tables.CodeInvalidInput, "A key holds an unpaired UTF-16 surrogate, which is not a character.")
	}
	return pk, rk, nil
}

// typeOf returns the @odata.type annotation of the member name, or "".
func typeOf(types []field, name string) string {
	edm := ""
	for _, t := range types {
		if t.name == name {
			edm = t.s
		}
	}
	return edm
}

// keptString reports whether a string value with the annotation edm is
// stored as the string it is, rather than parsed into another type.
func keptString(edm string) bool { return edm == "" || edm == "Edm.String" }

// field is one member of an entity's JSON object. A string value is held
// as a string, boxed only when it becomes a property: keys and type
// annotations, most of an entity's strings, never are. Any other value is
// as encoding/json with UseNumber gives it: json.Number, bool or nil (or a
// map or slice, which no property may hold).
type field struct {
	name string
	s    string // the value, when str
	str  bool
	v    any // the value, unless str; for a kept string, its shared box if it has one (see repeated)
	// What DecodeEntity learns of the member, once: whether it is a
	// property, and its @odata.type annotation.
	prop bool
	edm  string
}

// stringField returns the member name with the string value s.
func stringField(name, s string) field { return field{name: name, s: s, str: true} }

// value returns the member's value as encoding/json gives it.
func (f field) value() any {
	if f.str {
		return f.s
	}
	return f.v
}

// property reports whether the member is stored as a property: not a key,
// the Timestamp, an annotation or null.
func (f field) property() bool {
	k := f.name
	return !(k == "PartitionKey" || k == "RowKey" || k == "Timestamp" || strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") || !f.str && f.v == nil)
}

// decodeGeneral decodes any JSON body through encoding/json, for what
// scanFlat leaves to it; a repeated name keeps its last value.
func decodeGeneral(body []byte) ([]field, *tables.Error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, tables.BadRequest(tables.CodeInvalidInput, "The request body is not a valid JSON object: "+err.Error())
	}
	if dec.More() {
		return nil, tables.BadRequest(tables.CodeInvalidInput, "The request body holds more than one JSON value.")
	}
	fields := make([]field, 0, len(raw))
	for k, v := range raw {
		name := unique.Make(k).Value() // one copy of each name for every entity stored
		if s, ok := v.(string); ok {
			fields = append(fields, stringField(name, s))
		} else {
			fields = append(fields, field{name: name, v: v})
		}
	}
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) }) // a stable order for a map's
	return fields, nil
}

// scanFlat reads the members of a flat JSON object in one pass: what every
// SDK sends for an entity. It reports false for anything else (a nested
// value, a raw control character, an escape of a lone surrogate, a repeated
// name, a syntax error, trailing data, bytes that are not UTF-8), which
// decodeGeneral then reads or refuses with encoding/json's own message.
// Outside its strings it reads only ASCII and its strings are checked, so
// a body it reads is UTF-8.
//
// The members are appended to fields, which may have room for them. Their
// string and number values are views of b, names excepted.
func scanFlat(b []byte, fields []field) ([]field, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return fields, skipSpace(b, i+1) == len(b)
	}
	for {
		name, j, ok := scanName(b, i, len(fields))
		if !ok {
			return nil, false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return nil, false
		}
		var f field
		switch c := b[i]; {
		case c == '"':
			s, j, ok := scanString(b, i)
			if !ok {
				return nil, false
			}
			f, i = stringField(name, s), j
		case c == '-' || c >= '0' && c <= '9':
			j := scanNumber(b, i)
			if j < 0 {
				return nil, false
			}
			f, i = field{name: name, v: json.Number(view(b[i:j]))}, j
		case bytes.HasPrefix(b[i:], []byte("true")):
			f, i = field{name: name, v: true}, i+4
		case bytes.HasPrefix(b[i:], []byte("false")):
			f, i = field{name: name, v: false}, i+5
		case bytes.HasPrefix(b[i:], []byte("null")):
			f, i = field{name: name}, i+4
		default: // an object, an array or not JSON
			return nil, false
		}
		for _, g := range fields {
			if g.name == name {
				return nil, false
			}
		}
		fields = append(fields, f)
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			return fields, skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
}

// names remembers, per position in an entity's object, the last member
// name read there, interned: entities of one workload share their schema,
// so a name is most often the one read at its place before. Only names a
// JSON string holds as they are (plainJSON) are kept, so that matching the
// name's bytes between quotes is reading it.
var names [16]atomic.Pointer[string]

// scanName reads the name of the member at position pos as scanString
// does, and returns it interned: without a copy for the keys' names and
// for a name read at its place before.
func scanName(b []byte, i, pos int) (string, int, bool) {
	quoted := func(k string) (int, bool) {
		end := i + len(k) + 2
		return end, end <= len(b) && b[i] == '"' && b[end-1] == '"' && string(b[i+1:end-1]) == k
	}
	for _, k := range [...]string{"PartitionKey", "RowKey"} {
		if end, ok := quoted(k); ok {
			return k, end, true
		}
	}
	if pos < len(names) {
		if p := names[pos].Load(); p != nil {
			if end, ok := quoted(*p); ok {
				return *p, end, true
			}
		}
	}
	name, j, ok := scanString(b, i)
	if !ok {
		return "", 0, false
	}
	name = unique.Make(name).Value() // one copy of each name for every entity stored
	if pos < len(names) && plainJSON(name) == len(name) {
		names[pos].Store(&name)
	}
	return name, j, true
}

// Long string values repeat across the entities of a load: tablebench's
// own threads write a few payloads each, over and over. Entities that
// repeat one share a copy of it, boxed once, so that a served engine
// holding millions of them keeps one payload and not millions: the
// difference between a long run fitting in memory and not, and, since
// fresh pages are most of what storing costs, much of a batch's time.
//
// sharedValues is a fixed table of such values, indexed by their hash. A
// value enters it on the second sighting of its hash at its slot, so that
// a load of values that never repeat pays a hash and a comparison per
// value and no copy. Its size bounds what it keeps alive once the entities
// are gone: at most len(sharedValues) values of at most maxShared bytes.
var sharedValues [4096]struct {
	seen atomic.Uint64       // the hash last seen at the slot
	v    atomic.Pointer[any] // the value, a string boxed once for every property that holds it
}

const minShared, maxShared = 64, 4096

var sharedSeed = maphash.MakeSeed()

// repeated returns the shared, boxed copy of the string value s, a view of
// a request's body, or nil if s is not one to share (yet).
func repeated(s string) any {
	if len(s) < minShared || len(s) > maxShared {
		return nil
	}
	h := maphash.String(sharedSeed, s)
	slot := &sharedValues[h%uint64(len(sharedValues))]
	if p := slot.v.Load(); p != nil && (*p).(string) == s {
		return *p
	}
	if slot.seen.Swap(h) != h {
		return nil
	}
	var v any = strings.Clone(s)
	slot.v.Store(&v)
	return v
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the JSON string starting at b[i], a quote, and returns
// it and the index after it. Without escapes it is a view of b, which the
// caller copies if it keeps it; an escape of a lone surrogate reports
// false, as does a raw control character.
func scanString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	i++
	start := i
	// Most strings, a payload above all, run to their quote without an
	// escape: one vector search finds the quote, and a word-wise pass
	// checks what lies before it.
	if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
		if plain, ascii := unescaped(b[i : i+q]); plain {
			if !ascii && !utf8.Valid(b[i:i+q]) {
				return "", 0, false
			}
			return view(b[i : i+q]), i + q + 1, true
		}
	}
	for i < len(b) { // to the first quote, backslash or control character
		i += plainJSON(unsafe.String(&b[i], len(b)-i)) // eight bytes at a time while ASCII
		if i == len(b) || b[i] < 0x80 {
			break
		}
		i++
	}
	if i < len(b) && b[i] == '"' {
		if !utf8.Valid(b[start:i]) {
			return "", 0, false
		}
		return view(b[start:i]), i + 1, true
	}
	return scanEscaped(b, start, i)
}

// scanEscaped reads the rest of a JSON string that holds an escape, or bad
// bytes, from b[i], its text since b[start] plain, and returns it, a copy,
// and the index after its quote.
func scanEscaped(b []byte, start, i int) (string, int, bool) {
	out := append([]byte(nil), b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !utf8.Valid(b[start:i]) { // escapes are ASCII: the rest must be UTF-8
				return "", 0, false
			}
			return view(out), i + 1, true // out is its own
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return "", 0, false
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out = append(out, b[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return "", 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) { // only as a pair
				if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
					return "", 0, false
				}
				lo, ok := hex4(b, i+2)
				if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
					return "", 0, false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", 0, false
		}
		i += 2
	}
	return "", 0, false
}

// view returns b's bytes as a string without a copy: for bytes nothing
// changes while the string is in use.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// scanNumber returns the index after the JSON number at b[i], or -1 if
// there is none.
func scanNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// loneSurrogate reports whether a JSON text escapes a UTF-16 surrogate that
// has no partner.
func loneSurrogate(body []byte) bool {
	s := string(body)
	for i := 0; i+6 <= len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash
			continue
		}
		r, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
		if err != nil {
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if i+12 > len(s) || s[i+6] != '\\' || s[i+7] != 'u' {
				return true
			}
			lo, err := strconv.ParseUint(s[i+8:i+12], 16, 16)
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// decodeValue is the property name with the JSON value v, read as its
// @odata.type annotation edm says, or as the JSON value's own type when
// there is none.
func decodeValue(name string, v any, edm string) (tables.Property, *tables.Error) {
	switch edm {
	case "":
		return decodeUntyped(name, v)
	case "Edm.String":
		if _, ok := v.(string); ok {
			return tables.Property{Name: name, Type: tables.EdmString, Value: v}, nil
		}
	case "Edm.Int32", "Edm.Int64":
		return decodeInteger(name, v, edm)
	case "Edm.Double":
		return decodeDouble(name, v)
	case "Edm.Boolean":
		switch x := v.(type) {
		case bool:
			return tables.Bool(name, x), nil
		case string: // as Storage Explorer sends it
			switch strings.ToLower(x) {
			case "true":
				return tables.Bool(name, true), nil
			case "false":
				return tables.Bool(name, false), nil
			}
		}
	case "Edm.DateTime":
		if s, ok := v.(string); ok {
			t, ok := tables.ParseDateTime(s)
			if !ok {
				// The service's reader refuses a DateTime it cannot read, an
				// empty one included, as out of range, with its sentence.
				return tables.Property{}, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("An error occurred while processing this request. The value of property %q is not a valid Edm.DateTime.", name))
			}
			return tables.DateTime(name, t), nil
		}
	case "Edm.Guid":
		if s, ok := v.(string); ok {
			g, err := uuid.Parse(s)
			if err != nil {
				return badValue(name, edm)
			}
			return tables.GUID(name, g), nil
		}
	case "Edm.Binary":
		if s, ok := v.(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return badValue(name, edm)
			}
			return tables.Binary(name, b), nil
		}
	default:
		return tables.Property{}, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("The type %q of property %q is not an Edm type the service knows.", edm, name))
	}
	return badValue(name, edm)
}

// decodeUntyped reads a value with no @odata.type by its JSON type: a
// string, a bool, or a number as an Int32, an Int64 or a Double, the first
// that holds it.
func decodeUntyped(name string, v any) (tables.Property, *tables.Error) {
	switch x := v.(type) {
	case string:
		return tables.Property{Name: name, Type: tables.EdmString, Value: v}, nil // the value as boxed already, not boxed again
	case bool:
		return tables.Bool(name, x), nil
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 32); err == nil {
				return tables.Int32(name, int32(n)), nil
			}
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return tables.Int64(name, n), nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return badNumber(name, "", "Edm.Double", err)
		}
		return tables.Double(name, f), nil
	}
	return tables.Property{}, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("Property %q holds a JSON object or array, which a table entity cannot store.", name))
}

// decodeInteger reads an Edm.Int32 or Edm.Int64, from a JSON number or a
// string.
func decodeInteger(name string, v any, edm string) (tables.Property, *tables.Error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		return badValue(name, edm)
	}
	if edm == "Edm.Int32" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return badNumber(name, edm, edm, err)
		}
		return tables.Int32(name, int32(n)), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return badNumber(name, edm, edm, err)
	}
	return tables.Int64(name, n), nil
}

// decodeDouble reads an Edm.Double, from a JSON number or a string, which
// may name a value JSON has no number for.
func decodeDouble(name string, v any) (tables.Property, *tables.Error) {
	const edm = "Edm.Double"
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return badNumber(name, edm, edm, err)
		}
		return tables.Double(name, f), nil
	case string:
		switch x {
		case "NaN":
			return tables.Double(name, math.NaN()), nil
		case "Infinity", "INF":
			return tables.Double(name, math.Inf(1)), nil
		case "-Infinity", "-INF":
			return tables.Double(name, math.Inf(-1)), nil
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return badNumber(name, edm, edm, err)
		}
		return tables.Double(name, f), nil
	}
	return badValue(name, edm)
}

// badValue refuses the value of property name as not valid for its type
// edm ("" for a value without one).
func badValue(name, edm string) (tables.Property, *tables.Error) {
	return tables.Property{}, tables.BadRequest(tables.CodeInvalidValueType, fmt.Sprintf("The value of property %q is not valid for its type %s.", name, orStr(edm, "in JSON")))
}

// badNumber refuses a number that its type edm cannot hold. A number beyond
// the range of the type it was read as, typ (a Double's, an Int64's, an
// Int32's), is refused as the service refuses it, with InvalidInput rather
// than InvalidValueType: its reader fails on converting the number. Its
// message is the service's sentence, which clients match, then the reason.
func badNumber(name, edm, typ string, err error) (tables.Property, *tables.Error) {
	if errors.Is(err, strconv.ErrRange) {
		return tables.Property{}, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("An error occurred while processing this request. The value of property %q is beyond the range of %s.", name, typ))
	}
	return badValue(name, edm)
}

func orStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// WriteEntity writes an entity in the given metadata form. base is the
// service root URL; sel limits the properties when the query had $select.
func WriteEntity(b *bytes.Buffer, e *tables.Entity, meta, base, account, table string, element bool, sel []string) {
	b.Grow(entitySize(e, base))
	b.WriteByte('{')
	w := objectWriter{b: b, first: true}
	if meta != NoMetadata {
		writeMetadata(&w, e, meta, base, account, table, element)
	}
	if selected(sel, "PartitionKey") {
		w.str("PartitionKey", e.PartitionKey)
	}
	if selected(sel, "RowKey") {
		w.str("RowKey", e.RowKey)
	}
	if selected(sel, "Timestamp") {
		if meta == FullMetadata {
			w.str("Timestamp@odata.type", "Edm.DateTime")
		}
		w.name("Timestamp") // a timestamp needs no escapes
		b.WriteByte('"')
		b.Write(tables.AppendTimestamp(b.AvailableBuffer(), e.Timestamp))
		b.WriteByte('"')
	}
	for i := range e.Properties {
		writeProperty(&w, &e.Properties[i], meta)
	}
	b.WriteByte('}')
}

// entitySize is about what WriteEntity writes of e: the metadata and keys,
// then each property's name and value.
func entitySize(e *tables.Entity, base string) int {
	size := 256 + len(base) + len(e.PartitionKey) + len(e.RowKey)
	for _, p := range e.Properties {
		size += 32 + len(p.Name)
		if v, ok := p.Value.(string); ok {
			size += len(v)
		}
	}
	return size
}

// selected reports whether a query's $select, sel, keeps the property
// name; nil keeps every one.
func selected(sel []string, name string) bool {
	if sel == nil {
		return true
	}
	for _, s := range sel {
		if s == name {
			return true
		}
	}
	return false
}

// objectWriter writes the members of a JSON object, with a comma before
// each but the first.
type objectWriter struct {
	b     *bytes.Buffer
	first bool
}

// name writes a member's name and colon: its value is written next.
func (w *objectWriter) name(name string) {
	if !w.first {
		w.b.WriteByte(',')
	}
	w.first = false
	WriteString(w.b, name)
	w.b.WriteByte(':')
}

// str writes a member whose value is the string s.
func (w *objectWriter) str(name, s string) {
	w.name(name)
	WriteString(w.b, s)
}

// writeMetadata writes an entity's odata members for the metadata level
// meta: the metadata URL of a lone entity (element), and the entity's
// ETag, with its type, id and edit link in full metadata.
func writeMetadata(w *objectWriter, e *tables.Entity, meta, base, account, table string, element bool) {
	b := w.b
	if element {
		w.name("odata.metadata")
		b.Write(appendJoined(b.AvailableBuffer(), base, "/$metadata#", table, "/@Element"))
	}
	if meta == FullMetadata {
		id := fmt.Sprintf("%s(PartitionKey='%s',RowKey='%s')", table, QuoteKey(e.PartitionKey), QuoteKey(e.RowKey))
		w.str("odata.type", account+"."+table)
		w.str("odata.id", base+"/"+id)
		w.name("odata.etag")
		writeETag(b, e.Timestamp)
		w.str("odata.editLink", id)
	} else {
		w.name("odata.etag")
		writeETag(b, e.Timestamp)
	}
}

// writeETag writes the ETag of an entity stored at ts as a JSON string, in
// place, as are the metadata URL and the Timestamp: a point request's
// response is most of its allocation.
func writeETag(b *bytes.Buffer, ts time.Time) {
	var tag [64]byte
	b.WriteByte('"')
	for _, c := range tables.AppendETag(tag[:0], ts) {
		if c == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
}

// writeProperty writes a property, after its type annotation where the
// metadata level meta asks for one: always in full metadata, else for the
// types JSON cannot tell apart (an Int64, a whole Double, a DateTime, a
// Guid, a Binary), never without metadata. A value of no Edm type is left
// out.
func writeProperty(w *objectWriter, p *tables.Property, meta string) {
	typ := ""
	switch v := p.Value.(type) {
	case string:
	case int32:
		if meta == FullMetadata {
			typ = "Edm.Int32"
		}
	case int64:
		typ = "Edm.Int64"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) || meta == FullMetadata || v == math.Trunc(v) {
			typ = "Edm.Double"
		}
	case bool:
		if meta == FullMetadata {
			typ = "Edm.Boolean"
		}
	case time.Time:
		typ = "Edm.DateTime"
	case uuid.UUID:
		typ = "Edm.Guid"
	case []byte:
		typ = "Edm.Binary"
	default:
		return
	}
	if typ != "" && meta != NoMetadata {
		w.str(p.Name+"@odata.type", typ)
	}
	w.name(p.Name)
	b := w.b
	switch v := p.Value.(type) {
	case string:
		WriteString(b, v)
	case int32:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case int64:
		WriteString(b, strconv.FormatInt(v, 10))
	case float64:
		switch {
		case math.IsNaN(v):
			WriteString(b, "NaN")
		case math.IsInf(v, 1):
			WriteString(b, "Infinity")
		case math.IsInf(v, -1):
			WriteString(b, "-Infinity")
		default:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case time.Time:
		WriteString(b, tables.FormatTimestamp(v))
	case uuid.UUID:
		WriteString(b, v.String())
	case []byte:
		WriteString(b, base64.StdEncoding.EncodeToString(v))
	}
}

// appendJoined appends the JSON string of the parts joined, as
// AppendString(b, strings.Join(parts, "")) would without making the string.
func appendJoined(b []byte, parts ...string) []byte {
	b = append(b, '"')
	for _, p := range parts {
		if plainJSON(p) == len(p) {
			b = append(b, p...)
			continue
		}
		q := AppendString(nil, p)
		b = append(b, q[1:len(q)-1]...)
	}
	return append(b, '"')
}

// WriteString writes s to b as a JSON string.
func WriteString(b *bytes.Buffer, s string) {
	b.Grow(len(s) + 2) // room to append in place: no second copy
	b.Write(AppendString(b.AvailableBuffer(), s))
}

// QuoteKey doubles single quotes, as keys are written in URLs.
func QuoteKey(k string) string { return strings.ReplaceAll(k, "'", "''") }

// AppendEntity appends the JSON body of an entity as a client sends it:
// no metadata, and the odata.type annotations the service needs for types
// JSON cannot carry.
func AppendEntity(b []byte, e *tables.Entity) []byte {
	b = append(b, `{"PartitionKey":`...)
	b = AppendString(b, e.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = AppendString(b, e.RowKey)
	for _, p := range e.Properties {
		typed := ""
		b = append(b, ',')
		b = AppendString(b, p.Name)
		b = append(b, ':')
		switch v := p.Value.(type) {
		case string:
			b = AppendString(b, v)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = AppendString(b, strconv.FormatInt(v, 10))
			typed = "Edm.Int64"
		case float64:
			switch {
			case math.IsNaN(v):
				b, typed = append(b, `"NaN"`...), "Edm.Double"
			case math.IsInf(v, 1):
				b, typed = append(b, `"Infinity"`...), "Edm.Double"
			case math.IsInf(v, -1):
				b, typed = append(b, `"-Infinity"`...), "Edm.Double"
			default:
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
				if v == math.Trunc(v) && math.Abs(v) < 1e15 {
					typed = "Edm.Double" // 1.0 would otherwise be read as an Int32
				}
			}
		case bool:
			b = strconv.AppendBool(b, v)
		case time.Time:
			b = AppendString(b, tables.FormatTimestamp(v))
			typed = "Edm.DateTime"
		case uuid.UUID:
			b = AppendString(b, v.String())
			typed = "Edm.Guid"
		case []byte:
			b = AppendString(b, base64.StdEncoding.EncodeToString(v))
			typed = "Edm.Binary"
		default:
			b = append(b, "null"...)
		}
		if typed != "" {
			b = append(b, ',')
			b = AppendString(b, p.Name+"@odata.type")
			b = append(b, ':')
			b = AppendString(b, typed)
		}
	}
	return append(b, '}')
}

// AppendString appends s as a JSON string. What is not ASCII it leaves to
// encoding/json; it writes <, > and & as they are, where encoding/json
// escapes them for HTML.
func AppendString(b []byte, s string) []byte {
	n := plainJSON(s)
	if n == len(s) { // the common case: nothing to escape
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	for i := n; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf { // invalid UTF-8, U+2028 and U+2029 are encoding/json's to write
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	// ASCII with quotes (an ETag), backslashes or control characters: the
	// escapes encoding/json writes, without its reflection and its copy.
	const hex = "0123456789abcdef"
	b = append(b, '"')
	b = append(b, s[:n]...)
	for i := n; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// unescaped reports whether b holds no backslash and no control
// character (as a JSON string's contents, b means itself) and whether it
// is ASCII, which spares the caller a pass to check its UTF-8. It reads
// eight bytes at a time.
func unescaped(b []byte) (plain, ascii bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var all uint64 // every word's bits, for their high ones
	// bad marks with a high bit each byte of w below 0x20 or equal to a
	// backslash (zero after the xor); bytes from 0x80 are masked out of the
	// first term.
	bad := func(w uint64) uint64 {
		bs := w ^ (ones * '\\')
		return (w-ones*0x20)&^w | (bs-ones)&^bs
	}
	for len(b) >= 32 { // four words a step: a payload is hundreds of bytes
		w0, w1 := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:16])
		w2, w3 := binary.LittleEndian.Uint64(b[16:24]), binary.LittleEndian.Uint64(b[24:32])
		if (bad(w0)|bad(w1)|bad(w2)|bad(w3))&highs != 0 {
			return false, false
		}
		all |= w0 | w1 | w2 | w3
		b = b[32:]
	}
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b[:8])
		if bad(w)&highs != 0 {
			return false, false
		}
		all |= w
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false, false
		}
		all |= uint64(c)
	}
	return true, all&highs == 0
}

// plainJSON returns the length of the longest prefix of s that a JSON
// string holds as it is (ASCII, no control characters, quotes or
// backslashes), reading eight bytes at a time: an entity's payload is
// most of what a response writes.
func plainJSON(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only: word loads without a copy
	i := 0
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b[:8])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A high bit marks a byte of w below 0x20, equal to a quote or a
		// backslash (zero after the xor), or not ASCII.
		if ((w-ones*0x20)&^w|(q-ones)&^q|(bs-ones)&^bs|w)&highs != 0 {
			break
		}
		b, i = b[8:], i+8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
	}
	return i
}
