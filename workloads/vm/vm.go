// Package vm models the client machines of the case study: a VM's worker
// threads share its cores, and every request costs client CPU to build, send
// and parse. The model is what makes a small VM flatten as more threads are
// added, and an extra-large VM give "a little more than 1.5x" a small one.
//
// A request's client work is w = PerRequest + PerEntity·n of one small-VM
// core (Get for a point read). A fraction SerialFraction of it is serialized
// per VM (the 2010 .NET client's locks and its stop-the-world collector); the
// rest runs on any of the VM's cores. A one-core VM serializes everything.
// The model is arithmetic: Spend returns when the work is done, and the
// caller folds that into the single sleep of its request.
package vm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/clock"
)

// Size is a VM size.
type Size struct {
	Name           string  `json:"name"`
	Cores          int     `json:"cores"`
	SerialFraction float64 `json:"serial_fraction"`
	// Cost is what a request costs the client, on one of its cores; zero
	// is the 2010 client's (DefaultCost).
	Cost Cost `json:"cost,omitzero"`
}

// ClientCost returns the client CPU a request takes on a VM of this size.
func (s Size) ClientCost() Cost {
	if s.Cost == (Cost{}) {
		return DefaultCost()
	}
	return s.Cost
}

// The case study's sizes. The XL's serial fraction is calibrated so that an
// XL VM gives a little more than 1.5x (1/0.55 ≈ 1.8x) a small VM's
// throughput when both are CPU-bound (C7.2), and keeps gaining from 15 to 30
// threads of batches while a small VM does not (C10.2).
var (
	Small = Size{Name: "small", Cores: 1, SerialFraction: 1}
	XL    = Size{Name: "xl", Cores: 8, SerialFraction: 0.55}
)

// Modern is today's client: a general-purpose VM of 4 vCPUs (Azure's
// D4s v5, the Dv5 and Dsv5-series size documentation) running the Go
// aztables SDK, the client tablebench itself uses against a Table
// endpoint.
//
// Its cost is measured, not fitted: BenchmarkHarnessCeiling in
// workloads/aztarget drives the harness and the SDK against a canned Table
// endpoint in another process and counts this process's CPU. On an AMD
// EPYC core, three rounds gave 7,600-9,200 single inserts, 9,600-10,400
// point gets and 250-300 batches of 100 per second of CPU (1 KB entities):
// about 120 us an insert, 100 us a get and 3.7 ms a batch of 100, that is
// 85 us a request and 35 us an entity. The count includes the harness's
// own work per request, so the figures bound the SDK's from above. A
// vCPU of a D4s v5 (Ice Lake or Sapphire Rapids at 3.5 GHz) is taken to be
// as fast as that core.
//
// Its serial fraction is small: Go's collector runs beside the program,
// its stop-the-world pauses last microseconds, and the SDK's requests share
// only the connection pool's lock. In those rounds the harness used from
// 0.7 to 1.6 cores with requests per CPU second within their spread, which
// a serial section of more than a few percent would not allow; 5% is kept
// as an allowance.
var Modern = Size{Name: "modern", Cores: 4, SerialFraction: 0.05,
	Cost: Cost{PerRequest: 85 * time.Microsecond, PerEntity: 35 * time.Microsecond, Get: 100 * time.Microsecond}}

// ParseSize parses "small", "xl", "modern", or a custom
// "cores:N[,serial:F]" (with the 2010 client's cost).
func ParseSize(s string) (Size, error) {
	switch strings.ToLower(s) {
	case "small":
		return Small, nil
	case "xl", "extralarge", "extra-large":
		return XL, nil
	case "modern":
		return Modern, nil
	}
	sz := Size{Name: s, SerialFraction: -1}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			return Size{}, fmt.Errorf("VM size %q is not valid: use small, xl, modern, or cores:N[,serial:F] such as cores:4,serial:0.7", s)
		}
		switch k {
		case "cores":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1024 {
				return Size{}, fmt.Errorf("VM size %q: cores must be a whole number from 1 to 1024", s)
			}
			sz.Cores = n
		case "serial":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return Size{}, fmt.Errorf("VM size %q: serial must be a fraction from 0 to 1", s)
			}
			sz.SerialFraction = f
		default:
			return Size{}, fmt.Errorf("VM size %q: unknown field %q, use cores and serial", s, k)
		}
	}
	if sz.Cores == 0 {
		return Size{}, fmt.Errorf("VM size %q: say how many cores, as in cores:4", s)
	}
	if sz.SerialFraction < 0 {
		sz.SerialFraction = XL.SerialFraction
		if sz.Cores == 1 {
			sz.SerialFraction = 1
		}
	}
	return sz, nil
}

// Cost is the client CPU a request takes on one small-VM core.
type Cost struct {
	PerRequest time.Duration `json:"per_request"` // fixed cost of a write request
	PerEntity  time.Duration `json:"per_entity"`  // added for each entity written
	Get        time.Duration `json:"get"`         // a point read
}

// DefaultCost returns the calibrated 2010 client: 5 ms + 0.8 ms per entity
// for writes, 5 ms for a point get.
func DefaultCost() Cost {
	return Cost{PerRequest: 5 * time.Millisecond, PerEntity: 800 * time.Microsecond, Get: 5 * time.Millisecond}
}

// Write returns the client work of a write of n entities.
func (c Cost) Write(n int) time.Duration { return c.PerRequest + time.Duration(n)*c.PerEntity }

