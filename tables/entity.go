// Package tables is the Table service's data model: entities and their
// typed properties, the service's limits, entity group transaction
// operations, queries and their continuation, and the service's error
// codes. It sits beneath the data flow rather than in one stage of it: the
// coordinator builds its entities and batches, every target speaks it (the
// in-tree engine, its REST front end in engine/rest, the SDK target in
// workloads/aztarget), and the recorder classifies outcomes by its codes.
package tables

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"
)

// EdmType is the declared type of a property value.
type EdmType uint8

// The Edm types a property can hold.
const (
	EdmString EdmType = iota
	EdmInt32
	EdmInt64
	EdmDouble
	EdmBoolean
	EdmDateTime
	EdmGuid
	EdmBinary
)

var edmNames = [...]string{"Edm.String", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.Boolean", "Edm.DateTime", "Edm.Guid", "Edm.Binary"}

// String returns the type's name on the wire, such as "Edm.Int64".
func (t EdmType) String() string {
	if int(t) < len(edmNames) {
		return edmNames[t]
	}
	return fmt.Sprintf("EdmType(%d)", t)
}

// ParseEdmType returns the type named on the wire (for example "Edm.Int64").
func ParseEdmType(name string) (EdmType, bool) {
	for i, n := range edmNames {
		if n == name {
			return EdmType(i), true
		}
	}
	return 0, false
}

// Property is one typed, named value of an entity. Value holds a string for
// EdmString, int32, int64, float64, bool, time.Time, uuid.UUID and []byte for
// the other types in order.
type Property struct {
	Name  string
	Type  EdmType
	Value any
}

// String returns a String property.
func String(name, v string) Property { return Property{name, EdmString, v} }

// Int32 returns an Int32 property.
func Int32(name string, v int32) Property { return Property{name, EdmInt32, v} }

// Int64 returns an Int64 property.
func Int64(name string, v int64) Property { return Property{name, EdmInt64, v} }

// Double returns a Double property.
func Double(name string, v float64) Property { return Property{name, EdmDouble, v} }

// Bool returns a Boolean property.
func Bool(name string, v bool) Property { return Property{name, EdmBoolean, v} }

// DateTime returns a DateTime property; v is kept in UTC at 100 ns precision.
func DateTime(name string, v time.Time) Property {
	return Property{name, EdmDateTime, v.UTC().Truncate(100 * time.Nanosecond)}
}

// GUID returns a Guid property.
func GUID(name string, v uuid.UUID) Property { return Property{name, EdmGuid, v} }

// Binary returns a Binary property.
func Binary(name string, v []byte) Property { return Property{name, EdmBinary, v} }

// Entity is one row of a table. Timestamp is managed by the engine: it is
// ignored on writes and set on every entity the engine returns.
type Entity struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	Properties   []Property
}

