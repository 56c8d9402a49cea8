//go:build !linux

package rest_test

import "syscall"

// childAttr is nothing where a child cannot be told to end with its
// parent: a server the benchmark starts ends at its cleanup.
func childAttr() *syscall.SysProcAttr { return nil }
