package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/yamldoc"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads/vm"
)

// SweepDef is a figure of the user's own: every listed parameter is swept,
// one is the x axis and the others make one series per combination.
type SweepDef struct {
	Name        string    `json:"name,omitempty" yaml:"name"`
	Title       string    `json:"title,omitempty" yaml:"title"`
	X           string    `json:"x,omitempty" yaml:"x"` // vms, threads, batch-size, entity-size or rate
	Y           string    `json:"y,omitempty" yaml:"y"` // a metric a sweep may plot (results.Metrics), entities-per-sec by default
	Ops         []string  `json:"op,omitempty" yaml:"op"`
	BatchSizes  []int     `json:"batch_size,omitempty" yaml:"batch_size"`
	Partitions  []string  `json:"partition,omitempty" yaml:"partition"`
	VMs         []int     `json:"vms,omitempty" yaml:"vms"`
	Threads     []int     `json:"threads,omitempty" yaml:"threads"`
	VMSizes     []string  `json:"vm_size,omitempty" yaml:"vm_size"`
	EntitySizes []int     `json:"entity_size,omitempty" yaml:"entity_size"`
	Rates       []float64 `json:"rate,omitempty" yaml:"rate"`
	Retry       string    `json:"retry,omitempty" yaml:"retry"`
	Duration    string    `json:"duration,omitempty" yaml:"duration"`
	Warmup      string    `json:"warmup,omitempty" yaml:"warmup"`
	// Workload is a workload every run starts from: a preset's name or a
	// file's path. Its text is kept in WorkloadFile once read, so that a
	// stored sweep rebuilds without the file.
	Workload     string `json:"workload,omitempty" yaml:"workload"`
	WorkloadFile string `json:"workload_file,omitempty" yaml:"-"`
	// Fields sweep the workload's fields, by their names in a workload
	// file ("partitions.theta"): each run has one value of each.
	Fields map[string][]any `json:"fields,omitempty" yaml:"fields"`
}

// SweepFigureID is the figure number of a sweep; catalog figures are 3-15.
const SweepFigureID = 100

// sweepKeys are the keys a sweep file may hold; list keys take one value or
// a list of them.
var (
	sweepScalars = []string{"name", "title", "x", "y", "retry", "duration", "warmup", "workload"}
	sweepLists   = []string{"op", "batch_size", "partition", "vms", "threads", "vm_size", "entity_size", "rate"}
)

// ParseSweepFile reads a sweep definition in YAML or JSON. Unknown keys are
// errors that name the key and the keys allowed, so a misspelt parameter is
// never silently ignored; a single value where a list goes is a list of
// one, as on the command line.
func ParseSweepFile(data []byte) (SweepDef, error) {
	var d SweepDef
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return d, fmt.Errorf("the sweep file is empty: give at least one list, such as vms: [1, 2, 4]")
	}
	if trimmed[0] == '{' {
		var probe map[string]any
		if err := json.Unmarshal(trimmed, &probe); err != nil {
			return d, fmt.Errorf("the sweep file is not valid JSON: %v", err)
		}
	}
	var doc map[string]yaml.Node
	if err := yamldoc.One(data, &doc); err != nil { // the whole file, so lines are the file's
		return d, fmt.Errorf("the sweep file is not valid YAML: %w", yamlError(data, err))
	}
	allowed := strings.Join(append(append([]string{}, sweepScalars...), append(sweepLists, "fields")...), ", ")
	norm := map[string]any{}
	for k, n := range doc {
		switch {
		case k == "fields":
			fields, err := sweepFields(&n)
			if err != nil {
				return d, err
			}
			norm[k] = fields
		case slices.Contains(sweepScalars, k):
			var v string
			if err := n.Decode(&v); err != nil {
				return d, fmt.Errorf("sweep file, line %d: %s takes one value", n.Line, k)
			}
			norm[k] = v
		case slices.Contains(sweepLists, k):
			if err := checkListNode(k, &n); err != nil {
				return d, err
			}
			var v []any
			if n.Kind == yaml.SequenceNode {
				if err := n.Decode(&v); err != nil {
					return d, fmt.Errorf("sweep file, line %d: %s: %v", n.Line, k, err)
				}
			} else {
				var one any
				if err := n.Decode(&one); err != nil {
					return d, fmt.Errorf("sweep file, line %d: %s: %v", n.Line, k, err)
				}
				v = []any{one}
			}
			norm[k] = v
		default:
			return d, fmt.Errorf("sweep file, line %d: %q is not a sweep key; use %s", n.Line, k, allowed)
		}
	}
	b, err := json.Marshal(norm)
	if err != nil {
		return d, fmt.Errorf("sweep file: %v", err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			want := "a number"
			if strings.Contains(te.Type.String(), "string") {
				want = "text"
			}
			return d, fmt.Errorf("sweep file: %s holds %s where %s goes", te.Field, article(te.Value), want)
		}
		return d, fmt.Errorf("sweep file: %v", err)
	}
	return d, nil
}

