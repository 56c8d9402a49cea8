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
			if got, want := plainKey(string(k)), slow(string(k)); got != want {
				t.Fatalf("plainKey(%q) = %v, want %v", k, got, want)
			}
		}
	}
}
