package engine

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unique"

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
func (e *Entity) Size() int { return entitySize(e.PartitionKey, e.RowKey, e.Properties) }

func entitySize(pk, rk string, props []Property) int {
	n := 4 + 2*(utf16Len(pk)+utf16Len(rk))
	for _, p := range props {
		n += 8 + 2*utf16Len(p.Name) + valueSize(p)
	}
	return n
}

func valueSize(p Property) int {
	switch v := p.Value.(type) {
	case string:
		return 2*utf16Len(v) + 4
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

// FormatTimestamp formats t as the service does: UTC with 7 fractional digits.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// FormatETag returns the ETag of an entity last written at t.
func FormatETag(t time.Time) string {
	return `W/"datetime'` + strings.ReplaceAll(FormatTimestamp(t), ":", "%3A") + `'"`
}

// utf16Len returns the length of s in UTF-16 code units, which is how the
// service measures keys, names and strings.
func utf16Len(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 { // ASCII eight bytes at a time
		_ = s[i+7]
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
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

// compareKeys orders strings by UTF-16 code units, as the service does, so
// that ordering matches it even for characters outside the BMP.
func compareKeys(a, b string) int {
	i := 0
	n := min(len(a), len(b))
	for i+8 <= n && a[i:i+8] == b[i:i+8] { // keys in a partition share long prefixes
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b) // one is a prefix of the other
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) { // back to the start of the differing rune
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	return int(firstUnit(ra)) - int(firstUnit(rb))
}

func firstUnit(r rune) uint16 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
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

var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// validateKey checks a PartitionKey or RowKey value.
func validateKey(name, v string, maxLen int) *Error {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '/' || c == '\\' || c == '#' || c == '?' || c < 0x20 || c == 0x7f {
			return badRequest(CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter of value '%s' is out of range: it contains the forbidden character %q.", name, v, c))
		}
		if c == 0xc2 && i+1 < len(v) && v[i+1] >= 0x80 && v[i+1] <= 0x9f { // U+0080..U+009F
			return badRequest(CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter of value '%s' is out of range: it contains a control character.", name, v))
		}
	}
	if !utf8.ValidString(v) {
		return badRequest(CodeInvalidInput, fmt.Sprintf("The '%s' value is not valid UTF-8.", name))
	}
	if l := utf16Len(v); l > maxLen {
		return badRequest(CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter is out of range: %d UTF-16 characters, at most %d are allowed.", name, l, maxLen))
	}
	return nil
}

func validPropertyName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (r >= 0x80 && unicode.IsLetter(r))
		if i == 0 && !letter {
			return false
		}
		if !letter && !('0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// prepare validates e for a write and returns the record to store and its
// size. Timestamp properties are dropped because the service manages them;
// property names are interned so that a million entities with the same
// schema share one copy.
func prepare(e *Entity, maxKeyLen int) (*record, int, *Error) {
	if err := validateKey("PartitionKey", e.PartitionKey, maxKeyLen); err != nil {
		return nil, 0, err
	}
	if err := validateKey("RowKey", e.RowKey, maxKeyLen); err != nil {
		return nil, 0, err
	}
	size := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	props := make([]Property, 0, len(e.Properties))
	for _, p := range e.Properties {
		switch p.Name {
		case "Timestamp":
			continue
		case "PartitionKey", "RowKey":
			return nil, 0, badRequest(CodeDuplicatePropertiesSpecified, "A property is specified more than one time: "+p.Name+" is a key and cannot also be a property.")
		}
		nameLen := utf16Len(p.Name)
		if nameLen > MaxPropertyName {
			return nil, 0, badRequest(CodePropertyNameTooLong, "The property name exceeds the maximum allowed length (255).")
		}
		if !validPropertyName(p.Name) {
			return nil, 0, badRequest(CodePropertyNameInvalid, fmt.Sprintf("The property name %q is invalid: it must be a C# identifier.", p.Name))
		}
		vsize, err := validateValue(p)
		if err != nil {
			return nil, 0, err
		}
		size += 8 + 2*nameLen + vsize
		p.Name = unique.Make(p.Name).Value()
		props = append(props, p)
	}
	if len(props) > MaxProperties {
		return nil, 0, badRequest(CodeTooManyProperties, "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties.")
	}
	for i := 1; i < len(props); i++ {
		for j := 0; j < i; j++ {
			if props[i].Name == props[j].Name {
				return nil, 0, badRequest(CodeDuplicatePropertiesSpecified, "A property is specified more than one time: "+props[i].Name+".")
			}
		}
	}
	r := &record{pk: e.PartitionKey, rk: e.RowKey, props: props}
	if len(props) == 0 {
		r.props = nil
	}
	if size > MaxEntitySize {
		return nil, 0, badRequest(CodeEntityTooLarge, fmt.Sprintf("The entity is larger than the maximum allowed size (1MB): %d bytes.", size))
	}
	return r, size, nil
}

// validateValue checks a property's value and returns its size by the
// service's formula.
func validateValue(p Property) (int, *Error) {
	invalid := func() (int, *Error) {
		return 0, badRequest(CodeInvalidValueType, fmt.Sprintf("The value of property %q is not a valid %s.", p.Name, p.Type))
	}
	switch p.Type {
	case EdmString:
		s, ok := p.Value.(string)
		if !ok || !utf8.ValidString(s) {
			return invalid()
		}
		n := utf16Len(s)
		if n > MaxStringUnits {
			return 0, badRequest(CodePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less.")
		}
		return 2*n + 4, nil
	case EdmBinary:
		b, ok := p.Value.([]byte)
		if !ok {
			return invalid()
		}
		if len(b) > MaxBinaryBytes {
			return 0, badRequest(CodePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB).")
		}
		return len(b) + 4, nil
	case EdmInt32:
		if _, ok := p.Value.(int32); !ok {
			return invalid()
		}
	case EdmInt64:
		if _, ok := p.Value.(int64); !ok {
			return invalid()
		}
	case EdmDouble:
		if _, ok := p.Value.(float64); !ok {
			return invalid()
		}
	case EdmBoolean:
		if _, ok := p.Value.(bool); !ok {
			return invalid()
		}
	case EdmGuid:
		if _, ok := p.Value.(uuid.UUID); !ok {
			return invalid()
		}
	case EdmDateTime:
		t, ok := p.Value.(time.Time)
		if !ok {
			return invalid()
		}
		if t.Before(minDateTime) || t.After(maxDateTime) {
			return 0, badRequest(CodeOutOfRangeInput, fmt.Sprintf("The DateTime value of property %q is out of range: it must lie between 1601-01-01 and 9999-12-31 UTC.", p.Name))
		}
	default:
		return invalid()
	}
	return valueSize(p), nil
}

// record is the stored form of an entity. Records are immutable once stored:
// a write replaces the record, so readers can hand out their properties
// without copying them under the lock.
type record struct {
	pk, rk string
	ts     int64 // Unix nanoseconds, a multiple of 100
	props  []Property
}

// view returns the entity as returned to callers, limited to the selected
// properties when sel is not nil.
func (r *record) view(sel []string) Entity {
	e := Entity{PartitionKey: r.pk, RowKey: r.rk, Timestamp: time.Unix(0, r.ts).UTC()}
	if sel == nil {
		e.Properties = r.props[:len(r.props):len(r.props)]
		return e
	}
	for _, p := range r.props {
		for _, s := range sel {
			if s == p.Name {
				e.Properties = append(e.Properties, p)
				break
			}
		}
	}
	return e
}

func lessRecord(a, b *record) bool {
	if a.pk != b.pk { // usually equal within a partition, and == is vectorized
		return compareKeys(a.pk, b.pk) < 0
	}
	return compareKeys(a.rk, b.rk) < 0
}

// merge returns the properties of old updated by those of upd, as a Merge
// operation does.
func merge(old, upd []Property) []Property {
	out := make([]Property, 0, len(old)+len(upd))
	out = append(out, old...)
	for _, p := range upd {
		replaced := false
		for i := range out {
			if out[i].Name == p.Name {
				out[i] = p
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, p)
		}
	}
	return out
}
