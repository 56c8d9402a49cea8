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
