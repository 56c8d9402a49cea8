//go:build !linux

package gctune

// reserve has nothing to ask where there is no Linux kernel: HugePages
// does not call it on any other system, whose mode reads "".
func reserve() (room []byte, fresh bool) { return nil, false }
