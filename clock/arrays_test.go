package clock

import (
	"testing"
	"unsafe"
)

// TestArraysHandOutNewValues: every value Next returns is new and zero,
// an array's values each begin on a cache line when they are whole lines,
// and after Drop no array is held.
func TestArraysHandOutNewValues(t *testing.T) {
	type lines [128]byte
	var a Arrays[lines]
	if a.Held() {
		t.Fatal("an empty Arrays holds an array")
	}
	seen := map[*lines]bool{}
	for i := range 3*256 + 1 {
		v := a.Next(256)
		if seen[v] || *v != (lines{}) {
			t.Fatalf("value %d was handed out before, or is not zero", i)
		}
		seen[v] = true
		if p := uintptr(unsafe.Pointer(v)); p%64 != 0 {
			t.Fatalf("value %d begins %d bytes into a line", i, p%64)
		}
		v[0] = 1
	}
	if !a.Held() {
		t.Error("Arrays holds no array while handing one out")
	}
	a.Drop()
	if a.Held() {
		t.Error("Arrays holds an array after Drop")
	}
	if v := a.Next(0); v == nil {
		t.Error("Next(0) returned nothing")
	}
}
