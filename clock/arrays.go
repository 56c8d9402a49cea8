package clock

// Arrays hands out new values of T from arrays of n, made as they are
// needed, for a simulator's per-thread state: an array of 32 KB or more
// begins on a cache line, and so does each of its values when T is whole
// lines, where the allocator places a small object of its own 8 bytes or
// more into one. A value lives as long as any of its array does; the zero
// Arrays is empty.
type Arrays[T any] struct {
	rest []T
}

// Next returns a new zero value, from the array being handed out or, when
// that is used up, from a new array of n.
func (a *Arrays[T]) Next(n int) *T {
	if len(a.rest) == 0 {
		a.rest = make([]T, max(n, 1))
	}
	v := &a.rest[0]
	a.rest = a.rest[1:]
	return v
}

// Drop forgets the array being handed out, so that it lives only as long
// as the values handed out from it.
func (a *Arrays[T]) Drop() { a.rest = nil }

// Held reports whether an array is being handed out: Next was called
// since the last Drop.
func (a *Arrays[T]) Held() bool { return a.rest != nil }
