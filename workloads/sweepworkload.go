package workloads

import (
	"fmt"
	"maps"
	"slices"

	"strings"

	"gopkg.in/yaml.v3"
)

// fieldCombo is one value of each workload field a sweep sweeps.
type fieldCombo struct {
	fields []string       // the swept fields, sorted
	vals   map[string]any // this run's value of each
	counts map[string]int // how many values each field takes
}

// axis reports whether field is swept with numbers, so that it can be x.
func (c *fieldCombo) axis(field string) bool {
	if c == nil {
		return false
	}
	_, ok := number(c.vals[field])
	return ok
}

// names lists the swept fields.
func (c *fieldCombo) names() []string {
	if c == nil {
		return nil
	}
	return c.fields
}

// x is the run's value of the field that is x.
func (c *fieldCombo) x(field string) float64 {
	if c == nil {
		return 0
	}
	v, _ := number(c.vals[field])
	return v
}

// series adds to a run's series the value of each swept field with
// several values but x.
func (c *fieldCombo) series(series, x string) string {
	if c == nil {
		return series
	}
	var parts []string
	for _, f := range c.fields {
		if c.counts[f] > 1 && f != x {
			parts = append(parts, fmt.Sprintf("%s=%v", f, c.vals[f]))
		}
	}
	if len(parts) == 0 {
		return series
	}
	if strings.Contains(series, "=") { // other axes name it already
		return series + ", " + strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ")
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// workloadFigure is the sweep over its workload: a figure of every run of
// every combination of the swept fields' values.
func (d SweepDef) workloadFigure() (Figure, error) {
	if d.WorkloadFile == "" {
		return Figure{}, fmt.Errorf("workload %s was not read: give its file or a preset's name", d.Workload)
	}
	parsed, err := ParseWorkload([]byte(d.WorkloadFile))
	if err != nil {
		return Figure{}, fmt.Errorf("workload %s: %w", d.Workload, err)
	}
	names := slices.Sorted(maps.Keys(d.Fields))
	counts := map[string]int{}
	for _, f := range names {
		if slices.Contains([]string{"vms", "threads", "batch_size", "rate", "vm_size", "duration", "warmup", "retry"}, f) {
			return Figure{}, fmt.Errorf("fields.%s: sweep it as the sweep's own %s list, not as a field", f, f)
		}
		counts[f] = len(d.Fields[f])
	}
	combos := []map[string]any{{}}
	for _, f := range names {
		var next []map[string]any
		for _, c := range combos {
			for _, v := range d.Fields[f] {
				m := maps.Clone(c)
				m[f] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	if len(combos) > 1000 {
		return Figure{}, fmt.Errorf("the sweep has %d combinations of fields: keep it to 1,000 or fewer", len(combos))
	}
	var fig Figure
	for i, vals := range combos {
		w := parsed
		for _, f := range names {
			if w, err = w.With(f, vals[f]); err != nil {
				return Figure{}, err
			}
		}
		base, err := w.Spec(DefaultSpec())
		if err != nil {
			return Figure{}, fmt.Errorf("workload %s with %v: %w", d.Workload, vals, err)
		}
		f, err := d.figureOn(base, &fieldCombo{fields: names, vals: vals, counts: counts})
		if err != nil {
			return Figure{}, err
		}
		if i == 0 {
			fig = f
			continue
		}
		fig.Runs = append(fig.Runs, f.Runs...)
	}
	if n := len(fig.Runs); n > 1000 {
		return Figure{}, fmt.Errorf("the sweep has %d runs: keep it to 1,000 or fewer", n)
	}
	fig.Choices = []string{fmt.Sprintf("%d runs of workload %s", len(fig.Runs), d.Workload)}
	return fig, nil
}

// With returns the workload with one field ("partitions.theta") set to
// value, checked as a file's field is.
func (p *ParsedWorkload) With(field string, value any) (*ParsedWorkload, error) {
	root := cloneNode(p.root)
	n := root
	parts := strings.Split(field, ".")
	for i, part := range parts {
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == part {
				next = n.Content[j+1]
			}
		}
		last := i == len(parts)-1
		if next == nil || last {
			var v yaml.Node
			if last {
				if err := v.Encode(value); err != nil {
					return nil, fmt.Errorf("fields.%s: %v", field, err)
				}
			} else {
				v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			if next == nil {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part}, &v)
				next = n.Content[len(n.Content)-1]
			} else {
				*next = v
			}
		}
		if next.Kind != yaml.MappingNode && !last {
			return nil, fmt.Errorf("fields.%s: %s is not a map of fields", field, strings.Join(parts[:i+1], "."))
		}
		n = next
	}
	if err := checkFields("", root, workloadFields); err != nil {
		return nil, fmt.Errorf("fields.%s = %v: %s", field, value, strings.TrimPrefix(err.Error(), "workload file, "))
	}
	out := &ParsedWorkload{root: root}
	if err := root.Decode(&out.Workload); err != nil {
		return nil, fmt.Errorf("fields.%s: %v", field, err)
	}
	return out, nil
}

// cloneNode copies a YAML node tree.
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k)
	}
	return &c
}