// Property returns the property with the given name.
func (e *Entity) Property(name string) (Property, bool) {
	for _, p := range e.Properties {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// ETag returns the entity's ETag in the service's form,
// W/"datetime'2021-08-31T15%3A40%3A02.1952595Z'".
func (e *Entity) ETag() string { return FormatETag(e.Timestamp) }

// Size returns the entity's size by the service's formula, which is what the
// 1 MiB limit and the per-entity cost model are measured in:
// 4 + 2·len(PK+RK) + Σ(8 + 2·len(name) + sizeof(value)), lengths in UTF-16
// code units.
func (e *Entity) Size() int { return EntitySize(e.PartitionKey, e.RowKey, e.Properties) }

// EntitySize is the size by the service's formula of an entity with these
// keys and properties.
func EntitySize(pk, rk string, props []Property) int {
	n := 4 + 2*(UTF16Len(pk)+UTF16Len(rk))
	for _, p := range props {
		n += 8 + 2*UTF16Len(p.Name) + ValueSize(p)
	}
	return n
}

// ValueSize is a property value's size by the service's formula.
func ValueSize(p Property) int {
	switch v := p.Value.(type) {
	case string:
		return 2*UTF16Len(v) + 4
	case []byte:
		return len(v) + 4
	case int32, bool:
		if _, ok := v.(bool); ok {
			return 1
		}
		return 4
	case uuid.UUID:
		return 16
	default: // int64, float64, time.Time
		return 8
	}
}

// dateTimeLayouts are the forms of a DateTime the service reads, in entity
// bodies and in $filter literals; one without a zone is UTC.
var dateTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02T15:04"}

// ParseDateTime reads a DateTime as the service does, in UTC.
func ParseDateTime(s string) (time.Time, bool) {
	for _, l := range dateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// FormatTimestamp formats t as the service does: UTC with 7 fractional digits.
func FormatTimestamp(t time.Time) string {
	var b [40]byte
	return string(AppendTimestamp(b[:0], t))
}

// AppendTimestamp appends t as FormatTimestamp formats it.
func AppendTimestamp(b []byte, t time.Time) []byte { return appendTimestamp(b, t, ":") }

// FormatETag returns the ETag of an entity last written at t.
func FormatETag(t time.Time) string {
	var b [64]byte
	return string(AppendETag(b[:0], t))
}

// AppendETag appends the ETag FormatETag returns: every response that
// carries an entity carries its ETag, and writing it in place saves the
// string.
func AppendETag(b []byte, t time.Time) []byte {
	return append(appendTimestamp(append(b, `W/"datetime'`...), t, "%3A"), `'"`...)
}

// appendTimestamp appends t as FormatTimestamp does, with colon between
// hours, minutes and seconds. Every entity a response returns carries two,
// so it writes the digits itself; years outside 0-9999 take time.Format.
func appendTimestamp(b []byte, t time.Time, colon string) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return append(b, strings.ReplaceAll(t.Format("2006-01-02T15:04:05.0000000Z"), ":", colon)...)
	}
	hour, min, sec := t.Clock()
	digits := func(b []byte, v, n int) []byte { // v in n digits, zero-padded
		b = append(b, "0000000"[:n]...)
		for i := len(b) - 1; v > 0; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
		return b
	}
	b = digits(b, year, 4)
	b = append(b, '-')
	b = digits(b, int(month), 2)
	b = append(b, '-')
	b = digits(b, day, 2)
	b = append(b, 'T')
	b = digits(b, hour, 2)
	b = append(b, colon...)
	b = digits(b, min, 2)
	b = append(b, colon...)
	b = digits(b, sec, 2)
	b = append(b, '.')
	b = digits(b, t.Nanosecond()/100, 7)
	return append(b, 'Z')
}

// UTF16Len returns the length of s in UTF-16 code units, which is how the
// service measures keys, names and strings.
func UTF16Len(s string) int {
	i := asciiPrefix(s)
	n := i
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// ValidUTF16Len reports whether s is valid UTF-8 and returns its length in
// UTF-16 code units, in one pass over ASCII text, which is what almost every
// payload is.
func ValidUTF16Len(s string) (int, bool) {
	i := asciiPrefix(s)
	if i == len(s) {
		return i, true
	}
	return i + UTF16Len(s[i:]), utf8.ValidString(s[i:])
}

// asciiPrefix returns the length of the longest prefix of s that is ASCII,
// reading 32 bytes at a time.
func asciiPrefix(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only: word loads without a copy
	i := 0
	for len(b) >= 32 {
		c := b[:32:32] // one bounds check for four loads
		w := binary.LittleEndian.Uint64(c[0:8]) | binary.LittleEndian.Uint64(c[8:16]) |
			binary.LittleEndian.Uint64(c[16:24]) | binary.LittleEndian.Uint64(c[24:32])
		if w&0x8080808080808080 != 0 {
			break
		}
		b, i = b[32:], i+32
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// Limits of the service's data model.
const (
	MaxProperties     = 252       // custom properties per entity
	MaxPropertyName   = 255       // UTF-16 code units
	MaxStringUnits    = 32 * 1024 // UTF-16 code units in a String value
	MaxBinaryBytes    = 64 * 1024
	MaxEntitySize     = 1 << 20
	MaxBatchOps       = 100
	MaxBatchBytes     = 4 << 20
	MaxPageSize       = 1000
	MaxFilterCompares = 15
	MaxFilterNodes    = 128 // comparisons, and, or, not and constants in one $filter
	DefaultMaxKeyLen  = 512 // UTF-16 code units (1 KiB)
)
