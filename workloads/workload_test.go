package workloads

import (
	"strings"
	"testing"
)

// TestWorkloadFileBadInput: every kind of mistake in a workload file is
// refused with one line that names the field and the line it is on.
func TestWorkloadFileBadInput(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"unknown operation", "name: x\nmix: {get: 50, fly: 50}\n", `line 2: mix: op "fly" is not known: use insert, get, batch, upsert, query, update, delete, range or scan`},
		{"unknown field", "mix: {get: 1}\npartitons: {count: 5}\n", `line 2: "partitons" is not a field of a workload; use batch_size, duration,`},
		{"unknown nested field", "mix: {get: 1}\npartitions:\n  count: 5\n  thta: 0.5\n", `line 4: "partitions.thta" is not a field of partitions; use bucket_at, buckets, count,`},
		{"negative weight", "mix:\n  get: 50\n  upsert: -5\n", "line 3: mix.upsert: mix: upsert has weight -5: weights are 0 or more"},
		{"weights sum to zero", "mix: {get: 0, upsert: 0}\n", "line 1: mix: mix: the weights sum to 0"},
		{"theta out of range", "mix: {get: 1}\npartitions:\n  count: 50\n  distribution: zipfian\n  theta: 20\n", "line 5: partitions.theta: theta 20 is out of range"},
		{"theta of a uniform pick", "mix: {get: 1}\npartitions: {count: 50, theta: 0.5}\n", "line 2: partitions.theta: theta goes with the zipfian and latest distributions, not uniform"},
		{"hot share of one", "mix: {get: 1}\npartitions:\n  count: 50\n  distribution: hotspot\n  hot_data: 1\n  hot_ops: 0.8\n", "line 5: partitions.hot_data: hot_data 1 is out of range"},
		{"hot ops of zero", "mix: {get: 1}\npartitions:\n  count: 50\n  distribution: hotspot\n  hot_data: 0.2\n", "line 2: partitions.hot_ops: hot_ops 0 is out of range"},
		{"unknown distribution", "mix: {get: 1}\nrows: {distribution: gaussian}\n", `line 2: rows.distribution: distribution "gaussian" is not known: use uniform, zipfian, hotspot, latest or sequential`},
		{"stage without a duration", "mix: {insert: 1}\nrate: 100\nstages:\n  - {for: 1m, rate: 500}\n  - {rate: 800}\n", "line 5: stages[1].for: stage 2 has no duration"},
		{"stage with a bad duration", "mix: {insert: 1}\nstages: [{for: soon, rate: 5}]\n", `line 2: stages[0].for: "soon" is not a duration`},
		{"a rate that is not a number", "mix: {insert: 1}\nrate: .nan\n", "line 2: rate: rate NaN is not valid"},
		{"a rate of a terahertz", "mix: {insert: 1}\nrate: 1e12\n", "line 2: rate: rate 1e+12 is too high: use at most 1e+06 requests per second"},
		{"an infinite rate", "mix: {insert: 1}\nrate: .inf\n", "line 2: rate: rate +Inf is too high"},
		{"a stage's rate that is not a number", "mix: {insert: 1}\nstages:\n  - {for: 1m, rate: 5}\n  - {for: 1m, rate: .nan}\n", "line 4: stages[1].rate: stage 2's rate NaN is not valid"},
		{"a stage's rate too high", "mix: {insert: 1}\nrate: 5\nstages: [{for: 1m, rate: 1e12}]\n", "line 3: stages[0].rate: stage 1's rate 1e+12 is too high"},
		{"stages with closed load", "mix: {insert: 1}\nload: closed\nstages: [{for: 1m, rate: 5}]\n", "line 3: stages: stages ramp an open load's rate"},
		{"batch over buckets", "mix: {batch: 1, get: 1}\npartitions:\n  count: 10\n  buckets: 4\n", "line 4: partitions.buckets: batch with 4 buckets: a batch's entities share one partition"},
		{"fixed without a count", "mix: {get: 1}\npartitions:\n  scheme: fixed\n", "line 2: partitions.count: the fixed scheme needs a count of keys"},
		{"a count without the fixed scheme", "mix: {get: 1}\npartitions: {scheme: guid, count: 9}\n", "line 2: partitions: partition scheme guid has no key space"},
		{"a word for a number", "mix: {get: 1}\nthreads: many\n", `line 2: threads: "many" is not a whole number`},
		{"a fraction of a thread", "mix: {get: 1}\nthreads: 2.5\n", `line 2: threads: "2.5" is not a whole number`},
		{"a bad duration", "mix: {get: 1}\nduration: 10 minutes\n", `line 2: duration: "10 minutes" is not a duration`},
		{"a size range upside down", "mix: {insert: 1}\nentity:\n  size: {min: 4000, max: 200}\n", "line 3: entity.size: entity size range 4000 to 200 is not valid"},
		{"unknown load", "mix: {insert: 1}\nload: burst\n", `line 2: load: load mode "burst" is not known: use closed or open`},
		{"unknown overload", "mix: {insert: 1}\nrate: 5\noverload: wait\n", `line 3: overload: overload mode "wait" is not known: use drop or queue`},
		{"too many threads", "mix: {insert: 1}\nvms: 1\nthreads: 5000\n", "line 3: threads: 5000 threads per VM is out of range"},
		{"syntax", "mix: {get: 1\nthreads: 2\n", "not valid YAML: line "},
		{"a second document", "mix: {get: 1}\n---\nmix: {insert: 1}\n", "line 2: a second YAML document: a file holds one"},
		{"an empty mix", "mix: {}\nthreads: 2\n", "line 1: mix: takes operations and their weights"},
		{"zero threads", "mix: {get: 1}\nthreads: 0\n", "line 2: threads: 0 is out of range: give a value above 0, or leave the field out"},
		{"a batch of zero", "mix: {batch: 1}\nbatch_size: 0\n", "line 2: batch_size: 0 is out of range"},
		{"zero keys", "mix: {get: 1}\npartitions: {count: 0}\n", "line 2: partitions.count: 0 is out of range"},
		{"a theta of zero", "mix: {get: 1}\npartitions: {count: 5, distribution: zipfian, theta: 0.0}\n", "line 2: partitions.theta: 0.0 is out of range"},
		{"not a map", "- get\n- put\n", "line 1: a workload is a map of fields"},
		{"bad JSON", `{"mix": {"get": 1},}`, "not valid JSON"},
		{"JSON unknown field", "{\n  \"mix\": {\"get\": 1},\n  \"vsm\": 2\n}\n", `line 3: "vsm" is not a field of a workload`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseWorkload([]byte(c.file))
			if err == nil {
				_, err = p.Spec(DefaultSpec())
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v\nwant one line with %q", err, c.want)
			}
		})
	}
}

