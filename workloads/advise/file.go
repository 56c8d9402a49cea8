// Package advise compares key designs by simulation before any is
// deployed: it runs a workload's candidate PartitionKey designs on the
// engine's service models at a target rate, in virtual time, with enough
// simulated clients that the client is never what limits, and ranks them
// from what was measured: whether each carries the target, how much was
// throttled, where the load landed against the service's limits, and what
// it cost. Where candidates are within noise of each other it says so,
// and finds the load at which they begin to differ.
//
// tablebench advise is its command; docs/advise.md describes the file,
// the table and how ties are decided.
package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/workloads"
)

// File is an advise file: a workload (the fields of a workload file), the
// rate its design must carry, the service models to try, and the
// candidate key designs, each a variant of the workload.
type File struct {
	Workload   *workloads.ParsedWorkload
	TargetRate float64
	Profiles   []string
	Candidates []Candidate
}

// Candidate is one key design: its name and the workload with its fields
// (its partitions, and any other field it sets) in place of the file's.
type Candidate struct {
	Name     string
	Workload *workloads.ParsedWorkload
	Line     int // where it starts in the file
}

// Fields an advise file holds beside a workload's.
const (
	fieldTarget     = "target_rate"
	fieldProfiles   = "profiles"
	fieldCandidates = "candidates"
)

// MaxCandidates is how many candidates a file may compare.
const MaxCandidates = 12

// Parse reads an advise file in YAML or JSON. Every error is one line
// that names the field at fault and its line: an unknown field anywhere
// (a misspelt one is never ignored), a value of the wrong kind, a
// candidate without a name or with the name of another, and a workload
// field out of range in any candidate (through each candidate's spec).
func Parse(data []byte) (*File, error) {
	w, extra, err := workloads.ParseWorkloadWith(data, fieldTarget, fieldProfiles, fieldCandidates)
	if err != nil {
		return nil, err
	}
	f := &File{Workload: w}
	t := extra[fieldTarget]
	if t == nil {
		return nil, fmt.Errorf("advise file: give target_rate, the requests/s the design must carry, such as target_rate: 6000")
	}
	if t.Kind != yaml.ScalarNode || t.Decode(&f.TargetRate) != nil || !(f.TargetRate > 0) || math.IsInf(f.TargetRate, 0) || (t.Tag != "!!int" && t.Tag != "!!float") {
		return nil, fmt.Errorf("advise file, line %d: target_rate: %q is not a rate: give requests/s above 0, such as 6000", t.Line, t.Value)
	}
	if f.TargetRate > MaxTargetRate {
		return nil, fmt.Errorf("advise file, line %d: target_rate: %g requests/s is more than the %d advise simulates: give at most %d", t.Line, f.TargetRate, MaxTargetRate, MaxTargetRate)
	}
	if p := extra[fieldProfiles]; p != nil {
		if err := p.Decode(&f.Profiles); err != nil || p.Kind != yaml.SequenceNode || len(f.Profiles) == 0 {
			return nil, fmt.Errorf("advise file, line %d: profiles: give a list of service models, such as [modern, cosmos]", p.Line)
		}
		for i, name := range f.Profiles {
			if slices.Contains(f.Profiles[:i], name) {
				return nil, fmt.Errorf("advise file, line %d: profiles: %s is listed twice", p.Content[i].Line, name)
			}
		}
	} else {
		f.Profiles = []string{"modern"}
	}
	c := extra[fieldCandidates]
	if c == nil || c.Kind != yaml.SequenceNode || len(c.Content) < 2 {
		line := 0
		if c != nil {
			line = c.Line
		}
		return nil, fmt.Errorf("advise file%s: candidates: give a list of two or more key designs, such as [{name: by-day, partitions: {scheme: append}}, {name: spread, partitions: {scheme: fixed, count: 1000}}]", lineText(line))
	}
	if len(c.Content) > MaxCandidates {
		return nil, fmt.Errorf("advise file, line %d: candidates: %d candidates: compare at most %d at once", c.Line, len(c.Content), MaxCandidates)
	}
	for _, n := range c.Content {
		cand, err := f.candidate(n)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(f.Candidates, func(o Candidate) bool { return o.Name == cand.Name }) {
			return nil, fmt.Errorf("advise file, line %d: candidates: %q names two candidates: give each its own name", n.Line, cand.Name)
		}
		f.Candidates = append(f.Candidates, cand)
	}
	return f, nil
}

// MaxTargetRate is the most requests/s advise simulates: the engine's
// account budget is 20,000 entities/s, and advise tries up to
// MaxMultiple times the target.
const MaxTargetRate = 100_000

func lineText(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(", line %d", line)
}

// candidate reads one candidate: its name and its workload fields.
func (f *File) candidate(n *yaml.Node) (Candidate, error) {
	if n.Kind != yaml.MappingNode {
		return Candidate{}, fmt.Errorf("advise file, line %d: candidates: a candidate is a map with a name and its partitions, such as {name: spread, partitions: {scheme: fixed, count: 1000}}", n.Line)
	}
	name := ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			name = strings.TrimSpace(n.Content[i+1].Value)
		}
	}
	w, err := f.Workload.Variant(n, "name")
	if err != nil && name != "" { // every error in a candidate names it
		return Candidate{}, fmt.Errorf("candidate %s: %w", name, err)
	}
	if err != nil {
		return Candidate{}, err
	}
	if name == "" {
		return Candidate{}, fmt.Errorf("advise file, line %d: candidates: this candidate has no name: give it one, such as name: by-day", n.Line)
	}
	w.Name = name
	if _, err := w.Spec(workloads.DefaultSpec()); err != nil {
		return Candidate{}, fmt.Errorf("candidate %s: %w", name, err)
	}
	return Candidate{Name: name, Workload: w, Line: n.Line}, nil
}
