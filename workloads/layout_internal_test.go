package workloads

import (
	"testing"
	"unsafe"
)

// TestAStepReadsFewLines holds the worker's layout to what Warm assumes: a
// simulator of 15,000 threads finds none of a thread's state in the cache
// at its next step, and each cache line a step reads costs it about as
// much as the rest of its work does. The worker's head, which a request
// reads, is nine lines; its keys' head begins on a line of its own and
// takes one; and a worker is whole lines, in an array that the allocator
// begins on a line.
func TestAStepReadsFewLines(t *testing.T) {
	const line = 64
	if workerHead > 9*line {
		t.Errorf("a request reads %d bytes of its worker, more than 9 lines", workerHead)
	}
	if off := unsafe.Offsetof(worker{}.ownKeys); off%line != 0 {
		t.Errorf("a worker's keys begin %d bytes into a line", off%line)
	}
	if keysHead > line {
		t.Errorf("a request reads %d bytes of its keys, more than a line", keysHead)
	}
	if size := unsafe.Sizeof(worker{}); size%line != 0 {
		t.Errorf("a worker is %d bytes, not whole lines: in buildWorkers' array some begin inside a line", size)
	}
	all := make([]worker, 64) // buildWorkers' array, for 64 threads
	if p := uintptr(unsafe.Pointer(&all[0])); p%line != 0 {
		t.Errorf("an array of %d workers begins %d bytes into a line", len(all), p%line)
	}
}
