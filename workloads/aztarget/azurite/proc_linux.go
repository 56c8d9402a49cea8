package azurite

import "syscall"

// procAttr puts Azurite in a process group of its own, which cleanup
// signals whole, and has the kernel kill it if the test process dies
// first (a test timeout, a kill), which runs no cleanup.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
