package workloads

import (
	"fmt"
	"strings"
)

// Preset is a named workload that ships with tablebench: `run --workload
// NAME` runs it, and `workloads show NAME` prints File, which run
// --workload accepts as a file and which runs the same.
type Preset struct {
	Name    string
	Summary string // one line, for `tablebench workloads`
	File    string // the workload file, YAML
}

// Workload returns the preset's workload.
func (p Preset) Workload() (*ParsedWorkload, error) { return ParseWorkload([]byte(p.File)) }

// ycsb is a YCSB core workload on the Table model: YCSB's records are the
// rows of 1,000 PartitionKeys, ten each, picked by YCSB's request
// distribution, from one client of 16 threads on a modern 8-core VM (on
// the engine, a client that is not the 2010 VM's bottleneck).
func ycsb(name, summary, body string) Preset {
	return Preset{Name: name, Summary: summary, File: "name: " + name + "\n" + body + `partitions:
  scheme: fixed
  count: 1000
  distribution: zipfian
  theta: 0.99
rows: {count: 10, distribution: uniform}
entity: {size: 1024}
vms: 1
threads: 16
vm_size: cores:8,serial:0
duration: 60s
warmup: 10s
`}
}

// casestudy is one of the case study's loads: its method (one XL VM, 1 KB
// entities, 60 s after 10 s of warm-up, no retries) with an operation and
// a partition scheme.
func casestudy(name, summary, body string) Preset {
	return Preset{Name: name, Summary: summary, File: "name: " + name + "\n" + body + `entity: {size: 1024}
vms: 1
threads: 1
vm_size: xl
duration: 60s
warmup: 10s
retry: none
`}
}

// Presets returns the workloads tablebench ships, in the order it lists
// them: YCSB's core workloads A to F mapped onto Table operations, then the
// case study's loads.
func Presets() []Preset {
	return []Preset{
		ycsb("ycsb-a", "YCSB A, update heavy: 50% point reads, 50% blind updates (insert-or-merge of an existing row), zipfian",
			"mix: {get: 50, upsert: 50}\n"),
		ycsb("ycsb-b", "YCSB B, read mostly: 95% point reads, 5% blind updates, zipfian",
			"mix: {get: 95, upsert: 5}\n"),
		ycsb("ycsb-c", "YCSB C, read only: point reads, zipfian",
			"mix: {get: 100}\n"),
		{Name: "ycsb-d", Summary: "YCSB D, read latest: 95% point reads of each partition's newest rows, 5% inserts", File: `name: ycsb-d
mix: {get: 95, insert: 5}
partitions:
  scheme: fixed
  count: 1000
  distribution: uniform
rows: {count: 10, distribution: latest, theta: 0.99}
entity: {size: 1024}
vms: 1
threads: 16
vm_size: cores:8,serial:0
duration: 60s
warmup: 10s
`},
		ycsb("ycsb-e", "YCSB E, short ranges: 95% RowKey ranges of 1 to 100 rows within a partition, 5% inserts, zipfian",
			"mix: {range: 95, insert: 5}\nbatch_size: 100\n"),
		ycsb("ycsb-f", "YCSB F, read-modify-write: 50% point reads, 50% reads then If-Match merges, zipfian",
			"mix: {get: 50, update: 50}\n"),
		casestudy("case-insert", "the case study's single inserts into each thread's GUID partition",
			"mix: {insert: 100}\npartitions: {scheme: guid}\n"),
		casestudy("case-batch", "the case study's batches of 100 inserts into each thread's GUID partition",
			"mix: {batch: 100}\nbatch_size: 100\npartitions: {scheme: guid}\n"),
		casestudy("case-shared", "the case study's single inserts of every thread into one shared partition",
			"mix: {insert: 100}\npartitions: {scheme: shared}\n"),
		casestudy("case-get", "the case study's point gets of 200 entities each thread loaded first",
			"mix: {get: 100}\npartitions: {scheme: guid}\nrows: {count: 200}\n"),
		casestudy("case-query", "the case study's pages of 100 entities of each thread's partition",
			"mix: {query: 100}\nbatch_size: 100\npartitions: {scheme: guid}\nrows: {count: 200}\n"),
	}
}

// LookupPreset returns the preset of the given name, or an error that
// names them all.
func LookupPreset(name string) (Preset, error) {
	var names []string
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("workload %q is neither a file nor a preset: give a workload file, - for standard input, or one of %s", name, strings.Join(names, ", "))
}
