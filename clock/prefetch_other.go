//go:build !amd64

package clock

import "unsafe"

// Prefetch starts bringing the n bytes at p (at most 4 KB of them) into
// the processor's cache,
// and returns without waiting for them: for a Warmer. Here it does
// nothing: only amd64 has the instruction in this package.
func Prefetch(p unsafe.Pointer, n uintptr) {}

// prefetchAt is Prefetch of an address kept as a number. Here it does
// nothing.
func prefetchAt(p, n uintptr) {}
