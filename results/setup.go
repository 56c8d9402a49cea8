package results

import (
	"encoding/json"
	"time"
)

// RunSpec is what readers of a record need to know of the spec that made
// it, in fields of this package's own: the coordinator fills it once, so
// that a change in how specs are written cannot change how records read.
type RunSpec struct {
	Op         string        `json:"op"` // get, insert, upsert, batch or query
	BatchSize  int           `json:"batch_size,omitempty"`
	Partition  string        `json:"partition"`
	VMs        int           `json:"vms"`
	Threads    int           `json:"threads"` // per VM
	VMSize     string        `json:"vm_size"` // the VM size's name
	EntitySize int           `json:"entity_size"`
	Warmup     time.Duration `json:"-"`
	Duration   time.Duration `json:"-"`    // measured, after the warm-up
	Load       string        `json:"load"` // closed or open
	Rate       float64       `json:"rate,omitempty"`

	// A workload's fields, which a run of one operation leaves out.

	Workload  string             `json:"workload,omitempty"`  // its name
	Mix       map[string]float64 `json:"mix,omitempty"`       // operation -> weight
	Keys      KeySpace           `json:"keys,omitzero"`       // the fixed scheme's key space
	Rows      Pick               `json:"rows,omitzero"`       // how reads pick among existing rows; absent: in order
	RowsEach  int                `json:"rows_each,omitempty"` // rows each key (fixed) or thread holds before the run
	EntityMax int                `json:"entity_max,omitempty"`
	// EntityProps and EntityTypes are the written entities' properties:
	// how many, and their EDM types in turn; absent, one Payload string.
	EntityProps int      `json:"entity_properties,omitempty"`
	EntityTypes []string `json:"entity_types,omitempty"`
	Stages      []Stage  `json:"stages,omitempty"`
	Overload    string   `json:"overload,omitempty"` // open load: drop or queue
}

// KeySpace is a fixed key space as a record describes it.
type KeySpace struct {
	Count    int    `json:"count"`
	Pick     Pick   `json:"pick"`
	Names    string `json:"names"`
	Buckets  int    `json:"buckets"`
	BucketAt string `json:"bucket_at"`
}

// Pick is a distribution over keys or rows and its parameters.
type Pick struct {
	Distribution string  `json:"distribution"`
	Theta        float64 `json:"theta,omitempty"`
	HotData      float64 `json:"hot_data,omitempty"`
	HotOps       float64 `json:"hot_ops,omitempty"`
}

// Stage is a part of an open load that ramps its rate to Rate over For.
type Stage struct {
	For  time.Duration `json:"-"`
	Rate float64       `json:"rate"`
}

// MarshalJSON writes For as a string such as "2m0s".
func (st Stage) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		For  string  `json:"for"`
		Rate float64 `json:"rate"`
	}{st.For.String(), st.Rate})
}

// UnmarshalJSON reads For as a string such as "2m0s", or nanoseconds.
func (st *Stage) UnmarshalJSON(b []byte) error {
	var v struct {
		For  json.RawMessage `json:"for"`
		Rate float64         `json:"rate"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	st.For, err = jsonDuration(v.For)
	st.Rate = v.Rate
	return err
}

// MultiEntity reports whether each request of the run carries many
// entities (a batch or a query), so that its latency per entity means
// something.
func (s RunSpec) MultiEntity() bool { return s.Op == "batch" || s.Op == "query" }

// OpenLoop reports whether the run's load was open-loop, at a fixed rate.
func (s RunSpec) OpenLoop() bool { return s.Load == "open" }

// runSpecJSON is RunSpec as records hold it: durations as strings such as
// "60s", as specs write them.
type runSpecJSON struct {
	plainRunSpec
	Warmup   string `json:"warmup"`
	Duration string `json:"duration"`
}

type plainRunSpec RunSpec

// MarshalJSON writes durations as strings such as "60s".
func (s RunSpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(runSpecJSON{plainRunSpec(s), s.Warmup.String(), s.Duration.String()})
}

// UnmarshalJSON reads durations written as strings such as "60s", or as
// nanoseconds.
func (s *RunSpec) UnmarshalJSON(b []byte) error {
	var v struct {
		plainRunSpec
		Warmup   json.RawMessage `json:"warmup"`
		Duration json.RawMessage `json:"duration"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = RunSpec(v.plainRunSpec)
	var err error
	if s.Warmup, err = jsonDuration(v.Warmup); err != nil {
		return err
	}
	s.Duration, err = jsonDuration(v.Duration)
	return err
}

// jsonDuration reads a duration written as a string ("60s") or as a number
// of nanoseconds; absent is zero.
func jsonDuration(b json.RawMessage) (time.Duration, error) {
	if len(b) == 0 || string(b) == "null" {
		return 0, nil
	}
	var text string
	if json.Unmarshal(b, &text) == nil {
		return time.ParseDuration(text)
	}
	var ns int64
	if err := json.Unmarshal(b, &ns); err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// UnmarshalJSON reads a run record. A record from before records held
// their Setup has it read, here and only here, from the archived spec,
// whose fields then had the names below.
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.Setup.Op == "" && len(r.Spec) > 0 {
		r.Setup = setupFromArchive(r.Spec)
	}
	return nil
}

// setupFromArchive reads a record's Setup from its archived spec, as
// specs were written before records held their Setup. What it cannot read
// stays zero.
func setupFromArchive(spec json.RawMessage) RunSpec {
	var old struct {
		Op         string  `json:"op"`
		BatchSize  int     `json:"batch_size"`
		Partition  string  `json:"partition"`
		VMs        int     `json:"vms"`
		Threads    int     `json:"threads"`
		EntitySize int     `json:"entity_size"`
		Load       string  `json:"load"`
		Rate       float64 `json:"rate"`
		VMSize     struct {
			Name string `json:"name"`
		} `json:"vm_size"`
		Warmup   json.RawMessage `json:"warmup"`
		Duration json.RawMessage `json:"duration"`
	}
	if json.Unmarshal(spec, &old) != nil {
		return RunSpec{}
	}
	s := RunSpec{Op: old.Op, BatchSize: old.BatchSize, Partition: old.Partition, VMs: old.VMs, Threads: old.Threads,
		VMSize: old.VMSize.Name, EntitySize: old.EntitySize, Load: old.Load, Rate: old.Rate}
	s.Warmup, _ = jsonDuration(old.Warmup)
	s.Duration, _ = jsonDuration(old.Duration)
	return s
}
