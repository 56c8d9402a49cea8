//go:build !linux

package azurite

import "syscall"

// procAttr puts Azurite in a process group of its own, which cleanup
// signals whole.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
