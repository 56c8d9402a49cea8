package vm_test

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"github.com/tablebench/tablebench/workloads/vm"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		cores   int
		serial  float64
		wantErr bool
	}{
		{"small", 1, 1, false},
		{"XL", 8, 0.55, false},
		{"cores:4", 4, 0.55, false},
		{"cores:1", 1, 1, false},
		{"cores:4,serial:0.7", 4, 0.7, false},
		{"huge", 0, 0, true},
		{"cores:0", 0, 0, true},
		{"cores:2,serial:2", 0, 0, true},
		{"serial:0.5", 0, 0, true},
		{"cores:2,ram:8", 0, 0, true},
	}
	for _, tc := range tests {
		sz, err := vm.ParseSize(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && (sz.Cores != tc.cores || sz.SerialFraction != tc.serial)) {
			t.Errorf("ParseSize(%q) = %+v, %v", tc.in, sz, err)
		}
	}
}

func TestSpend(t *testing.T) {
	t0 := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	small := vm.New(vm.Small)
	// One core: three requests of 10 ms at once finish at 10, 20, 30 ms.
	for i, want := range []time.Duration{10, 20, 30} {
		if got := small.Spend(t0, 10*time.Millisecond).Sub(t0); got != want*time.Millisecond {
			t.Fatalf("small request %d done after %v, want %v ms", i, got, want)
		}
	}
	// XL: 55% of each request is serialized, so ten requests at once take
	// ten serial sections (55 ms) plus one parallel part (4.5 ms).
	xl := vm.New(vm.XL)
	var last time.Time
	for range 10 {
		last = xl.Spend(t0, 10*time.Millisecond)
	}
	if got := last.Sub(t0); got != 59500*time.Microsecond {
		t.Fatalf("ten XL requests done after %v, want 59.5 ms", got)
	}
	if xl.Busy() != 100*time.Millisecond {
		t.Fatalf("busy %v", xl.Busy())
	}
	c := vm.DefaultCost()
	if c.Write(100) != 85*time.Millisecond || c.Write(1) != 5800*time.Microsecond {
		t.Fatalf("costs %v %v", c.Write(100), c.Write(1))
	}
}

// TestSpendKeepsNow: the time Spend returns is now.Add of the time spent,
// the same Time, whether now has a monotonic reading or not, in any
// location; and a four-core VM takes its first free core, as others do.
func TestSpendKeepsNow(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	wall := time.Now()
	for name, t0 := range map[string]time.Time{
		"utc":       time.Date(2010, 1, 1, 0, 0, 0, 999_999_000, time.UTC),
		"local":     time.Date(2010, 1, 1, 0, 0, 0, 1, time.Local),
		"paris":     time.Date(2010, 1, 1, 0, 0, 0, 0, paris),
		"monotonic": wall,
		"before":    time.Unix(-5, 3),
	} {
		four, many := vm.New(vm.Modern), vm.New(vm.Size{Name: "cores:5", Cores: 5, SerialFraction: 0.05})
		for i := range 100 {
			now := t0.Add(time.Duration(i*i%37) * 7 * time.Microsecond) // some at once, some not
			got, other := four.Spend(now, 85*time.Microsecond), many.Spend(now, 85*time.Microsecond)
			if want := now.Add(got.Sub(now)); got != want || got.Location() != now.Location() {
				t.Fatalf("%s: request %d: Spend gave %#v, not now.Add of it, %#v", name, i, got, want)
			}
			if got.Before(now) || other.After(got) {
				t.Fatalf("%s: request %d: done at %v on four cores, %v on five, from %v", name, i, got, other, now)
			}
		}
	}
}

// TestUtilizationOfTheLimit: an XL VM whose serial section is always busy
// is saturated, though most of its cores idle.
func TestUtilizationOfTheLimit(t *testing.T) {
	xl := vm.New(vm.XL)
	start := time.Unix(0, 0)
	now := start
	for range 100 { // 8 threads at once: the serial section never rests
		var last time.Time
		for range 8 {
			last = xl.Spend(now, 10*time.Millisecond)
		}
		now = last
	}
	if u := xl.Utilization(now.Sub(start)); u < 85 { // busy time over all cores would say ~20%
		t.Fatalf("a saturated XL VM shows %.0f%% used", u)
	}
	small := vm.New(vm.Small)
	small.Spend(start, 10*time.Millisecond)
	if u := small.Utilization(100 * time.Millisecond); u < 9.9 || u > 10.1 {
		t.Fatalf("a small VM busy 10 ms of 100 shows %.1f%%", u)
	}
}

