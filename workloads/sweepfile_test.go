package workloads

import (
	"strings"
	"testing"
)

// TestSweepFileErrorsNameTheLine: an error in a sweep file names the line
// the mistake is on, counted from the file's first line, whatever yaml.v3
// counts from and however the file starts.
func TestSweepFileErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"unclosed list", "name: a\nvms: [1, 2\n", "line 2: did not find expected ',' or ']'"},
		{"unclosed list after a blank line", "\nname: a\nvms: [1, 2\n", "line 3: "},
		{"stray bracket", "name: a\nvms: [1, 2]\nthreads: [3, 4]]\n", "line 3: "},
		{"bad indentation", "name: a\nvms: 1\n  threads: 2\n", "line 3: "},
		{"a list over several lines, then an error", "vms: [1,\n  2]\nthreads: [3\n", "line 3: "},
		{"a word among numbers", "name: a\nvms: [1, x]\n", `line 2: vms: "x" is not a whole number`},
		{"a fraction of a VM", "name: a\n\nvms:\n  - 1\n  - 2.5\n", `line 5: vms: "2.5" is not a whole number`},
		{"a map for a list", "name: a\nthreads: 10\nvms: {a: 1}\n", "line 3: vms takes single values or a list"},
		{"a second document", "name: a\nvms: [1, 2]\n---\nthreads: [3, 4]\n", "line 3: a second YAML document"},
		{"a rate that is not a number", "name: a\nrate: [100, .nan]\n", `line 2: rate: ".nan" is not a number: give a finite one`},
		{"an infinite rate", "name: a\nrate: .inf\n", `line 2: rate: ".inf" is not a number`},
		{"a field's value that is not a number", "name: a\nworkload: ycsb-a\nfields:\n  partitions.theta: [0.5, .nan]\n", `line 4: fields.partitions.theta: ".nan" is not a number`},
		{"an unknown key", "name: a\nvms: [1, 2]\nbogus: 1\n", `line 3: "bogus" is not a sweep key`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSweepFile([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one with %q", err, c.want)
			}
		})
	}
	if _, err := ParseSweepFile([]byte("vms: [1,\n  2]\nrate: [100, 2.5e3]\nthreads: 3\n")); err != nil {
		t.Fatalf("a valid file was refused: %v", err)
	}
}

// TestSweepOverWorkloadFields: a sweep file names a workload and sweeps
// its fields; each run is the workload with one value of each, x may be a
// swept field, and a field that is not the workload's is refused.
func TestSweepOverWorkloadFields(t *testing.T) {
	p, _ := LookupPreset("ycsb-c")
	d, err := ParseSweepFile([]byte("workload: ycsb-c\nx: partitions.theta\nfields:\n  partitions.theta: [0.5, 0.99, 1.5]\n  partitions.names: [random, sequential]\nthreads: [4, 8]\n"))
	if err != nil {
		t.Fatal(err)
	}
	d.WorkloadFile = p.File
	f, err := d.Figure()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 12 {
		t.Fatalf("%d runs, want 3 thetas x 2 names x 2 thread counts", len(f.Runs))
	}
	seen := map[string]bool{}
	for _, r := range f.Runs {
		s := r.Spec
		if s.Keys.Pick.Theta != r.X || s.Keys.Count != 1000 || s.Mix != nil || s.Op != OpGet {
			t.Fatalf("run %s x %v: %+v", r.Series, r.X, s)
		}
		if !strings.Contains(r.Series, "partitions.names="+string(s.Keys.Names)) || !strings.Contains(r.Series, "threads=") {
			t.Fatalf("series %q of a run with names %s", r.Series, s.Keys.Names)
		}
		seen[r.Series] = true
	}
	if len(seen) != 4 || f.XLabel != "partitions.theta" {
		t.Fatalf("series %v, x label %q", seen, f.XLabel)
	}
	for _, c := range []struct{ file, want string }{
		{"workload: ycsb-c\nfields:\n  partitions.thta: [1, 2]\n", `"partitions.thta" is not a field of partitions`},
		{"workload: ycsb-c\nfields:\n  partitions.theta: [0.5, 20]\n", "theta 20 is out of range"},
		{"fields:\n  partitions.theta: [0.5, 0.9]\nvms: [1, 2]\n", "name the workload"},
		{"workload: ycsb-c\nfields:\n  threads: [1, 2]\n", "sweep it as the sweep's own threads list"},
	} {
		d, err := ParseSweepFile([]byte(c.file))
		if err == nil {
			if d.Workload != "" {
				d.WorkloadFile = p.File
			}
			_, err = d.Figure()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.file, err, c.want)
		}
	}
}
