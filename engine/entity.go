package engine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/tables"
)

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

var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// validateKey checks a PartitionKey or RowKey value.
func validateKey(name, v string, maxLen int) *tables.Error {
	_, err := keyUnits(name, v, maxLen)
	return err
}

// keyUnits checks a PartitionKey or RowKey value and returns its length in
// UTF-16 code units.
func keyUnits(name, v string, maxLen int) (int, *tables.Error) {
	return keyUnitsOf(name, v, maxLen, plainKey(v))
}

// keyUnitsOf is keyUnits, given plainKey(v).
func keyUnitsOf(name, v string, maxLen int, plain bool) (int, *tables.Error) {
	if plain {
		if len(v) > maxLen {
			return 0, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter is out of range: %d UTF-16 characters, at most %d are allowed.", name, len(v), maxLen))
		}
		return len(v), nil
	}
	ascii := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '/' || c == '\\' || c == '#' || c == '?' || c < 0x20 || c == 0x7f {
			return 0, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter of value '%s' is out of range: it contains the forbidden character %q.", name, v, c))
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
		if c == 0xc2 && i+1 < len(v) && v[i+1] >= 0x80 && v[i+1] <= 0x9f { // U+0080..U+009F
			return 0, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter of value '%s' is out of range: it contains a control character.", name, v))
		}
	}
	l := len(v)
	if !ascii {
		if !utf8.ValidString(v) {
			return 0, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("The '%s' value is not valid UTF-8.", name))
		}
		l = tables.UTF16Len(v)
	}
	if l > maxLen {
		return 0, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The '%s' parameter is out of range: %d UTF-16 characters, at most %d are allowed.", name, l, maxLen))
	}
	return l, nil
}

// plainKey reports whether v is printable ASCII without a character keys
// forbid, eight bytes at a time: what almost every key is. Anything else
// takes keyUnits's byte loop, which names the offending character. It runs
// on every write's RowKey, most often new, so a word costs a few
// operations (see plainBits).
func plainKey(v string) bool {
	n := len(v)
	if n < 8 {
		for i := 0; i < n; i++ {
			c := v[i]
			if c >= 0x7f || c < 0x20 || c == '/' || c == '\\' || c == '#' || c == '?' {
				return false
			}
		}
		return true
	}
	if n <= 24 {
		return plainWords(v)
	}
	var bad uint64
	i := 0
	for ; i+8 < n; i += 8 {
		bad |= plainBits(wordAt(v, i))
	}
	bad |= plainBits(wordAt(v, n-8)) // the last eight bytes, which may overlap the last word
	return bad&highBits == 0
}

// plainWords is plainKey for a key of 8 to 24 bytes: the words at its
// start, eight on (its end, where that is less) and its end, which
// overlap. prepareFor has it inlined.
func plainWords(v string) bool {
	n := len(v)
	return (plainBits(wordAt(v, 0))|plainBits(wordAt(v, min(8, n-8)))|plainBits(wordAt(v, n-8)))&highBits == 0
}

// wordAt returns the eight bytes of v from i, which v must hold: no
// bounds are checked. Their order is the machine's; plainBits's tests are
// of each byte alone.
func wordAt(v string, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(v)), i))[:])
}

const highBits = 0x8080808080808080

