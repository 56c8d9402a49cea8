package clock

import "unsafe"

// Prefetch starts bringing the n bytes at p into the processor's cache,
// and returns without waiting for them: for a Warmer. It reads nothing
// and cannot fault, whatever p is.
//
//go:noescape
func Prefetch(p unsafe.Pointer, n uintptr)