// sweepFields reads a sweep file's fields: a map of workload fields to a
// value or a list of them.
func sweepFields(n *yaml.Node) (map[string][]any, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("sweep file, line %d: fields takes workload fields and their values, such as partitions.theta: [0.5, 0.99]", n.Line)
	}
	out := map[string][]any{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			if it.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("sweep file, line %d: fields.%s takes single values or a list of them", it.Line, k.Value)
			}
			var x any
			if err := it.Decode(&x); err != nil {
				return nil, fmt.Errorf("sweep file, line %d: fields.%s: %v", it.Line, k.Value, err)
			}
			if notFinite(it) {
				return nil, fmt.Errorf("sweep file, line %d: fields.%s: %q is not a number: give a finite one", it.Line, k.Value, it.Value)
			}
			out[k.Value] = append(out[k.Value], x)
		}
	}
	return out, nil
}

// SweepFromJSON rebuilds a stored sweep's figure.
func SweepFromJSON(raw json.RawMessage) (Figure, error) {
	var d SweepDef
	if err := json.Unmarshal(raw, &d); err != nil {
		return Figure{}, err
	}
	return d.Figure()
}

var sweepAxes = []string{"vms", "threads", "batch-size", "entity-size", "rate"}

// sweepXLabels name the x axes in words, with their units, as a chart
// shows them and names a run by them ("4 VMs", "batch size 20").
var sweepXLabels = map[string]string{
	"vms": "VMs", "threads": "threads per VM", "batch-size": "batch size (entities)", "entity-size": "entity size (bytes)", "rate": "target rate (entities/s)",
}

// Figure returns the sweep as a figure, or an error naming what to fix.
func (d SweepDef) Figure() (Figure, error) {
	if d.Workload == "" && d.WorkloadFile == "" {
		if len(d.Fields) > 0 {
			return Figure{}, fmt.Errorf("fields sweep a workload's fields: name the workload, as in workload: ycsb-a")
		}
		return d.figureOn(DefaultSpec(), nil)
	}
	return d.workloadFigure()
}

// figureOn is the figure of the sweep's axes over base, for one value of
// each swept workload field (combo).
func (d SweepDef) figureOn(base Spec, combo *fieldCombo) (Figure, error) {
	batchSizes := len(d.BatchSizes) > 0
	d.fill(base)
	ops, err := knownNames(Ops(), d.Ops)
	if err != nil {
		return Figure{}, err
	}
	parts, err := knownNames(PartitionSchemes(), d.Partitions)
	if err != nil {
		return Figure{}, err
	}
	lens := map[string]int{"vms": len(d.VMs), "threads": len(d.Threads), "batch-size": len(d.BatchSizes), "entity-size": len(d.EntitySizes), "rate": len(d.Rates)}
	if n, ok := lens[d.X]; ok && n < 2 && combo == nil {
		return Figure{}, fmt.Errorf("x axis %s has one value: give %s a list such as %s, or choose an x with several values", d.X, d.X, map[string]string{
			"vms": "1,2,4,8", "threads": "10,20,30", "batch-size": "1,20,100", "entity-size": "256,1024,4096", "rate": "500,1000,2000"}[d.X])
	}
	if batchSizes && !slices.ContainsFunc(ops, OpKind.Batched) {
		return Figure{}, fmt.Errorf("batch sizes do nothing with op %s: they set the entities of a batch (op batch) or of a query page (op query); leave them out, or add one of those ops", strings.Join(d.Ops, ", "))
	}
	if d.X == "" {
		d.X = "vms"
		for _, a := range sweepAxes {
			if lens[a] > 1 {
				d.X = a
				break
			}
		}
	}
	if !slices.Contains(sweepAxes, d.X) && (combo == nil || !combo.axis(d.X)) {
		return Figure{}, fmt.Errorf("x axis %q is not known: use %s", d.X, strings.Join(append(slices.Clone(sweepAxes), combo.names()...), ", "))
	}
	if d.Y == "" {
		d.Y = "entities-per-sec"
	}
	ym, err := results.LookupMetric(d.Y)
	if err != nil || !ym.Sweep {
		return Figure{}, fmt.Errorf("y %q is not known: use %s", d.Y, results.MetricNames(results.SweepMetric))
	}
	yLabel := ym.Label
	if d.Name == "" {
		d.Name = "sweep"
	}
	if strings.ContainsAny(d.Name, `/\ .`) {
		return Figure{}, fmt.Errorf("sweep name %q: use letters, digits and dashes; it names the page", d.Name)
	}
	retry := base.Retry
	if d.Retry != "" || combo == nil {
		if retry, err = DefaultRetry(RetryPolicy(d.Retry)); err != nil {
			return Figure{}, err
		}
	}
	dur, warm, err := d.times(base)
	if err != nil {
		return Figure{}, err
	}
	sizes := make([]vm.Size, len(d.VMSizes))
	for i, s := range d.VMSizes {
		if sizes[i], err = vm.ParseSize(s); err != nil {
			return Figure{}, err
		}
	}
	xLabel := sweepXLabels[d.X]
	if xLabel == "" {
		xLabel = d.X
	}
	f := Figure{ID: SweepFigureID, Name: d.Name, Title: d.Title, XLabel: xLabel, YLabel: yLabel, Chart: results.ChartLine, Metric: d.Y}
	if f.Title == "" {
		f.Title = fmt.Sprintf("%s against %s", yLabel, d.X)
	}
	// Every spec the axes cross, as base with their values.
	base.Retry, base.Duration, base.Warmup = retry, dur, warm
	if f.Runs, err = d.runs(base, ops, parts, sizes, combo); err != nil {
		return Figure{}, err
	}
	if n := len(f.Runs); n > 1000 {
		return Figure{}, fmt.Errorf("the sweep has %d runs: keep it to 1,000 or fewer", n)
	}
	f.Choices = []string{fmt.Sprintf("%d runs of %v after %v of warm-up", len(f.Runs), dur, warm)}
	return f, nil
}

