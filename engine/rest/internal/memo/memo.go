// Package memo remembers the value made for the last key given, for the
// served engine and the canned server: what requests repeat (a date, a
// service root, a string to sign, a host) is made once and read again
// without a lock.
package memo

import "sync/atomic"

// Last remembers the value made for the last key it was given. Its zero
// value remembers nothing.
type Last[K comparable, V any] struct{ p atomic.Pointer[keyed[K, V]] }

type keyed[K comparable, V any] struct {
	k K
	v V
}

// Get returns the value remembered for k, if the last key was k.
func (l *Last[K, V]) Get(k K) (v V, ok bool) {
	if e := l.p.Load(); e != nil && e.k == k {
		return e.v, true
	}
	return v, false
}

// Put remembers v as the value for k, which must not share memory that
// changes.
func (l *Last[K, V]) Put(k K, v V) { l.p.Store(&keyed[K, V]{k, v}) }

// Key returns the last key given, if there was one.
func (l *Last[K, V]) Key() (k K, ok bool) {
	if e := l.p.Load(); e != nil {
		return e.k, true
	}
	return k, false
}
