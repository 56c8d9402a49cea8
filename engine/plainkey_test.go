package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/tablebench/tablebench/tables"
)

// TestPlainKeyAgreesWithTheByteLoop checks the word-at-a-time test against
// the byte loop on every byte value at every position of a word and its
// tail.
func TestPlainKeyAgreesWithTheByteLoop(t *testing.T) {
	slow := func(v string) bool {
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c >= utf8.RuneSelf || c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?' {
				return false
			}
		}
		return true
	}
	base := []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO") // five words and a tail
	for pos := range base {
		for c := range 256 {
			k := append([]byte(nil), base...)
			k[pos] = byte(c)
			for n := pos + 1; n <= len(k); n++ { // every length: short keys, whole words, words and a tail
				if got, want := plainKey(string(k[:n])), slow(string(k[:n])); got != want {
					t.Fatalf("plainKey(%q) = %v, want %v", k[:n], got, want)
				}
			}
		}
	}
}

// TestPlainKeyAgreesOnPairs checks the word-at-a-time test against the
// byte loop on keys with two bytes set, each to a value at or near an edge
// of a test, at every pair of positions: a byte's borrow or carry must not
// hide another.
func TestPlainKeyAgreesOnPairs(t *testing.T) {
	edges := []byte{0, 0x01, 0x1f, 0x20, 0x21, 0x22, '#', 0x24, 0x2e, '/', 0x30, 0x3e, '?', 0x40, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0x9f, 0xa0, 0xdf, 0xe0, 0xfe, 0xff, 0x0c, 0x1c, 0x33}
	for _, n := range []int{8, 9, 16, 17, 24, 25, 33} {
		for i := range n {
			for j := i + 1; j < n; j++ {
				for _, a := range edges {
					for _, b := range edges {
						k := []byte(strings.Repeat("a", n))
						k[i], k[j] = a, b
						if got, want := plainKey(string(k)), slowPlain(string(k)); got != want {
							t.Fatalf("plainKey(%q) = %v, want %v", k, got, want)
						}
					}
				}
			}
		}
	}
}

func slowPlain(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x7f || c < 0x20 || c == '/' || c == '\\' || c == '#' || c == '?' {
			return false
		}
	}
	return true
}

// TestFingerprintAgreesWithTheByteLoop checks the one-load fingerprint
// against the byte loop on every byte value at every position of the eight
// bytes it reads, from every offset, with and without a tail.
func TestFingerprintAgreesWithTheByteLoop(t *testing.T) {
	slow := func(k string, at int) uint64 {
		var f uint64
		for i := range 8 {
			f <<= 8
			if at+i < len(k) {
				if k[at+i] >= utf8.RuneSelf {
					return noPrint
				}
				f |= uint64(k[at+i])
			}
		}
		return f
	}
	base := []byte("abcdefghijklmnopqrs")
	for at := 0; at <= 10; at++ {
		for pos := at; pos < at+8; pos++ {
			for c := range 256 {
				k := append([]byte(nil), base...)
				k[pos] = byte(c)
				for _, key := range []string{string(k), string(k[:at+8]), string(k[:pos+1])} {
					if got, want := fingerprintAt(key, at), slow(key, at); got != want {
						t.Fatalf("fingerprintAt(%q, %d) = %#x, want %#x", key, at, got, want)
					}
				}
			}
		}
	}
}

// TestStringUnitsKeepsNoWrongAnswer checks the kept lengths of long values
// against tables.ValidUTF16Len: values written again and again, values
// that share their first bytes' address (a prefix of another), values not
// ASCII and values not valid UTF-8.
func TestStringUnitsKeepsNoWrongAnswer(t *testing.T) {
	base := strings.Repeat("abcdefgh", 100) + strings.Repeat("é\U0001F600", 50)
	var values []string
	for _, n := range []int{10, 63, 64, 100, 800, 801, 900, len(base)} {
		values = append(values, base[:n], strings.Clone(base[:n]))
	}
	values = append(values, "\xff"+base[:100], strings.Repeat("x", 5000))
	for round := range 5 {
		for _, v := range values {
			gotN, gotOK := stringUnits(v)
			wantN, wantOK := tables.ValidUTF16Len(v)
			if gotN != wantN || gotOK != wantOK {
				t.Fatalf("round %d, a value of %d bytes: %d %v, want %d %v", round, len(v), gotN, gotOK, wantN, wantOK)
			}
		}
	}
}

