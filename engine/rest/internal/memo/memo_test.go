package memo

import "testing"

func TestLast(t *testing.T) {
	var l Last[string, int]
	if _, ok := l.Get("a"); ok {
		t.Fatal("an empty memo remembered a value")
	}
	if _, ok := l.Key(); ok {
		t.Fatal("an empty memo has a key")
	}
	l.Put("a", 1)
	if v, ok := l.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v after Put(a, 1)", v, ok)
	}
	l.Put("b", 2)
	if _, ok := l.Get("a"); ok {
		t.Fatal("the memo kept a key it was given before the last")
	}
	if k, ok := l.Key(); !ok || k != "b" {
		t.Fatalf("Key() = %q, %v after Put(b, 2)", k, ok)
	}
}