// runs is the run of every spec the sweep's axes cross, each base with
// their values, in the order of the axes; it names every spec that is not
// valid.
func (d *SweepDef) runs(base Spec, ops []OpKind, parts []PartitionScheme, sizes []vm.Size, combo *fieldCombo) ([]FigureRun, error) {
	var runs []FigureRun
	var errs []error
	for _, op := range ops {
		for _, part := range parts {
			for si, size := range sizes {
				for _, bs := range d.BatchSizes {
					for _, v := range d.VMs {
						for _, th := range d.Threads {
							for _, es := range d.EntitySizes {
								for _, rate := range d.Rates {
									s := base
									s.Op, s.Partition, s.VMSize, s.BatchSize, s.VMs, s.Threads, s.EntitySize, s.Rate = op, part, size, bs, v, th, es, rate
									if rate > 0 {
										s.Load = LoadOpen
									} else if base.Load == LoadOpen { // a workload's own open load, swept to closed
										s.Load, s.Stages = LoadClosed, nil
									}
									if err := s.Validate(); err != nil {
										errs = append(errs, err)
										continue
									}
									x, ok := map[string]float64{"vms": float64(v), "threads": float64(th), "batch-size": float64(bs), "entity-size": float64(es), "rate": rate}[d.X]
									if !ok {
										x = combo.x(d.X)
									}
									runs = append(runs, FigureRun{Series: combo.series(d.series(&s, d.VMSizes[si]), d.X), X: x, Spec: s})
								}
							}
						}
					}
				}
			}
		}
	}
	return runs, errors.Join(errs...)
}

// fill gives each axis the sweep leaves out the default spec's value.
func (d *SweepDef) fill(base Spec) {
	if len(d.Ops) == 0 {
		d.Ops = []string{string(base.Op)}
	}
	if len(d.BatchSizes) == 0 {
		d.BatchSizes = []int{base.BatchSize}
	}
	if len(d.Partitions) == 0 {
		d.Partitions = []string{string(base.Partition)}
	}
	if len(d.VMs) == 0 {
		d.VMs = []int{base.VMs}
	}
	if len(d.Threads) == 0 {
		d.Threads = []int{base.Threads}
	}
	if len(d.VMSizes) == 0 {
		d.VMSizes = []string{base.VMSize.Name}
	}
	if len(d.EntitySizes) == 0 {
		d.EntitySizes = []int{base.EntitySize}
	}
	if len(d.Rates) == 0 {
		d.Rates = []float64{base.Rate}
	}
}

