package gctune

import (
	"bufio"
	"os"
	"os/exec"
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
	if hugePageMode() == "" {
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
// did not zero it (see reserve). It runs in a process of its own, whose
// heap is as small as a command's at its start: in this one, the tests
// before it may have left more free heap than reserve works from.
func TestReserveAsksBeforeItTouches(t *testing.T) {
	needTHP(t)
	if os.Getenv(reserveChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReserveAsksBeforeItTouches$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), reserveChild+"=1")
		out, err := cmd.CombinedOutput()
		switch {
		case err == nil && strings.Contains(string(out), "--- SKIP"):
			t.Skipf("in a process of its own:\n%s", out)
		case err != nil || !strings.Contains(string(out), "--- PASS"):
			t.Fatalf("in a process of its own: %v\n%s", err, out)
		}
		return
	}
	room, fresh := reserve()
	if !roomToReserve() {
		if room != nil {
			t.Fatal("reserve reserved where a limit leaves no room")
		}
		t.Skip("a memory limit, a limit of address space or strict overcommit: reserve does not try, as it should not")
	}
	if room == nil {
		t.Fatal("reserve did not try: the process's heap is small, it should")
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(room)))
	if !fresh {
		t.Fatalf("the room at %#x was touched before it was asked for", p)
	}
	page := uintptr(os.Getpagesize())
	first := (p + page - 1) &^ (page - 1)
	if resident(first, (p+uintptr(len(room))-first)&^(page-1)) {
		t.Fatalf("some of the room at %#x is in memory, though nothing wrote it", p)
	}
	huge := hugePageSize()
	mid := (p + uintptr(len(room))/2) &^ (huge - 1)
	if fl := vmFlags(t, mid); !hasFlag(fl, "hg") {
		t.Fatalf("the room's mapping was not asked for huge pages: flags %q", fl)
	}
}

// reserveChild marks the process TestReserveAsksBeforeItTouches starts.
const reserveChild = "GCTUNE_RESERVE_CHILD"

// TestNoRoomUnderALimitOfAddressSpace: under a limit of address space a
// mapping of a gigabyte more could fail, and the runtime could not
// recover; reserve does not try.
func TestNoRoomUnderALimitOfAddressSpace(t *testing.T) {
	if os.Getenv(reserveChild) != "" {
		if roomToReserve() {
			t.Fatal("roomToReserve under a limit of address space")
		}
		if room, _ := reserve(); room != nil {
			t.Fatal("reserve mapped a gigabyte under a limit of address space")
		}
		return
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 4000000 && exec "$0" -test.run='^TestNoRoomUnderALimitOfAddressSpace$' -test.count=1 -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), reserveChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("under ulimit -v: %v\n%s", err, out)
	}
}
