package engine

import (
	"hash/fnv"
	"strings"
	"testing"
)

// TestPKHashIsFNV1a: the hash written out is hash/fnv's FNV-1a, so keys
// land where they always have.
func TestPKHashIsFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "p", "4b93d88c-c253-4d10-8c26-b25fc0ae045e", "ünïcode\x00key", strings.Repeat("xyz", 400)} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := pkHash(s), h.Sum64(); got != want {
			t.Errorf("pkHash(%q) = %x, want %x", s, got, want)
		}
		h.Write([]byte("\x00rk"))
		if got, want := fnvAdd(fnvAdd(pkHash(s), "\x00"), "rk"), h.Sum64(); got != want {
			t.Errorf("hash of %q, NUL, rk = %x, want %x", s, got, want)
		}
	}
}
