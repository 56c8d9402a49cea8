package gctune

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

const (
	// hugePage is the size of an x86-64 or arm64 transparent huge page.
	hugePage = 2 << 20
	// reserveBytes is the heap room reserve asks huge pages for at start:
	// address space only, never touched by the reservation itself, and
	// given back to the heap at once.
	reserveBytes = 1 << 30
	// smallHeap bounds the free heap reserve works from: above it, the
	// block that covers the free heap (see reserve) would cost its size in
	// zeroing.
	smallHeap = 64 << 20
)

func hugePages(period time.Duration) (stop func()) {
	reserve()
	adviseHeap()
	return every(period, adviseHeap)
}

// reserve makes the heap map reserveBytes of memory it has never touched,
// asks for huge pages there, and gives it back: what the process then
// allocates, up to that much, is placed in memory first touched after the
// ask, which the kernel then backs with huge pages. It returns the block
// it asked for, and whether the block was fresh (not one of its pages in
// memory) when it asked; room is 0 where the heap was too large to try.
//
// The runtime zeroes a large block unless all of it is memory fresh from
// the kernel, which would make a gigabyte resident. The first block,
// larger than the heap's free pages together, cannot fit in them, so it
// takes whatever free run ends the heap (the only one it could extend) and
// fresh memory after it; the second then lies wholly above every page the
// heap ever used. Only the first, the size of a small heap's free pages,
// is zeroed. The collector is held off meanwhile: the first block would
// start a cycle, whose workers' stacks, taken and given back above it,
// left a used page there in 2 of 40 tries (none in 210 without them).
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
	if free > smallHeap || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		// A memory limit counts the room as held until the scavenger
		// gives it back, and the collector would work to get under it.
		return nil, false
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	cover := make([]byte, free+64<<10)
	room = make([]byte, reserveBytes)
	runtime.KeepAlive(cover)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(room)))
	if resident(p, pageSize) || resident(p+reserveBytes-pageSize, pageSize) {
		// Zeroed after all: asking for huge pages now would keep what
		// was touched resident in them.
		return room, false
	}
	advise(p, reserveBytes)
	return room, true
}

const pageSize = 4096

// resident reports whether any of the n bytes at p, page aligned, is in
// memory.
func resident(p, n uintptr) bool {
	vec := make([]byte, (n+pageSize-1)/pageSize)
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
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + n) &^ (hugePage - 1)
	if hi > lo {
		// Advice: a kernel that refuses leaves the pages as they are.
		syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
	}
}

// adviseHeap asks for huge pages in every mapping of the Go heap: those
// the runtime names "Go: heap" where the kernel keeps names of anonymous
// mappings, else every private anonymous mapping that can be written,
// which is where the runtime keeps its heap.
func adviseHeap() {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	named := bytes.Contains(b, []byte("[anon: Go: heap]")) || bytes.Contains(b, []byte("[anon:Go: heap]"))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lo, hi, ok := heapMapping(sc.Bytes(), named)
		if ok {
			advise(lo, hi-lo)
		}
	}
}

// heapMapping reads a line of /proc/self/maps and returns its range if it
// is a mapping of the heap (see adviseHeap), with named telling whether the
// kernel names them.
func heapMapping(line []byte, named bool) (lo, hi uintptr, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[1]) != "rw-p" {
		return 0, 0, false
	}
	if named {
		if !bytes.HasSuffix(line, []byte("Go: heap]")) {
			return 0, 0, false
		}
	} else if len(f) > 5 || string(f[4]) != "0" {
		return 0, 0, false
	}
	a, z, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(string(a), 16, 64)
	h, err2 := strconv.ParseUint(string(z), 16, 64)
	if err1 != nil || err2 != nil || h <= l {
		return 0, 0, false
	}
	return uintptr(l), uintptr(h), true
}
