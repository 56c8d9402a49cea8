package workloads_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/keyspace"
)

// lists are each vocabulary's names, by the flag and sweep key that take
// them.
func lists() map[string][]string {
	return map[string][]string{
		"op":        strs(workloads.Ops().Names()),
		"partition": strs(workloads.PartitionSchemes().Names()),
		"load":      strs(workloads.LoadModes().Names()),
		"retry":     strs(workloads.RetryPolicies().Names()),
	}
}

func strs[T ~string](v []T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}

// orList is how the README lists values in prose: "a, b or c".
func orList(names []string) string {
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// TestREADMEListsEachVocabulary: wherever the README or the command
// reference (docs/commands.md) lists the values of a flag (--op
// insert|get|...) or of a sweep key (op: batch  # insert, get ... or
// query), it lists exactly the table's, in its order; and between them they
// list every vocabulary's values for its run flag.
func TestREADMEListsEachVocabulary(t *testing.T) {
	var readme []byte
	for _, doc := range []string{"../README.md", "../docs/commands.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(append(readme, b...), '\n')
	}
	flagList := regexp.MustCompile("`--(op|partition|load|retry) ([a-z0-9]+(?:\\|[a-z0-9]+)+)`")
	keyList := regexp.MustCompile(`(?m)^\s*(op|partition|load|retry):\s*\S+\s*# (.*)$`)
	seen := map[string]bool{}
	for key, names := range lists() {
		for _, m := range flagList.FindAllStringSubmatch(string(readme), -1) {
			if m[1] != key {
				continue
			}
			seen[key] = true
			if want := strings.Join(names, "|"); m[2] != want {
				t.Errorf("the README lists --%s %s: the values are %s", key, m[2], want)
			}
		}
		for _, m := range keyList.FindAllStringSubmatch(string(readme), -1) {
			if m[1] == key && m[2] != orList(names) {
				t.Errorf("the README's sweep file lists %s: %s; the values are %s", key, m[2], orList(names))
			}
		}
		if !seen[key] {
			t.Errorf("neither the README nor docs/commands.md lists the values of --%s: give them as `--%s %s`", key, key, strings.Join(names, "|"))
		}
	}
}

// TestUnknownNamesListTheKnownOnes: a spec with a value no vocabulary
// holds is refused with every value there is, the retry policy's all five
// included.
func TestUnknownNamesListTheKnownOnes(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(*workloads.Spec)
		want  string
	}{
		{"op", func(s *workloads.Spec) { s.Op = "fly" }, `op "fly" is not known: use insert, get, batch, upsert, query, update, delete, range or scan`},
		{"partition", func(s *workloads.Spec) { s.Partition = "range" }, `partition scheme "range" is not known: use guid, shared, append, prepend or fixed`},
		{"load", func(s *workloads.Spec) { s.Load = "burst" }, `load mode "burst" is not known: use closed or open`},
		{"retry", func(s *workloads.Spec) { s.Retry.Policy = "often" }, `retry policy "often" is not known: use none, fixed, exponential, sdk or storage2010`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := workloads.DefaultSpec()
			c.spoil(&s)
			err := s.Validate()
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v, want %s", err, c.want)
			}
			if names := lists()[c.name]; !strings.HasSuffix(c.want, orList(names)) {
				t.Fatalf("the table holds %s", orList(names))
			}
		})
	}
	if _, err := workloads.DefaultRetry("often"); err == nil || !strings.HasSuffix(err.Error(), "none, fixed, exponential, sdk or storage2010") {
		t.Fatalf("DefaultRetry: %v", err)
	}
}

// TestEveryRetryPolicyHasDefaults: each policy in the table yields its
// defaults under its own name, and an empty name is the published method.
func TestEveryRetryPolicyHasDefaults(t *testing.T) {
	for _, p := range append(workloads.RetryPolicies().Names(), "") {
		r, err := workloads.DefaultRetry(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if r.Policy != p && !(p == "" && r.Policy == workloads.RetryNone) {
			t.Fatalf("%q: policy %q", p, r.Policy)
		}
		s := workloads.DefaultSpec()
		s.Retry = r
		if err := s.Validate(); err != nil {
			t.Fatalf("%q: %v", p, err)
		}
	}
}

// TestSweepNamesAnUnknownValueOnce: a sweep with an unknown op or
// partition scheme says so once, with the known values, however many runs
// it would have made.
func TestSweepNamesAnUnknownValueOnce(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"op", "op: fly\nvms: [1, 2, 4]\n", `op "fly" is not known: use insert, get, batch, upsert, query, update, delete, range or scan`},
		{"partition", "partition: [guid, range]\nvms: [1, 2]\n", `partition scheme "range" is not known: use guid, shared, append, prepend or fixed`},
		{"retry", "retry: often\nvms: [1, 2]\n", `retry policy "often" is not known: use none, fixed, exponential, sdk or storage2010`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := workloads.ParseSweepFile([]byte(c.file))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Figure(); err == nil || err.Error() != c.want {
				t.Fatalf("got %v, want %s", err, c.want)
			}
		})
	}
}

// TestDistributionsAreTheKeyspaces: the distributions a spec names are
// the ones package keyspace draws, in its order.
func TestDistributionsAreTheKeyspaces(t *testing.T) {
	if got, want := strs(workloads.Distributions().Names()), keyspace.Distributions(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the table has %v, keyspace %v", got, want)
	}
}

// TestWorkloadDocsListEverything: docs/workloads.md describes every field
// a workload file takes, every operation, scheme, distribution and
// overload mode, and every preset, by name.
func TestWorkloadDocsListEverything(t *testing.T) {
	doc, err := os.ReadFile("../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}
	names := workloads.WorkloadFields()
	names = append(names, strs(workloads.Ops().Names())...)
	names = append(names, strs(workloads.PartitionSchemes().Names())...)
	names = append(names, strs(workloads.Distributions().Names())...)
	names = append(names, strs(workloads.OverloadModes().Names())...)
	for _, p := range workloads.Presets() {
		names = append(names, p.Name)
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/workloads.md does not name `%s`", n)
		}
	}
}