// times is each run's measured duration and warm-up, the default spec's
// unless the sweep gives them.
func (d *SweepDef) times(base Spec) (dur, warm time.Duration, err error) {
	dur, warm = base.Duration, base.Warmup
	if d.Duration != "" {
		if dur, err = time.ParseDuration(d.Duration); err != nil {
			return 0, 0, fmt.Errorf("duration %q: %v", d.Duration, err)
		}
	}
	if d.Warmup != "" {
		if warm, err = time.ParseDuration(d.Warmup); err != nil {
			return 0, 0, fmt.Errorf("warmup %q: %v", d.Warmup, err)
		}
	}
	return dur, warm, nil
}

// series names the series run s belongs to: the value of every axis with
// several values but x, or its op when there is none.
func (d *SweepDef) series(s *Spec, vmSize string) string {
	var name []string
	add := func(axis string, n int, val string) {
		if n > 1 && axis != d.X {
			name = append(name, axis+"="+val)
		}
	}
	add("op", len(d.Ops), string(s.Op))
	add("partition", len(d.Partitions), string(s.Partition))
	add("vm-size", len(d.VMSizes), vmSize)
	add("batch-size", len(d.BatchSizes), strconv.Itoa(s.BatchSize))
	add("vms", len(d.VMs), strconv.Itoa(s.VMs))
	add("threads", len(d.Threads), strconv.Itoa(s.Threads))
	add("entity-size", len(d.EntitySizes), strconv.Itoa(s.EntitySize))
	add("rate", len(d.Rates), strconv.FormatFloat(s.Rate, 'g', -1, 64))
	series := strings.Join(name, ", ")
	if series == "" {
		series = string(s.Op)
	}
	return series
}

// knownNames returns names as values of v, or an error naming the first
// that is not one and the values there are.
func knownNames[T ~string](v Vocabulary[T], names []string) ([]T, error) {
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = T(n)
		if err := v.Check(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Plan lists a sweep's runs with their durations as given.
func (f *Figure) Plan() []PlannedRun {
	var out []PlannedRun
	for _, fr := range f.Runs {
		out = append(out, PlannedRun{Figure: f.ID, Series: fr.Series, X: fr.X, ID: RunID(f.ID, fr.Series, fr.X), Spec: fr.Spec})
	}
	return out
}

// sweepNumbers are the list keys whose values are numbers, and whether a
// fraction is allowed.
var sweepNumbers = map[string]bool{"batch_size": false, "vms": false, "threads": false, "entity_size": false, "rate": true}

// checkListNode checks each value of a sweep list where it stands, so that
// an error names the line of the value at fault.
func checkListNode(key string, n *yaml.Node) error {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	fraction, numeric := sweepNumbers[key]
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return fmt.Errorf("sweep file, line %d: %s takes single values or a list of them, such as %s: [1, 2, 4]", it.Line, key, key)
		}
		if !numeric {
			continue
		}
		if it.Tag != "!!int" && !(fraction && it.Tag == "!!float") {
			want := "a whole number"
			if fraction {
				want = "a number"
			}
			return fmt.Errorf("sweep file, line %d: %s: %q is not %s", it.Line, key, it.Value, want)
		}
		if notFinite(it) {
			return fmt.Errorf("sweep file, line %d: %s: %q is not a number: give a finite one", it.Line, key, it.Value)
		}
	}
	return nil
}

// notFinite reports whether a value is a float YAML spells but JSON, and
// a run, cannot take: .nan or .inf.
func notFinite(n *yaml.Node) bool {
	var x float64
	return n.Tag == "!!float" && (n.Decode(&x) != nil || math.IsNaN(x) || math.IsInf(x, 0))
}

// article puts "a" or "an" before a word.
func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

// yamlLine matches the line yaml.v3 puts in its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line \d+: `)

// yamlError restates a YAML syntax error with the line it is on. yaml.v3
// counts the lines of some errors from 0 and of others from 1, and for an
// unclosed bracket names the line where it opened; the line given here is
// the first line that no reading of the file up to it survives: the file
// through the line before parses, and every longer start of it fails.
func yamlError(data []byte, err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	lines := bytes.SplitAfter(data, []byte("\n"))
	if !yamlLine.MatchString(msg) || len(lines) > 5000 {
		return errors.New(msg)
	}
	var probe yaml.Node
	bad := len(lines)
	for k := len(lines) - 1; k >= 1; k-- {
		if yaml.Unmarshal(bytes.Join(lines[:k], nil), &probe) == nil {
			break
		}
		bad = k
	}
	return fmt.Errorf("line %d: %s", bad, yamlLine.ReplaceAllString(msg, ""))
}
