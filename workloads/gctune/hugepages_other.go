//go:build !linux

package gctune

import "time"

// hugePages has nothing to ask where there is no Linux kernel: HugePages
// returns before it on every other system, whose mode reads "".
func hugePages(time.Duration) (stop func()) { return func() {} }
