package engine

import (
	"testing"
	"unicode/utf8"
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
	base := []byte("abcdefghijklmnopqrs") // two words and a tail
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
