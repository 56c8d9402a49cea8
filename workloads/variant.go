package workloads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/yamldoc"
)

// ParseWorkloadWith reads a file that holds a workload's fields and,
// beside them, fields of its own (extra): a file that compares variants of
// one workload, such as tablebench advise's. It returns the workload, the
// extra fields' values by name, for their reader to check, and the same
// one-line errors as ParseWorkload, whose unknown-field error lists the
// extra fields too.
func ParseWorkloadWith(data []byte, extra ...string) (*ParsedWorkload, map[string]*yaml.Node, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil, fmt.Errorf("the file is empty: give at least a mix, such as mix: {get: 95, update: 5}")
	}
	if trimmed[0] == '{' {
		var probe map[string]any
		if err := json.Unmarshal(trimmed, &probe); err != nil {
			return nil, nil, fmt.Errorf("the file is not valid JSON: %v", err)
		}
	}
	var doc yaml.Node
	if err := yamldoc.One(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("the file is not valid YAML: %w", yamlError(data, err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("workload file, line %d: the file is a map of fields, such as mix: {get: 95, update: 5}", root.Line)
	}
	fields := maps.Clone(workloadFields)
	for _, name := range extra {
		fields[name] = field{kind: kExtra}
	}
	if err := checkFields("", root, fields); err != nil {
		return nil, nil, err
	}
	own := &yaml.Node{Kind: yaml.MappingNode, Line: root.Line, Column: root.Column}
	values := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if slices.Contains(extra, k.Value) {
			values[k.Value] = v
			continue
		}
		own.Content = append(own.Content, k, v)
	}
	p, err := decodeWorkload(own)
	return p, values, err
}

// kExtra is a field that a file holds beside a workload's, which its
// reader checks (ParseWorkloadWith).
const kExtra kind = -1

// decodeWorkload decodes a checked map of a workload's fields.
func decodeWorkload(root *yaml.Node) (*ParsedWorkload, error) {
	p := &ParsedWorkload{root: root}
	if err := root.Decode(&p.Workload); err != nil {
		return nil, fmt.Errorf("workload file: %s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "), "\n", "; "))
	}
	return p, nil
}

// Variant returns the workload with the fields of over in place of its
// own: a whole field each (a variant's partitions replace the workload's
// partitions, all of them). over is a map of workload fields from the same
// file, checked as the workload's are, and may hold the fields keep names
// besides, which the variant skips. Errors, the variant's spec's included,
// name the line of the field at fault, in over or in the workload.
func (p *ParsedWorkload) Variant(over *yaml.Node, keep ...string) (*ParsedWorkload, error) {
	if over.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("workload file, line %d: a variant is a map of workload fields, such as {name: spread, partitions: {scheme: fixed, count: 1000}}", over.Line)
	}
	fields := maps.Clone(workloadFields)
	for _, name := range keep {
		fields[name] = field{kind: kExtra}
	}
	if err := checkFields("", over, fields); err != nil {
		return nil, err
	}
	given := map[string]bool{}
	merged := &yaml.Node{Kind: yaml.MappingNode, Line: over.Line, Column: over.Column}
	for i := 0; i+1 < len(over.Content); i += 2 {
		if k := over.Content[i]; !slices.Contains(keep, k.Value) {
			given[k.Value] = true
			merged.Content = append(merged.Content, k, over.Content[i+1])
		}
	}
	for i := 0; i+1 < len(p.root.Content); i += 2 {
		if k := p.root.Content[i]; !given[k.Value] {
			merged.Content = append(merged.Content, k, p.root.Content[i+1])
		}
	}
	return decodeWorkload(merged)
}