// TestPlainKeyAgreesOnRandomKeys checks the word-at-a-time test against the
// byte loop on keys of bytes near its edges, several odd bytes to a key,
// where one byte's borrow or carry could hide another's.
func TestPlainKeyAgreesOnRandomKeys(t *testing.T) {
	edges := []byte{0, 0x1f, 0x20, 0x21, 0x22, '#', 0x24, 0x2e, '/', 0x30, 0x3e, '?', 0x40, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xdf, 0xe0, 0xff, 'a', 'A', '0', '_', '-'}
	slow := func(v string) bool {
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c >= 0x7f || c < 0x20 || c == '/' || c == '\\' || c == '#' || c == '?' {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		k := make([]byte, 1+r.IntN(40))
		for i := range k {
			k[i] = 'a'
			if r.IntN(4) == 0 {
				k[i] = edges[r.IntN(len(edges))]
			}
		}
		if got, want := plainKey(string(k)), slow(string(k)); got != want {
			t.Fatalf("plainKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestKnownPropsAgree checks that a Properties slice written again, once
// kept, gives the size a fresh copy gives, and that a slice found bad is
// never kept.
func TestKnownPropsAgree(t *testing.T) {
	good := []tables.Property{tables.String("Payload", strings.Repeat("x", 100)), tables.Int64("N", 7)}
	bad := []tables.Property{tables.String("Payload", "x"), tables.String("Payload", "y")}
	fresh := func(p []tables.Property) []tables.Property { return append([]tables.Property(nil), p...) }
	_, want, err := prepare(&tables.Entity{PartitionKey: "pk", RowKey: "rk", Properties: fresh(good)}, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 4 {
		_, got, err := prepare(&tables.Entity{PartitionKey: "pk", RowKey: "rk" + strings.Repeat("r", round), Properties: good}, 1024)
		if err != nil || got != want+2*round {
			t.Fatalf("round %d: size %d, %v; want %d", round, got, err, want+2*round)
		}
		if _, _, err := prepare(&tables.Entity{PartitionKey: "pk", RowKey: "rk", Properties: bad}, 1024); err == nil {
			t.Fatalf("round %d: a repeated property passed", round)
		}
	}
	if _, ok := knownPropsOf.size(good); !ok {
		t.Error("a slice written four times is not kept")
	}
}

// TestCallerKeyMemo: a caller's write whose PartitionKey repeats its last
// plain one skips the check, and measures as the check would; any other
// key, a forbidden one, one with characters beyond ASCII or one too long,
// is checked as a caller without the memo checks it.
func TestCallerKeyMemo(t *testing.T) {
	guid := "0f8fad5b-d9cb-469f-a165-70867728950e"
	var c Call
	for _, pk := range []string{guid, strings.Clone(guid), guid + "/", guid, guid + "é", guid + "é", strings.Repeat("k", 1025), guid} {
		e := tables.Entity{PartitionKey: pk, RowKey: "r"}
		var rec record
		size, err := prepareFor(&c, &e, 1024, &rec)
		wantRec, wantSize, wantErr := prepare(&e, 1024)
		if size != wantSize || (err == nil) != (wantErr == nil) || rec.rk != wantRec.rk {
			t.Fatalf("%.40q: size %d, err %v; without the memo %d, %v", pk, size, err, wantSize, wantErr)
		}
	}
}

// TestPrepareForAgrees: a caller's write, prepared with its memo and the
// fast way for a plain RowKey and known properties, gives the record, the
// size and the error prepare gives, for keys plain, forbidden, beyond
// ASCII, empty and too long, and properties known, new, bad and too large.
func TestPrepareForAgrees(t *testing.T) {
	const maxKey = 64
	guid := "0f8fad5b-d9cb-469f-a165-70867728950e"
	pks := []string{guid, strings.Clone(guid), guid + "/", "é" + guid, "", strings.Repeat("k", maxKey), strings.Repeat("k", maxKey+1)}
	rks := []string{"tb_1_2_0000000001", "r", "", "a#b", "tb_é", "\x00", strings.Repeat("r", maxKey), strings.Repeat("r", maxKey+1),
		"tb_1_2_000000000#", "tb/1_2_0000000001", "tb_1_2_00000\x7f00001", "abcdefgh", "abcdefg?", "abcdefghijklmnopqrstuvw\\", "tb_é_2_0000000001"}
	known := []tables.Property{tables.String("Payload", strings.Repeat("x", 100))}
	var big, near []tables.Property // larger than an entity may be; as large, with guid and the first RowKey
	for i := range 17 {
		big = append(big, tables.String(fmt.Sprintf("P%02d", i), strings.Repeat("x", tables.MaxStringUnits)))
	}
	room := tables.MaxEntitySize - 4 - 2*(len(guid)+len(rks[0]))
	for i := range 16 {
		n := min(tables.MaxBinaryBytes, room-(8+2*3+4)*(16-i)-tables.MaxBinaryBytes*(15-i))
		near = append(near, tables.Binary(fmt.Sprintf("B%02d", i), make([]byte, n)))
		room -= 8 + 2*3 + 4 + n
	}
	if room != 0 {
		t.Fatalf("near: %d bytes of room left", room)
	}
	for range 2 { // kept the second time
		for _, p := range [][]tables.Property{known, big, near} {
			prepare(&tables.Entity{PartitionKey: "pk", RowKey: "rk", Properties: p}, maxKey)
		}
	}
	propSets := [][]tables.Property{known, nil, {tables.String("A", "x"), tables.String("A", "y")}, big, near,
		{tables.String("Timestamp", "x"), tables.Int64("N", 1)}, slices.Clone(known)}
	var c Call
	for _, n := range []int{8, 9, 16, 17, 24, 25} { // every byte at every place of a key the inlined test takes, and the lengths beyond it
		for at := range n {
			for b := range 256 {
				k := []byte(strings.Repeat("k", n))
				k[at] = byte(b)
				e := tables.Entity{PartitionKey: guid, RowKey: string(k), Properties: known}
				var rec record
				size, err := prepareFor(&c, &e, maxKey, &rec)
				wantRec, wantSize, wantErr := prepare(&e, maxKey)
				if size != wantSize || fmt.Sprint(err) != fmt.Sprint(wantErr) || rec.rk != wantRec.rk {
					t.Fatalf("RowKey %q: %d, %v; prepare gives %d, %v", k, size, err, wantSize, wantErr)
				}
			}
		}
	}
	for round := range 2 {
		for _, pk := range pks {
			for _, rk := range rks {
				for i, props := range propSets {
					e := tables.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
					var rec record
					size, err := prepareFor(&c, &e, maxKey, &rec)
					wantRec, wantSize, wantErr := prepare(&e, maxKey)
					kept := func(r record) bool {
						return unsafe.SliceData(r.props) == unsafe.SliceData(props) && cap(r.props) == len(props)
					}
					if size != wantSize || fmt.Sprint(err) != fmt.Sprint(wantErr) || rec.rk != wantRec.rk || rec.ts != wantRec.ts ||
						!reflect.DeepEqual(rec.props, wantRec.props) || kept(rec) != kept(wantRec) {
						t.Fatalf("round %d, %.20q, %.20q, properties %d: %+v, %d, %v; prepare gives %+v, %d, %v", round, pk, rk, i, rec, size, err, wantRec, wantSize, wantErr)
					}
				}
			}
		}
	}
}