// plainBits returns, in the high bits of its bytes, the bytes of w a
// plain key may not hold; it may also set the high bit of a byte after
// one that it sets. w less 0x20 sets a byte's high bit (or borrows into
// the next byte from one that does) below 0x20, and w+1 sets it from 0x7f.
// Where neither does, every byte is below 0x80, and so is every byte of
// t, w^'#': a byte of t plus 0x7f, which cannot carry, has its high bit
// clear where t is 0, w '#'; 0xfe less it, which cannot borrow, where t is
// 0x7f, w '\\' ('#'^0x7f); and t|0x10, plus 0x7f after it is xored with
// 0x1c, where w is '?' or '/' ('#'^0x1c and '#'^0x0c). Their product has
// a byte's high bit clear where it is forbidden.
func plainBits(w uint64) uint64 {
	const ones = 0x0101010101010101
	t := w ^ '#'*ones
	return (w - 0x20*ones) | (w + ones) | ^((t + 0x7f*ones) & (0xfe*ones - t) & (((t | 0x10*ones) ^ 0x1c*ones) + 0x7f*ones))
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
// size. Timestamp properties are dropped because the service manages them.
// The record keeps e's Properties slice when nothing in it needs to change,
// so a writer's shared, generated properties are stored once: callers must
// not change a slice they have written (see Client).
func prepare(e *tables.Entity, maxKeyLen int) (record, int, *tables.Error) {
	return prepareAfter(e, maxKeyLen, -1)
}

// prepareFor is prepare for caller c (nil for none), leaving the record
// in rec: a PartitionKey equal to the one c's last write found plain is
// not checked again. A write as almost all are, of a caller's key, a plain
// RowKey and properties checked before, is prepared here, without
// prepareAfter's copies of its results.
func prepareFor(c *Call, e *tables.Entity, maxKeyLen int, rec *record) (int, *tables.Error) {
	pk, rk := e.PartitionKey, e.RowKey
	if c != nil && len(pk) <= maxKeyLen && len(c.plainPK) == len(pk) && (unsafe.StringData(c.plainPK) == unsafe.StringData(pk) || c.plainPK == pk) {
		// A plain key's UTF-16 length is its length.
		var plain bool
		if n := len(rk); n >= 8 && n <= 24 { // plainWords, as most take it, without the call
			plain = (plainBits(wordAt(rk, 0))|plainBits(wordAt(rk, min(8, n-8)))|plainBits(wordAt(rk, n-8)))&highBits == 0
		} else {
			plain = plainKey(rk)
		}
		if plain && len(rk) <= maxKeyLen {
			props := slices.Clip(e.Properties)
			if n, ok := knownPropsOf.size(props); ok {
				if size := 4 + 2*(len(pk)+len(rk)) + n; size <= tables.MaxEntitySize {
					*rec = record{rk: rk, props: props}
					return size, nil
				}
			}
		}
	}
	return prepareKey(c, e, maxKeyLen, rec)
}

// prepareKey is prepareFor, taking and keeping c's PartitionKey anew
// where it differs.
func prepareKey(c *Call, e *tables.Entity, maxKeyLen int, rec *record) (size int, err *tables.Error) {
	pk, pkLen := e.PartitionKey, -1
	switch {
	case c == nil || len(pk) > maxKeyLen:
	case c.plainPK == pk:
		pkLen = len(pk)
	case plainKey(pk):
		c.plainPK, pkLen = pk, len(pk)
	}
	*rec, size, err = prepareAfter(e, maxKeyLen, pkLen)
	return size, err
}

// prepareAfter is prepare, given pkLen, the length in UTF-16 code units of
// e's PartitionKey when it has been checked already (a batch's), or -1.
func prepareAfter(e *tables.Entity, maxKeyLen, pkLen int) (record, int, *tables.Error) {
	// Keys as almost all are, plain and not too long, are measured here:
	// keyUnitsOf takes the others, and says what is wrong with them.
	rkLen := len(e.RowKey)
	if pkLen < 0 {
		pkLen = len(e.PartitionKey)
		if plain := plainKey(e.PartitionKey); !plain || pkLen > maxKeyLen {
			var err *tables.Error
			if pkLen, err = keyUnitsOf("PartitionKey", e.PartitionKey, maxKeyLen, plain); err != nil {
				return record{}, 0, err
			}
		}
	}
	if plain := plainKey(e.RowKey); !plain || rkLen > maxKeyLen {
		var err *tables.Error
		if rkLen, err = keyUnitsOf("RowKey", e.RowKey, maxKeyLen, plain); err != nil {
			return record{}, 0, err
		}
	}
	size := 4 + 2*(pkLen+rkLen)
	props := slices.Clip(e.Properties) // kept as it is, unless a Timestamp must go
	if n, ok := knownPropsOf.size(props); ok && size+n <= tables.MaxEntitySize {
		return record{rk: e.RowKey, props: props}, size + n, nil
	}
	propsStart := size
	isTimestamp := func(p tables.Property) bool { return p.Name == "Timestamp" }
	if slices.ContainsFunc(props, isTimestamp) {
		props = slices.DeleteFunc(slices.Clone(props), isTimestamp)
	}
	for i, p := range props {
		if p.Name == "PartitionKey" || p.Name == "RowKey" {
			return record{}, 0, tables.BadRequest(tables.CodeDuplicatePropertiesSpecified, "A property is specified more than one time: "+p.Name+" is a key and cannot also be a property.")
		}
		nameLen, err := nameUnits(i, p.Name)
		if err != nil {
			return record{}, 0, err
		}
		vsize, err := validateValue(p)
		if err != nil {
			return record{}, 0, err
		}
		size += 8 + 2*nameLen + vsize
	}
	if len(props) > tables.MaxProperties {
		return record{}, 0, tables.BadRequest(tables.CodeTooManyProperties, "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties.")
	}
	for i := 1; i < len(props); i++ {
		for j := 0; j < i; j++ {
			if props[i].Name == props[j].Name {
				return record{}, 0, tables.BadRequest(tables.CodeDuplicatePropertiesSpecified, "A property is specified more than one time: "+props[i].Name+".")
			}
		}
	}
	r := record{rk: e.RowKey, props: props}
	if len(props) == 0 {
		r.props = nil
	}
	if err := checkSize(size); err != nil {
		return record{}, 0, err
	}
	if len(props) > 0 && unsafe.SliceData(props) == unsafe.SliceData(e.Properties) { // not a copy without its Timestamp
		knownPropsOf.keep(props, size-propsStart)
	}
	return r, size, nil
}

// checkSize refuses an entity of size bytes larger than the service takes.
func checkSize(size int) *tables.Error {
	if size > tables.MaxEntitySize {
		return tables.BadRequest(tables.CodeEntityTooLarge, fmt.Sprintf("The entity is larger than the maximum allowed size (1MB): %d bytes.", size))
	}
	return nil
}

// knownProps keeps Properties slices checked before, and found good, with
// the bytes they add to an entity, by the address of their array: the
// writers of a workload share a few generated slices, which a write would
// check property by property again. Callers do not change a slice they
// have written (see Client), so one at the same address and of the same
// length is the same. As in knownStrings, a slice is kept when it comes a
// second time, so that slices of their own, as from the wire, cost no
// allocation, and kept is the slice itself, so that its array cannot be
// another's while it is kept.
type knownProps struct {
	known [256]atomic.Pointer[keptProps]
	seen  [256]atomic.Uintptr
}

type keptProps struct {
	p    []tables.Property
	size int
}

var knownPropsOf knownProps

func propsSlot(p []tables.Property) (uintptr, uint64) {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return a, uint64(a) >> 4 * 0x9e3779b97f4a7c15 >> 56
}

// size returns the bytes p adds to an entity if p is kept, checked good.
func (k *knownProps) size(p []tables.Property) (int, bool) {
	if len(p) == 0 {
		return 0, false
	}
	_, i := propsSlot(p)
	if kept := k.known[i].Load(); kept != nil && unsafe.SliceData(kept.p) == unsafe.SliceData(p) && len(kept.p) == len(p) {
		return kept.size, true
	}
	return 0, false
}

// keep notes p, checked good, adding size bytes to an entity.
func (k *knownProps) keep(p []tables.Property, size int) {
	a, i := propsSlot(p)
	if k.seen[i].Load() == a {
		k.known[i].Store(&keptProps{p: p, size: size})
	} else {
		k.seen[i].Store(a)
	}
}

// knownName is a property name already checked.
type knownName struct {
	name  string
	units int
}

// lastNames remembers the last name checked at each of the first property
// positions: entities of one workload share their schema, so the name at a
// position is most often the one seen there just before.
var lastNames [16]atomic.Pointer[knownName]

// nameUnits checks a property name and returns its length in UTF-16 code
// units. Names are stored as the writer gave them: the decoders intern the
// names they read, so that a million entities with one schema share them.
func nameUnits(pos int, name string) (int, *tables.Error) {
	slot := &lastNames[pos%len(lastNames)]
	if k := slot.Load(); k != nil && k.name == name {
		return k.units, nil
	}
	units := tables.UTF16Len(name)
	if units > tables.MaxPropertyName {
		return 0, tables.BadRequest(tables.CodePropertyNameTooLong, "The property name exceeds the maximum allowed length (255).")
	}
	if !validPropertyName(name) {
		return 0, tables.BadRequest(tables.CodePropertyNameInvalid, fmt.Sprintf("The property name %q is invalid: it must be a C# identifier.", name))
	}
	slot.Store(&knownName{name: name, units: units})
	return units, nil
}

// knownString is a string value already checked, and its length in UTF-16
// code units.
type knownString struct {
	s     string
	units int
}

// knownStrings keeps strings checked before, and found good, by their
// address: the writers of a workload share a few payloads, and each write
// would read them whole again. (A writer's repeated PartitionKey is its
// Call's to know: see prepareFor.) A string is kept when it comes a second time
// (seen holds the address of the first), so that strings of their own,
// each written once, as from the wire, cost no allocation. A kept string
// is the string itself, not its address, so that its memory cannot be
// another string's while it is kept.
type knownStrings struct {
	known [1024]atomic.Pointer[knownString] // enough that the payloads of a few hundred writers seldom meet
	addrs [1024]knownAddrs
}

// knownAddrs is the address of a slot's kept string, so that a miss reads
// no kept string, and of the last string seen there; side by side, a miss
// reads one line of memory.
type knownAddrs struct {
	at, seen atomic.Uintptr
}

// knownValues keeps string values with their UTF-16 lengths.
var knownValues knownStrings

// slot returns where s would be kept in k, and its address.
func (k *knownStrings) slot(s string) (uintptr, uint64) {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p, uint64(p) >> 4 * 0x9e3779b97f4a7c15 >> 54 // strings are 8 or 16 bytes apart at least
}

// kept returns s's units if s is kept in k.
func (k *knownStrings) kept(s string) (int, bool) {
	p, i := k.slot(s)
	if k.addrs[i].at.Load() == p { // known[i] and at change one after the other: the string tells
		if kept := k.known[i].Load(); kept != nil && unsafe.StringData(kept.s) == unsafe.StringData(s) && len(kept.s) == len(s) {
			return kept.units, true
		}
	}
	return 0, false
}

// units returns check(s), from k when s is kept there.
func (k *knownStrings) units(s string, check func(string) (int, bool)) (int, bool) {
	if n, ok := k.kept(s); ok {
		return n, true
	}
	p, i := k.slot(s)
	slot, addrs := &k.known[i], &k.addrs[i]
	n, good := check(s)
	if good {
		if addrs.seen.Load() == p {
			slot.Store(&knownString{s: s, units: n})
			addrs.at.Store(p)
		} else {
			addrs.seen.Store(p)
		}
	}
	return n, good
}

// stringUnits returns ValidUTF16Len(s), for long values from knownValues.
func stringUnits(s string) (int, bool) {
	if len(s) < 64 || len(s) > 4096 { // short ones are read as fast; long ones would be kept long
		return tables.ValidUTF16Len(s)
	}
	return knownValues.units(s, tables.ValidUTF16Len)
}

// validateValue checks a property's value and returns its size by the
// service's formula.
func validateValue(p tables.Property) (int, *tables.Error) {
	invalid := func() (int, *tables.Error) {
		return 0, tables.BadRequest(tables.CodeInvalidValueType, fmt.Sprintf("The value of property %q is not a valid %s.", p.Name, p.Type))
	}
	switch p.Type {
	case tables.EdmString:
		s, ok := p.Value.(string)
		if !ok {
			return invalid()
		}
		n, valid := stringUnits(s)
		if !valid {
			return invalid()
		}
		if n > tables.MaxStringUnits {
			return 0, tables.BadRequest(tables.CodePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less.")
		}
		return 2*n + 4, nil
	case tables.EdmBinary:
		b, ok := p.Value.([]byte)
		if !ok {
			return invalid()
		}
		if len(b) > tables.MaxBinaryBytes {
			return 0, tables.BadRequest(tables.CodePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB).")
		}
		return len(b) + 4, nil
	case tables.EdmInt32:
		if _, ok := p.Value.(int32); !ok {
			return invalid()
		}
	case tables.EdmInt64:
		if _, ok := p.Value.(int64); !ok {
			return invalid()
		}
	case tables.EdmDouble:
		if _, ok := p.Value.(float64); !ok {
			return invalid()
		}
	case tables.EdmBoolean:
		if _, ok := p.Value.(bool); !ok {
			return invalid()
		}
	case tables.EdmGuid:
		if _, ok := p.Value.(uuid.UUID); !ok {
			return invalid()
		}
	case tables.EdmDateTime:
		t, ok := p.Value.(time.Time)
		if !ok {
			return invalid()
		}
		if t.Before(minDateTime) || t.After(maxDateTime) {
			return 0, tables.BadRequest(tables.CodeOutOfRangeInput, fmt.Sprintf("The DateTime value of property %q is out of range: it must lie between 1601-01-01 and 9999-12-31 UTC.", p.Name))
		}
	default:
		return invalid()
	}
	return tables.ValueSize(p), nil
}

// record is an entity as the engine handles it: what a write stores and a
// read gets, which the rows copy in and out of their own compact form
// (see slot). A stored record's Properties slice is never changed: a write
// replaces it, so readers can hand out properties without copying them
// under the lock.
//
// Its PartitionKey is not kept: the rows of one key sit together (pkRows),
// which hold the key once.
type record struct {
	rk    string
	ts    int64 // Unix nanoseconds, a multiple of 100
	props []tables.Property
}

// view returns the entity, whose PartitionKey is pk, as returned to
// callers, limited to the selected properties when sel is not nil.
func (r *record) view(pk string, sel []string) tables.Entity {
	e := tables.Entity{PartitionKey: pk, RowKey: r.rk, Timestamp: time.Unix(0, r.ts).UTC()}
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

// merge returns the properties of old updated by those of upd, as a Merge
// operation does.
func merge(old, upd []tables.Property) []tables.Property {
	out := make([]tables.Property, 0, len(old)+len(upd))
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
