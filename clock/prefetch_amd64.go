package clock

import "unsafe"

// Prefetch starts bringing the n bytes at p (at most 4 KB of them: a step
// reads a few hundred bytes of a structure, and more would only push out
// what the step before still reads) into the processor's cache, and
// returns without waiting for them: for a Warmer. It reads nothing and
// cannot fault, whatever p is.
//
//go:noescape
func Prefetch(p unsafe.Pointer, n uintptr)

// prefetchAt is Prefetch of an address kept as a number: one that a Hint
// holds, which may no longer be in use, as prefetching it is harmless.
//
//go:noescape
func prefetchAt(p, n uintptr)
