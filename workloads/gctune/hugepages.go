package gctune

import (
	"os"
	"strings"
	"time"
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
// does not ask for its heap. HugePages asks.

// HugePageMode returns the kernel's transparent huge page mode (always,
// madvise or never), or "" where the system has none or does not say.
func HugePageMode() string {
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

// HugePages asks the kernel to back the process's heap with huge pages,
// where its mode is "madvise" and GODEBUG=disablethp=1 is not set, and
// does nothing elsewhere. It reserves heap room for what the process will
// allocate first, asked for before any of it is touched (see reserve), and
// every period after it asks again for the heap's mappings, so that what
// the heap grows into later gets huge pages where it is touched after the
// ask. The function it returns stops asking. Call it first thing, while
// the heap is small.
func HugePages(period time.Duration) (stop func()) {
	if HugePageMode() != "madvise" || hugePagesOff(os.Getenv("GODEBUG")) {
		return func() {}
	}
	return hugePages(period)
}
