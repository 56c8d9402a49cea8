package rest_test

import "syscall"

// childAttr makes a server the benchmark starts end when the benchmark
// does, however it ends.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
