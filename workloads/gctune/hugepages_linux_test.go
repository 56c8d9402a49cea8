package gctune

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the kernel's flags of the mapping that holds p, from
// /proc/self/smaps ("hg" is a mapping asked to have huge pages).
func vmFlags(t *testing.T, p uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if r, _, ok := strings.Cut(line, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			a, z, _ := strings.Cut(r, "-")
			lo, err1 := strconv.ParseUint(a, 16, 64)
			hi, err2 := strconv.ParseUint(z, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(lo) <= p && p < uintptr(hi)
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimPrefix(line, "VmFlags:")
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return ""
}

func needTHP(t *testing.T) {
	t.Helper()
	if HugePageMode() == "" {
		t.Skip("this kernel has no transparent huge pages to ask for")
	}
}

func hasFlag(flags, f string) bool {
	for _, x := range strings.Fields(flags) {
		if x == f {
			return true
		}
	}
	return false
}

// TestReserveAsksBeforeItTouches: the reserved room is asked for huge
// pages while none of it is in memory, which only holds if the runtime
// did not zero it (see reserve).
func TestReserveAsksBeforeItTouches(t *testing.T) {
	needTHP(t)
	room, fresh := reserve()
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		if room != nil {
			t.Fatal("reserve reserved under a memory limit, which counts the room as held")
		}
		return
	}
	if room == nil {
		t.Fatal("reserve did not try: the test's heap is small, it should")
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(room)))
	if !fresh {
		t.Fatalf("the room at %#x was touched before it was asked for", p)
	}
	if resident(p, uintptr(len(room))&^(pageSize-1)) {
		t.Fatalf("some of the room at %#x is in memory, though nothing wrote it", p)
	}
	mid := (p + uintptr(len(room))/2) &^ (hugePage - 1)
	if fl := vmFlags(t, mid); !hasFlag(fl, "hg") {
		t.Fatalf("the room's mapping was not asked for huge pages: flags %q", fl)
	}
}

// TestAdviseHeapReachesNewMappings: heap the runtime maps after the
// reservation is asked for on the next tick.
func TestAdviseHeapReachesNewMappings(t *testing.T) {
	needTHP(t)
	big := make([]byte, 1536<<20) // past a reservation, so a mapping of its own
	p := uintptr(unsafe.Pointer(unsafe.SliceData(big)))
	mid := (p + uintptr(len(big))/2) &^ (hugePage - 1)
	adviseHeap()
	if fl := vmFlags(t, mid); !hasFlag(fl, "hg") {
		t.Fatalf("a new heap mapping was not asked for huge pages: flags %q", fl)
	}
}

func TestHeapMappingReadsMaps(t *testing.T) {
	for _, c := range []struct {
		line   string
		named  bool
		lo, hi uintptr
		ok     bool
	}{
		{"c000000000-c000400000 rw-p 00000000 00:00 0 ", false, 0xc000000000, 0xc000400000, true},
		{"c000000000-c000400000 rw-p 00000000 00:00 0                          [anon: Go: heap]", true, 0xc000000000, 0xc000400000, true},
		{"c000000000-c000400000 rw-p 00000000 00:00 0                          [anon: Go: other]", true, 0, 0, false},
		{"c000000000-c000400000 rw-p 00000000 00:00 0 ", true, 0, 0, false},
		{"c000000000-c000400000 ---p 00000000 00:00 0 ", false, 0, 0, false},
		{"7f0000000000-7f0000021000 rw-p 00000000 08:01 1234 /usr/lib/x.so", false, 0, 0, false},
		{"7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]", false, 0, 0, false},
		{"zz-c0 rw-p 00000000 00:00 0", false, 0, 0, false},
		{"", false, 0, 0, false},
	} {
		lo, hi, ok := heapMapping([]byte(c.line), c.named)
		if lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("heapMapping(%q, %v) = %#x, %#x, %v; want %#x, %#x, %v", c.line, c.named, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}