// VM is one client machine. It is safe for concurrent use by its threads.
//
// It keeps its times as Unix nanoseconds: a request's every Spend compares
// and adds them, which as time.Time values cost several times the work.
type VM struct {
	// What Spend reads comes first, with the cores of a VM of up to eight
	// inline: thousands of simulated threads share hundreds of VMs, and a
	// request then reads fewer of their cache lines.
	mu         sync.Mutex
	unshared   bool // Spend is never called concurrently: it takes no lock
	windowed   bool
	serial     float64 // the size's serial fraction
	serialFree int64
	cores      []int64
	total      time.Duration // all the work spent
	// busy and serialBusy are the work, and its serial part, that ran
	// within the window [from, to), when one is set; all of it otherwise.
	busy       time.Duration
	serialBusy time.Duration
	from, to   int64
	few        [8]int64 // cores, for a VM of up to eight (the case study's XL)
	size       Size
	_          [40]byte // whole cache lines: see Fleet
}

// New returns a VM of the given size.
func New(size Size) *VM {
	v := new(VM)
	v.init(size)
	return v
}

// Fleet returns n VMs of the given size, side by side in one array: a
// simulator's threads read their VM at every request, and a VM that is a
// whole number of cache lines, in an array as large as the allocator
// starts on a line, shares none of its lines with another.
func Fleet(size Size, n int) []*VM {
	all := make([]VM, n)
	vms := make([]*VM, n)
	for i := range all {
		all[i].init(size)
		vms[i] = &all[i]
	}
	return vms
}

func (v *VM) init(size Size) {
	*v = VM{size: size, serial: size.SerialFraction, serialFree: math.MinInt64}
	if n := max(size.Cores, 1); n <= len(v.few) {
		v.cores = v.few[:n]
	} else {
		v.cores = make([]int64, n)
	}
	for i := range v.cores {
		v.cores[i] = math.MinInt64
	}
}

// Unshared declares that Spend will not be called concurrently from now
// on, as a virtual clock's threads are not when the clock steps them all
// on one goroutine: Spend then takes no lock, which costs a simulated
// request more than the rest of Spend.
func (v *VM) Unshared() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.unshared = true
}

// Size returns the VM's size.
func (v *VM) Size() Size { return v.size }

// Warm prefetches what Spend reads of the VM, all but its size, for a
// simulator's thread (clock.Warmer) while the thread before it runs.
func (v *VM) Warm() { clock.Prefetch(unsafe.Pointer(v), unsafe.Offsetof(v.size)) }

// Spend runs work of client CPU that becomes ready at now and returns when it
// is done: its parallel part on the first free core, then its serial part
// once the VM's serial section is free.
func (v *VM) Spend(now time.Time, work time.Duration) time.Time {
	if work <= 0 {
		return now
	}
	serial := time.Duration(float64(work) * v.serial)
	parallel := work - serial
	n := now.UnixNano()
	if !v.unshared {
		v.mu.Lock()
	}
	v.total += work
	t := n
	if parallel > 0 {
		cores, i := v.cores, 0
		if c := cores; len(c) == 4 { // today's VM: the search written out, without its bounds checks
			m := c[0]
			if c[1] < m {
				i, m = 1, c[1]
			}
			if c[2] < m {
				i, m = 2, c[2]
			}
			if c[3] < m {
				i = 3
			}
		} else {
			for j := 1; j < len(cores); j++ {
				if cores[j] < cores[i] {
					i = j
				}
			}
		}
		t = max(t, cores[i])
		v.busy += v.within(t, parallel)
		t += int64(parallel)
		cores[i] = t
	}
	if serial > 0 {
		t = max(t, v.serialFree)
		in := v.within(t, serial)
		v.busy += in
		v.serialBusy += in
		t += int64(serial)
		v.serialFree = t
	}
	if !v.unshared {
		v.mu.Unlock()
	}
	// From now, so that the time keeps now's location (and, in wall
	// time, its monotonic reading). A time without one, as a virtual
	// clock's are, is its Unix time and its location: that is now.Add's
	// Time, built for a third of the cost.
	if l := now.Location(); now.In(l) == now { // In drops a monotonic reading, and inlines where Round does not
		return time.Unix(0, t).In(l)
	}
	return now.Add(time.Duration(t - n))
}

// Window has the VM count, from now on, only the work that runs within
// [from, to) towards Utilization: a run's measured window, without the
// warm-up's ramp or work queued past the end.
func (v *VM) Window(from, to time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.windowed = !to.IsZero()
	v.from, v.to = math.MinInt64, to.UnixNano()
	if !from.IsZero() {
		v.from = from.UnixNano()
	}
}

// within returns how much of work d, running from start (in Unix
// nanoseconds), falls in the window.
func (v *VM) within(start int64, d time.Duration) time.Duration {
	if !v.windowed {
		return d
	}
	lo, hi := max(start, v.from), min(start+int64(d), v.to)
	return time.Duration(max(0, hi-lo))
}

// Utilization returns the share, in %, of the VM's limiting resource that
// was busy over elapsed (the length of its Window, if it has one, or what
// of it has passed): its serial section or its cores, whichever was
// busier. Dividing all work by all cores would show a VM whose serial
// section is saturated as a quarter used.
func (v *VM) Utilization(elapsed time.Duration) float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if elapsed <= 0 {
		return 0
	}
	serial := v.serialBusy.Seconds() / elapsed.Seconds()
	cores := (v.busy - v.serialBusy).Seconds() / elapsed.Seconds() / float64(len(v.cores))
	return min(100, 100*max(serial, cores))
}

// Busy returns the client CPU spent so far.
func (v *VM) Busy() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.total
}
