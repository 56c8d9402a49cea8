package gctune

import (
	"os"
	"strings"
	"sync"
)

// Huge pages. A simulation of thousands of threads steps each in turn, and
// by its next request a thread's state, its key's rows and its recorder
// have left the processor's caches and its TLB: with the kernel's 4 KB
// pages every such access also walks the page tables, and in a virtual
// machine that walk is itself a chain of misses. With 2 MB pages the TLB
// covers a heap of hundreds of megabytes. Measured on the 2-core machine,
// a run of 15,000 simulated threads took 0.80x the CPU with the heap on
// huge pages (docs/measurements.md).
//
// Where the kernel's transparent huge pages are "always", every heap gets
// them and there is nothing to do; under "madvise", the default of many
// distributions, a process must ask for each mapping, and the Go runtime
// does not ask for its heap. HugePages asks, for a simulation only: a
// process that serves or drives an endpoint in wall time runs for long and
// measures latencies, and huge pages there cost it memory (the kernel
// fills a huge page that the collector gave back in part) and, while the
// kernel compacts memory to find one, time in the middle of a request.
// Go dropped them from its own heap for those reasons.

// hugePageMode returns the kernel's transparent huge page mode (always,
// madvise or never), or "" where the system has none or does not say.
func hugePageMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	return bracketed(string(b))
}

// bracketed returns the word of a sysfs choice list that is in force:
// "always [madvise] never" gives "madvise".
func bracketed(s string) string {
	i := strings.IndexByte(s, '[')
	j := strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return ""
	}
	return s[i+1 : j]
}

// hugePagesOff reports whether the process was told to keep its heap off
// huge pages: GODEBUG=disablethp=1, Go's own switch, which HugePages
// honours as the runtime does.
func hugePagesOff(godebug string) bool {
	for _, kv := range strings.Split(godebug, ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return true
		}
	}
	return false
}

var hugePagesOnce sync.Once

// HugePages asks the kernel to back what the process allocates next with
// huge pages, up to a gigabyte of heap, where its mode is "madvise" and
// GODEBUG=disablethp=1 is not set, and does nothing elsewhere, nor after
// its first call. Call it from a command that simulates in virtual time,
// once it knows it will, while its heap is still small (see reserve).
func HugePages() {
	hugePagesOnce.Do(func() {
		if hugePageMode() == "madvise" && !hugePagesOff(os.Getenv("GODEBUG")) {
			reserve()
		}
	})
}
