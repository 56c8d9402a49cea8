package gctune

import "testing"

func TestBracketedReadsTheModeInForce(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never\n": "always",
		"always madvise [never]":   "never",
		"":                         "",
		"always madvise never":     "",
		"] [":                      "",
	} {
		if got := bracketed(in); got != want {
			t.Errorf("bracketed(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDisableTHPTurnsHugePagesOff(t *testing.T) {
	for in, want := range map[string]bool{
		"":                            false,
		"disablethp=1":                true,
		"madvdontneed=1,disablethp=1": true,
		"disablethp=0":                false,
		"xdisablethp=1":               false,
	} {
		if got := hugePagesOff(in); got != want {
			t.Errorf("hugePagesOff(%q) = %v, want %v", in, got, want)
		}
	}
}
