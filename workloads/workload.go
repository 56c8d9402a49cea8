package workloads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/yamldoc"

	"github.com/tablebench/tablebench/workloads/vm"
)

// Workload is a workload file: a user's own load on the Table model, as
// `tablebench run --workload` reads it (YAML or JSON). Fields left out take
// the default spec's values; Spec turns it into the spec a run runs.
// docs/workloads.md describes every field.
type Workload struct {
	Name       string             `yaml:"name,omitempty" json:"name,omitempty"`
	Mix        map[string]float64 `yaml:"mix,omitempty" json:"mix,omitempty"`
	BatchSize  int                `yaml:"batch_size,omitempty" json:"batch_size,omitempty"`
	Partitions *PartitionsDef     `yaml:"partitions,omitempty" json:"partitions,omitempty"`
	Rows       *RowsDef           `yaml:"rows,omitempty" json:"rows,omitempty"`
	Entity     *EntityDef         `yaml:"entity,omitempty" json:"entity,omitempty"`
	Load       string             `yaml:"load,omitempty" json:"load,omitempty"`
	Rate       float64            `yaml:"rate,omitempty" json:"rate,omitempty"`
	Stages     []StageDef         `yaml:"stages,omitempty" json:"stages,omitempty"`
	Overload   string             `yaml:"overload,omitempty" json:"overload,omitempty"`
	VMs        int                `yaml:"vms,omitempty" json:"vms,omitempty"`
	Threads    int                `yaml:"threads,omitempty" json:"threads,omitempty"`
	VMSize     string             `yaml:"vm_size,omitempty" json:"vm_size,omitempty"`
	Duration   string             `yaml:"duration,omitempty" json:"duration,omitempty"`
	Warmup     string             `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Retry      string             `yaml:"retry,omitempty" json:"retry,omitempty"`
}

// PartitionsDef is a workload's PartitionKeys: their scheme and, for the
// fixed scheme, how many there are, how operations pick them and how they
// are spelt.
type PartitionsDef struct {
	Scheme   string `yaml:"scheme,omitempty" json:"scheme,omitempty"`
	Count    int    `yaml:"count,omitempty" json:"count,omitempty"`
	DistDef  `yaml:",inline"`
	Names    string `yaml:"names,omitempty" json:"names,omitempty"`
	Buckets  int    `yaml:"buckets,omitempty" json:"buckets,omitempty"`
	BucketAt string `yaml:"bucket_at,omitempty" json:"bucket_at,omitempty"`
}

// DistDef is how operations pick among keys or rows: a distribution and
// its parameters, as partitions and rows both give them.
type DistDef struct {
	Distribution string  `yaml:"distribution,omitempty" json:"distribution,omitempty"`
	Theta        float64 `yaml:"theta,omitempty" json:"theta,omitempty"`
	HotData      float64 `yaml:"hot_data,omitempty" json:"hot_data,omitempty"`
	HotOps       float64 `yaml:"hot_ops,omitempty" json:"hot_ops,omitempty"`
}

// given reports whether any of the distribution's fields is set.
func (d DistDef) given() bool { return d != DistDef{} }

// pick is the distribution as a spec holds it: uniform where unnamed, and
// zipfian and latest at YCSB's skew where no theta is given.
func (d DistDef) pick() Pick {
	p := Pick{Distribution: DistributionName(d.Distribution), Theta: d.Theta, HotData: d.HotData, HotOps: d.HotOps}
	if p.Distribution == "" {
		p.Distribution = DistUniform
	}
	if (p.Distribution == DistZipfian || p.Distribution == DistLatest) && p.Theta == 0 {
		p.Theta = DefaultTheta
	}
	return p
}

// RowsDef is a workload's rows: how many each partition (or thread) holds
// before the run, and how reads and updates pick among those that exist.
type RowsDef struct {
	Count   int `yaml:"count,omitempty" json:"count,omitempty"`
	DistDef `yaml:",inline"`
}

// EntityDef is the entities a workload writes.
type EntityDef struct {
	Size       SizeDef `yaml:"size,omitempty" json:"size,omitzero"`
	Properties int     `yaml:"properties,omitempty" json:"properties,omitempty"` // how many: P01, P02, ...
	Types      Words   `yaml:"types,omitempty" json:"types,omitempty"`           // their EDM types, in turn
}

// SizeDef is an entity size in bytes: one, or a range {min, max} that
// sizes are drawn from uniformly.
type SizeDef struct{ Min, Max int }

// IsZero reports whether the size is left out.
func (d SizeDef) IsZero() bool { return d.Min == 0 && d.Max == 0 }

// MarshalYAML writes one size as a number, a range as {min, max}.
func (d SizeDef) MarshalYAML() (any, error) {
	if d.Max == 0 || d.Max == d.Min {
		return d.Min, nil
	}
	return map[string]int{"min": d.Min, "max": d.Max}, nil
}

// MarshalJSON writes one size as a number, a range as {min, max}.
func (d SizeDef) MarshalJSON() ([]byte, error) {
	v, _ := d.MarshalYAML()
	return json.Marshal(v)
}

// UnmarshalYAML reads a number or {min, max}.
func (d *SizeDef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&d.Min)
	}
	var r struct{ Min, Max int }
	if err := n.Decode(&r); err != nil {
		return err
	}
	d.Min, d.Max = r.Min, r.Max
	return nil
}

// StageDef is a stage of an open load in a workload file.
type StageDef struct {
	For  string  `yaml:"for" json:"for"`
	Rate float64 `yaml:"rate" json:"rate"`
}

// kind is what a workload file's field holds, checked where it stands so
// that an error names its line.
type kind int

const (
	kText kind = iota
	kWhole
	kNumber
	kDuration
	kMap
	kMix
	kStages
	kSize
	kWords
)

// field is a workload file's field: what it holds and, for a map, its
// fields.
type field struct {
	kind   kind
	fields map[string]field
	// zeroOK: an explicit 0 means what it says. Elsewhere a number's zero
	// is the field left out, which would take the default without a word,
	// so a 0 written in the file is refused.
	zeroOK bool
}

var pickFields = map[string]field{
	"distribution": {kind: kText}, "theta": {kind: kNumber}, "hot_data": {kind: kNumber}, "hot_ops": {kind: kNumber},
}

// workloadFields are the fields a workload file may hold: the only list,
// which parsing, errors and the docs' test read.
var workloadFields = map[string]field{
	"name": {kind: kText},
	"mix":  {kind: kMix}, "batch_size": {kind: kWhole},
	"partitions": {kind: kMap, fields: merged(pickFields, map[string]field{
		"scheme": {kind: kText}, "count": {kind: kWhole}, "names": {kind: kText}, "buckets": {kind: kWhole}, "bucket_at": {kind: kText},
	})},
	"rows":     {kind: kMap, fields: merged(pickFields, map[string]field{"count": {kind: kWhole}})},
	"entity":   {kind: kMap, fields: map[string]field{"size": {kind: kSize}, "properties": {kind: kWhole}, "types": {kind: kWords}}},
	"load":     {kind: kText},
	"rate":     {kind: kNumber, zeroOK: true},
	"stages":   {kind: kStages},
	"overload": {kind: kText},
	"vms":      {kind: kWhole}, "threads": {kind: kWhole}, "vm_size": {kind: kText},
	"duration": {kind: kDuration}, "warmup": {kind: kDuration},
	"retry": {kind: kText},
}

var stageFields = map[string]field{"for": {kind: kDuration}, "rate": {kind: kNumber}}

func merged(a, b map[string]field) map[string]field {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// WorkloadFields lists the workload file's fields, nested ones as
// "partitions.theta", sorted.
func WorkloadFields() []string {
	var out []string
	var walk func(prefix string, fs map[string]field)
	walk = func(prefix string, fs map[string]field) {
		for name, f := range fs {
			out = append(out, prefix+name)
			if f.kind == kMap {
				walk(prefix+name+".", f.fields)
			}
		}
	}
	walk("", workloadFields)
	slices.Sort(out)
	return out
}

// ParsedWorkload is a workload file as read: the workload, and where each
// of its fields stands, for errors that name a line.
type ParsedWorkload struct {
	Workload
	root *yaml.Node
}

// ParseWorkload reads a workload file in YAML or JSON. Every error is one
// line that names the field and its line in the file: a syntax error, an
// unknown field (a misspelt one is never ignored), a value of the wrong
// kind, and, through Spec, a value out of range.
func ParseWorkload(data []byte) (*ParsedWorkload, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("the workload file is empty: give at least a mix, such as mix: {get: 95, update: 5}")
	}
	if trimmed[0] == '{' {
		var probe map[string]any
		if err := json.Unmarshal(trimmed, &probe); err != nil {
			return nil, fmt.Errorf("the workload file is not valid JSON: %v", err)
		}
	}
	var doc yaml.Node
	if err := yamldoc.One(data, &doc); err != nil {
		return nil, fmt.Errorf("the workload file is not valid YAML: %w", yamlError(data, err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("workload file, line %d: a workload is a map of fields, such as mix: {get: 95, update: 5}", root.Line)
	}
	if err := checkFields("", root, workloadFields); err != nil {
		return nil, err
	}
	p := &ParsedWorkload{root: root}
	if err := root.Decode(&p.Workload); err != nil {
		return nil, fmt.Errorf("workload file: %s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "), "\n", "; "))
	}
	return p, nil
}

// checkFields checks a map's fields against what they may hold.
func checkFields(prefix string, n *yaml.Node, fields map[string]field) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("workload file, line %d: %q is not a field of %s; use %s", k.Line, prefix+k.Value, where(prefix), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if err := checkValue(prefix+k.Value, v, f); err != nil {
			return err
		}
	}
	return nil
}

// where names the map a field belongs to.
func where(prefix string) string {
	if prefix == "" {
		return "a workload"
	}
	return strings.TrimSuffix(prefix, ".")
}

// checkValue checks that a field's value is of its kind.
func checkValue(name string, v *yaml.Node, f field) error {
	line := func(format string, args ...any) error {
		return fmt.Errorf("workload file, line %d: %s: %s", v.Line, name, fmt.Sprintf(format, args...))
	}
	scalar := v.Kind == yaml.ScalarNode
	switch f.kind {
	case kText:
		if !scalar {
			return line("takes one word, such as %s", example(name))
		}
	case kWhole:
		if !scalar || v.Tag != "!!int" {
			return line("%s is not a whole number", show(v))
		}
		return checkZero(v, f, line)
	case kNumber:
		if !scalar || (v.Tag != "!!int" && v.Tag != "!!float") {
			return line("%s is not a number", show(v))
		}
		return checkZero(v, f, line)
	case kDuration:
		if !scalar {
			return line("takes a duration such as 60s or 10m")
		}
		if _, err := time.ParseDuration(v.Value); err != nil {
			return line("%q is not a duration: use a number and a unit, such as 60s or 10m", v.Value)
		}
	case kMap:
		if v.Kind != yaml.MappingNode {
			return line("takes a map of fields: %s", strings.Join(slices.Sorted(maps.Keys(f.fields)), ", "))
		}
		return checkFields(name+".", v, f.fields)
	case kMix:
		if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
			return line("takes operations and their weights, such as {get: 95, update: 5}")
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			op, w := v.Content[i], v.Content[i+1]
			if err := Ops().Check(OpKind(op.Value)); err != nil {
				return fmt.Errorf("workload file, line %d: mix: %v", op.Line, err)
			}
			if w.Kind != yaml.ScalarNode || (w.Tag != "!!int" && w.Tag != "!!float") {
				return fmt.Errorf("workload file, line %d: mix.%s: %s is not a weight: use a number", w.Line, op.Value, show(w))
			}
		}
	case kStages:
		if v.Kind != yaml.SequenceNode {
			return line("takes a list of stages, such as [{for: 2m, rate: 500}, {for: 5m, rate: 8000}]")
		}
		for i, st := range v.Content {
			sname := fmt.Sprintf("%s[%d]", name, i)
			if st.Kind != yaml.MappingNode {
				return fmt.Errorf("workload file, line %d: %s: a stage is {for: DURATION, rate: REQUESTS/S}", st.Line, sname)
			}
			if err := checkFields(sname+".", st, stageFields); err != nil {
				return err
			}
		}
	case kWords:
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			if it.Kind != yaml.ScalarNode {
				return line("takes a word or a list of them, such as [string, int64, datetime]")
			}
		}
	case kSize:
		if scalar {
			return checkValue(name, v, field{kind: kWhole})
		}
		if v.Kind != yaml.MappingNode {
			return line("takes bytes, such as 1024, or a range such as {min: 200, max: 4000}")
		}
		return checkFields(name+".", v, map[string]field{"min": {kind: kWhole}, "max": {kind: kWhole}})
	}
	return nil
}

// checkZero refuses an explicit 0 in a field whose zero stands for the
// field left out (see field.zeroOK).
func checkZero(v *yaml.Node, f field, line func(format string, args ...any) error) error {
	var x float64
	if f.zeroOK || v.Decode(&x) != nil || x != 0 {
		return nil
	}
	return line("%s is out of range: give a value above 0, or leave the field out for its default", v.Value)
}

// show quotes a node's value for an error.
func show(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return "a " + map[yaml.Kind]string{yaml.MappingNode: "map", yaml.SequenceNode: "list"}[n.Kind]
}

// example is a value a text field takes, for an error.
func example(name string) string {
	switch name {
	case "load":
		return string(LoadOpen)
	case "partitions.scheme":
		return string(PartitionFixed)
	case "overload":
		return string(OverloadDrop)
	}
	return "a name"
}

// line returns the line of the field at path ("partitions.theta",
// "stages.1.for"), or of the nearest enclosing field the file gives.
func (p *ParsedWorkload) line(path string) int {
	n := p.root
	best := 0
	for _, part := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					best, next = n.Content[i].Line, n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				best = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return best
}

// fileField is where a workload file gives a spec's field.
func fileField(specField string) string {
	for _, r := range []struct{ spec, file string }{
		{"op", "mix"}, {"partition", "partitions.scheme"}, {"keys.pick.", "partitions."}, {"keys.count", "partitions.count"},
		{"keys.names", "partitions.names"}, {"keys.buckets", "partitions.buckets"}, {"keys.bucket_at", "partitions.bucket_at"},
		{"keys", "partitions"}, {"entity_size", "entity.size"}, {"entity_max", "entity.size"}, {"preload", "rows.count"},
		{"entity_properties", "entity.properties"}, {"entity_types", "entity.types"},
	} {
		if specField == r.spec || strings.HasPrefix(specField, r.spec) && strings.HasSuffix(r.spec, ".") {
			return r.file + strings.TrimPrefix(specField, r.spec)
		}
	}
	return specField
}

// Spec returns the spec the workload runs: base (the default spec, or one
// with the command line's settings) with the workload's fields. Its error
// names the field at fault and its line in the file.
func (p *ParsedWorkload) Spec(base Spec) (Spec, error) {
	s, err := p.Workload.Spec(base)
	if err == nil {
		err = s.Validate()
	}
	if err == nil {
		return s, nil
	}
	return s, p.Located(err)
}

// Located restates err's first field error, from the workload's spec, with
// the field's name in the file and its line.
func (p *ParsedWorkload) Located(err error) error {
	fes := FieldErrors(err)
	if len(fes) == 0 {
		return fmt.Errorf("workload file: %v", err)
	}
	fe := fes[0]
	name := fileField(fe.Field)
	display := strings.NewReplacer(".0.", "[0].", ".1.", "[1].", ".2.", "[2].").Replace(name)
	if l := p.line(name); l > 0 {
		return fmt.Errorf("workload file, line %d: %s: %v", l, display, fe.Err)
	}
	return fmt.Errorf("workload file: %s: %v", display, fe.Err)
}

// Spec returns the spec the workload runs, base with the workload's fields;
// it does not validate the result (Validate does), but refuses a value
// that cannot be read, such as a duration.
func (w *Workload) Spec(base Spec) (Spec, error) {
	s := base
	s.Workload = w.Name
	if len(w.Mix) > 0 {
		s.Mix = nil
		for _, op := range sortedOps(w.Mix) {
			s.Mix = append(s.Mix, MixOp{Op: op, Weight: w.Mix[string(op)]})
		}
		s.Op = s.Mix[0].Op
		for _, m := range s.Mix { // the record's op: the heaviest
			if m.Weight > w.Mix[string(s.Op)] {
				s.Op = m.Op
			}
		}
		if len(s.Mix) == 1 {
			s.Mix = nil // one operation is that operation alone
		}
	}
	if w.BatchSize != 0 {
		s.BatchSize = w.BatchSize
	}
	if p := w.Partitions; p != nil {
		if p.Scheme != "" {
			s.Partition = PartitionScheme(p.Scheme)
		} else if p.Count != 0 {
			s.Partition = PartitionFixed
		}
		if s.Partition == PartitionFixed {
			s.Keys = KeySpace{Count: p.Count, Pick: p.pick(),
				Names: NameStyle(p.Names), Buckets: p.Buckets, BucketAt: BucketPlace(p.BucketAt)}
			if s.Keys.Names == "" {
				s.Keys.Names = NamesRandom
			}
			if s.Keys.Buckets == 0 {
				s.Keys.Buckets = 1
			}
			if s.Keys.BucketAt == "" {
				s.Keys.BucketAt = BucketPrefix
			}
			if base.Preload == DefaultSpec().Preload {
				s.Preload = DefaultFixedRows
			}
		} else if p.Count != 0 || p.DistDef.given() || p.Names != "" || p.Buckets != 0 || p.BucketAt != "" {
			s.Keys = KeySpace{Count: p.Count, Names: NameStyle(p.Names), Buckets: p.Buckets, BucketAt: BucketPlace(p.BucketAt)}
			if p.DistDef.given() { // refused: the scheme picks no key
				s.Keys.Pick = p.pick()
			}
			if s.Keys.Buckets > 1 && s.Keys.BucketAt == "" {
				s.Keys.BucketAt = BucketPrefix
			}
		}
	}
	if r := w.Rows; r != nil {
		if r.Count != 0 {
			s.Preload = r.Count
		}
		if r.DistDef.given() {
			s.Rows = r.pick()
		}
	}
	if e := w.Entity; e != nil && !e.Size.IsZero() {
		s.EntitySize, s.EntityMax = e.Size.Min, 0
		if e.Size.Max != e.Size.Min {
			s.EntityMax = e.Size.Max
		}
	}
	if e := w.Entity; e != nil {
		s.EntityProps, s.EntityTypes = e.Properties, e.Types
	}
	if w.Rate != 0 {
		s.Rate = w.Rate
	}
	s.Stages = nil
	for i, st := range w.Stages {
		if st.For == "" { // Validate names the stage without a duration
			s.Stages = append(s.Stages, Stage{Rate: st.Rate})
			continue
		}
		d, err := parseDur(st.For)
		if err != nil {
			return s, &FieldError{fmt.Sprintf("stages.%d.for", i), err}
		}
		s.Stages = append(s.Stages, Stage{For: d, Rate: st.Rate})
	}
	switch {
	case w.Load != "":
		s.Load = LoadMode(w.Load)
	case w.Rate > 0 || len(w.Stages) > 0:
		s.Load = LoadOpen
	}
	if len(s.Stages) > 0 && s.Rate == 0 && s.Load == LoadOpen {
		s.Rate = s.Stages[0].Rate
	}
	if w.Overload != "" {
		s.Overload = OverloadMode(w.Overload)
	}
	if w.VMs != 0 {
		s.VMs = w.VMs
	}
	if w.Threads != 0 {
		s.Threads = w.Threads
	}
	if w.VMSize != "" {
		sz, err := vm.ParseSize(w.VMSize)
		if err != nil {
			return s, &FieldError{"vm_size", err}
		}
		s.VMSize = sz
	}
	var err error
	if w.Warmup != "" {
		if s.Warmup, err = parseDur(w.Warmup); err != nil {
			return s, &FieldError{"warmup", err}
		}
	}
	if w.Duration != "" {
		if s.Duration, err = parseDur(w.Duration); err != nil {
			return s, &FieldError{"duration", err}
		}
	} else if len(s.Stages) > 0 { // the stages are the run: warm-up and measured time
		total := time.Duration(0)
		for _, st := range s.Stages {
			total += st.For
		}
		s.Duration = total - s.Warmup
	}
	if w.Retry != "" {
		if s.Retry, err = DefaultRetry(RetryPolicy(w.Retry)); err != nil {
			return s, &FieldError{"retry", err}
		}
	}
	return s, nil
}

// DefaultFixedRows is how many rows each key of a fixed key space holds
// before the run, unless the workload says (rows: {count: N}).
const DefaultFixedRows = 10

// DefaultTheta is the zipfian skew a workload takes unless it gives one:
// YCSB's.
const DefaultTheta = 0.99

func parseDur(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: use a number and a unit, such as 60s or 10m", s)
	}
	return d, nil
}

// sortedOps returns a mix's operations in the order of the operation
// table, whatever order the file gave them in, so that a mix draws the
// same for the same seed from YAML and JSON alike.
func sortedOps(mix map[string]float64) []OpKind {
	var out []OpKind
	for _, op := range Ops().Names() {
		if _, ok := mix[string(op)]; ok {
			out = append(out, op)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mix)) { // unknown ones, for Validate to name
		if Ops().Check(OpKind(name)) != nil {
			out = append(out, OpKind(name))
		}
	}
	return out
}
