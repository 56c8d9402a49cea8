package rest_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childAttr makes a server the benchmark starts end when the benchmark
// does, however it ends.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processCPU returns the CPU time process pid has taken, user and system,
// from /proc at the kernel's 100 ticks a second, or -1 if it cannot be read
// (pid 0: a server in this process).
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: utime and stime are the 12th and 13th of them.
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// TestProcessCPU checks the reading BenchmarkServers takes of each
// process's CPU: this process's grows while it works, and a server in
// this process (pid 0) is unknown.
func TestProcessCPU(t *testing.T) {
	if processCPU(0) != -1 {
		t.Fatal("pid 0 read as a process")
	}
	before := processCPU(os.Getpid())
	if before < 0 {
		t.Fatal("this process's CPU cannot be read")
	}
	// Work until a tick shows, or 5 s: a busy machine may give this
	// process little of its time.
	after := before
	for start := time.Now(); after <= before && time.Since(start) < 5*time.Second; after = processCPU(os.Getpid()) {
		for x := range 1_000_000 {
			_ = x * x
		}
	}
	if after <= before {
		t.Fatalf("CPU %v after 5 s of work, %v before", after, before)
	}
}