// TestWorkloadFileToSpec: a workload file's fields land in the spec, a mix
// in the operation table's order whatever the file's, and a single
// operation is that operation alone, as the case study runs it.
func TestWorkloadFileToSpec(t *testing.T) {
	p, err := ParseWorkload([]byte(`name: orders
mix: {upsert: 25, get: 70, query: 5}
partitions:
  scheme: fixed
  count: 5000
  distribution: zipfian
  theta: 0.9
  names: sequential
  buckets: 4
  bucket_at: suffix
rows: {count: 3, distribution: latest}
entity: {size: {min: 300, max: 4000}}
load: open
stages: [{for: 2m, rate: 500}, {for: 5m, rate: 8000}]
vms: 4
threads: 25
warmup: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Spec(DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Mix) != 3 || s.Mix[0] != (MixOp{OpGet, 70}) || s.Mix[1] != (MixOp{OpUpsert, 25}) || s.Mix[2] != (MixOp{OpQuery, 5}) || s.Op != OpGet {
		t.Fatalf("mix %+v, op %s", s.Mix, s.Op)
	}
	want := KeySpace{Count: 5000, Pick: Pick{Distribution: DistZipfian, Theta: 0.9}, Names: NamesSequential, Buckets: 4, BucketAt: BucketSuffix}
	if s.Partition != PartitionFixed || s.Keys != want {
		t.Fatalf("keys %+v", s.Keys)
	}
	if s.Rows != (Pick{Distribution: DistLatest, Theta: DefaultTheta}) || s.Preload != 3 {
		t.Fatalf("rows %+v, preload %d", s.Rows, s.Preload)
	}
	if s.EntitySize != 300 || s.EntityMax != 4000 || s.Load != LoadOpen || s.Rate != 500 || len(s.Stages) != 2 {
		t.Fatalf("entity %d-%d, load %s at %g, stages %v", s.EntitySize, s.EntityMax, s.Load, s.Rate, s.Stages)
	}
	if s.Duration != 6*60e9 || s.Warmup != 60e9 { // the stages' 7 minutes, the first of them warm-up
		t.Fatalf("duration %v after %v", s.Duration, s.Warmup)
	}
	one, err := ParseWorkload([]byte("mix: {insert: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err = one.Spec(DefaultSpec())
	if err != nil || len(s.Mix) != 0 || s.Op != OpInsert {
		t.Fatalf("one operation: mix %v, op %s, %v", s.Mix, s.Op, err)
	}
}

// TestPresetsParse: every preset is a valid workload file.
func TestPresetsParse(t *testing.T) {
	for _, p := range Presets() {
		w, err := p.Workload()
		if err == nil {
			_, err = w.Spec(DefaultSpec())
		}
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}
