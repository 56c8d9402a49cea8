package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	// reserveBytes is the heap room reserve asks huge pages for: address
	// space only, never touched by the reservation itself, and the heap's
	// again at the next collection.
	reserveBytes = 1 << 30
	// smallHeap bounds the free heap reserve works from: above it, the
	// block that covers the free heap (see reserve) would cost its size in
	// zeroing.
	smallHeap = 64 << 20
)

// reserve makes the heap map reserveBytes of memory it has never touched,
// asks for huge pages there, and lets it go: what the process then
// allocates, up to that much, is placed in memory first touched after the
// ask, which the kernel then backs with huge pages. It returns the block
// it asked for, and whether the block was fresh (not one of its pages in
// memory) when it asked; room is nil where it did not try: a heap too
// large, a memory limit, or a kernel that would not map a gigabyte more
// (see roomToReserve).
//
// The runtime zeroes a large block unless it knows all of it reads zero
// (memory fresh from the kernel, or all given back to it), which would
// make a gigabyte resident. The first block, larger than the heap's free
// pages together, cannot fit in them, so it takes whatever free run ends
// the heap (the only one it could extend) and fresh memory after it; the
// second then lies wholly above every page the heap ever used. Only the
// first, the size of a small heap's free pages, is zeroed. The collector
// is held off meanwhile: the first block would start a cycle, whose
// workers' stacks, taken and given back above it, left a used page there
// in 2 of 40 tries (none in 210 without them).
func reserve() (room []byte, fresh bool) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var free uint64
	for _, m := range s {
		if m.Value.Kind() != metrics.KindUint64 {
			return nil, false
		}
		free += m.Value.Uint64()
	}
	if free > smallHeap || !roomToReserve() {
		return nil, false
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	cover := make([]byte, free+64<<10)
	room = make([]byte, reserveBytes)
	runtime.KeepAlive(cover)
	p, page := uintptr(unsafe.Pointer(unsafe.SliceData(room))), uintptr(os.Getpagesize())
	first := (p + page - 1) &^ (page - 1)
	last := (p + reserveBytes - page) &^ (page - 1)
	if resident(first, page) || resident(last, page) {
		// Zeroed after all: asking for huge pages now would keep what
		// was touched resident in them.
		return room, false
	}
	advise(p, reserveBytes)
	return room, true
}

// roomToReserve reports whether the process may map a gigabyte it will not
// touch: not under a memory limit, which counts the room as held until the
// scavenger gives it back (the collector would work to get under it); nor
// under a limit of address space, or a kernel that commits every mapping
// (vm.overcommit_memory 2), where the mapping could fail, and the runtime
// cannot recover from that.
func roomToReserve() bool {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return false
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur != math.MaxUint64 {
		return false
	}
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && strings.TrimSpace(string(b)) != "2"
}

// hugePageSize is the kernel's size of a transparent huge page: 2 MB on
// x86-64, and on arm64 with 4 KB pages.
func hugePageSize() uintptr {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 2 << 20
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 2 << 20
	}
	return uintptr(n)
}

// resident reports whether any of the n bytes at p, which is page
// aligned, is in memory.
func resident(p, n uintptr) bool {
	page := uintptr(os.Getpagesize())
	vec := make([]byte, (n+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, p, n, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return true // unknown: taken as touched, so nothing is asked
	}
	for _, v := range vec {
		if v&1 != 0 {
			return true
		}
	}
	return false
}

// advise asks for huge pages in the whole huge pages inside [p, p+n).
func advise(p, n uintptr) {
	huge := hugePageSize()
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + n) &^ (huge - 1)
	if hi > lo {
		// Advice: a kernel that refuses leaves the pages as they are.
		syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
	}
}
