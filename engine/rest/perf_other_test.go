//go:build !linux

package rest_test

import (
	"syscall"
	"time"
)

// childAttr is nothing where a child cannot be told to end with its
// parent: a server the benchmark starts ends at its cleanup.
func childAttr() *syscall.SysProcAttr { return nil }

// processCPU is unknown where /proc is not: the benchmark then reports
// rates alone.
func processCPU(pid int) time.Duration { return -1 }