// TestUtilizationOverTheWindow: a VM counts only the work that runs inside
// its window, so a saturated measured window reads 100% however idle the
// warm-up was, and work queued past the end does not raise it.
func TestUtilizationOverTheWindow(t *testing.T) {
	start := time.Unix(0, 0)
	from, to := start.Add(time.Second), start.Add(3*time.Second)
	small := vm.New(vm.Small)
	small.Window(from, to)
	small.Spend(start, 100*time.Millisecond) // the warm-up's one request
	for now := from.Add(-50 * time.Millisecond); now.Before(to); now = now.Add(100 * time.Millisecond) {
		small.Spend(now, 200*time.Millisecond) // twice what the VM can do: it queues past the end
	}
	if u := small.Utilization(to.Sub(from)); u < 99.9 || u > 100 {
		t.Fatalf("a VM busy all its window shows %.1f%%", u)
	}
	idle := vm.New(vm.Small)
	idle.Window(from, to)
	idle.Spend(from.Add(-50*time.Millisecond), 100*time.Millisecond) // half in the window
	idle.Spend(to.Add(-10*time.Millisecond), 100*time.Millisecond)   // a tenth in it
	if u := idle.Utilization(to.Sub(from)); u < 2.99 || u > 3.01 {
		t.Fatalf("60 ms of work in a 2 s window shows %.2f%%", u)
	}
}

// TestModernClient: today's client parses by name, costs what was measured
// rather than the 2010 client's 5 ms, and leaves the 2010 sizes' records as
// they were (no cost written for them).
func TestModernClient(t *testing.T) {
	sz, err := vm.ParseSize("modern")
	if err != nil || sz != vm.Modern {
		t.Fatalf("vm.ParseSize(modern) = %+v, %v", sz, err)
	}
	if c := vm.Modern.ClientCost(); c != vm.Modern.Cost || c.Write(1) >= time.Millisecond {
		t.Errorf("today's client costs %+v", c)
	}
	if vm.XL.ClientCost() != vm.DefaultCost() || vm.Small.ClientCost() != vm.DefaultCost() {
		t.Error("the 2010 sizes do not cost the 2010 client's CPU")
	}
	b, _ := json.Marshal(vm.XL)
	if string(b) != `{"name":"xl","cores":8,"serial_fraction":0.55}` {
		t.Errorf("vm.XL is recorded as %s", b)
	}
	// 15 threads each sending a single insert every 7 ms, the modern
	// profile's service time, keep today's VM mostly idle; the 2010 vm.XL is
	// saturated by them.
	for _, tc := range []struct {
		size    vm.Size
		min, mx float64
	}{{vm.Modern, 0, 10}, {vm.XL, 90, 100}} {
		v := vm.New(tc.size)
		start := time.Unix(0, 0)
		for i := range 15 * 1000 {
			v.Spend(start.Add(time.Duration(i/15)*7*time.Millisecond), tc.size.ClientCost().Write(1))
		}
		if u := v.Utilization(7 * time.Second); u < tc.min || u > tc.mx {
			t.Errorf("%s: %.0f%% busy, want %g-%g%%", tc.size.Name, u, tc.min, tc.mx)
		}
	}
}

// TestFleetIsWholeLines: a fleet's VMs, which a simulator's threads read
// at every request, each begin on a cache line, in an array large enough
// that the allocator begins it on one, and are as New's.
func TestFleetIsWholeLines(t *testing.T) {
	fleet := vm.Fleet(vm.XL, 128)
	for i, v := range fleet {
		if p := uintptr(unsafe.Pointer(v)); p%64 != 0 {
			t.Fatalf("VM %d of the fleet begins %d bytes into a line", i, p%64)
		}
	}
	now := time.Unix(0, 0)
	a, b := fleet[3], vm.New(vm.XL)
	for range 20 {
		if x, y := a.Spend(now, time.Millisecond), b.Spend(now, time.Millisecond); !x.Equal(y) {
			t.Fatalf("a fleet's VM finished work at %v, New's at %v", x, y)
		}
	}
}
