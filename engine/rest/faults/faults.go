// Package faults is the fault injection of a served engine: rules that
// match requests by table, PartitionKey, operation and chance, count or
// time, and say what to do to them instead of, or before, serving them.
// Rules come from a YAML file (reloaded when it changes), from the admin
// endpoint, or, for one request, from the x-tablebench-fault header.
//
// It sits in the served engine's front end (package rest), which asks Match
// for each request once it knows the request's table, key and operation.
package faults

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/yamldoc"
)

// Operations a rule can match.
const (
	OpInsert = "insert"
	OpGet    = "get"
	OpQuery  = "query"
	OpBatch  = "batch"
	OpUpdate = "update" // update, merge and both upserts
	OpDelete = "delete"
	OpTable  = "table" // table create, delete, get and list
)

var ops = []string{OpInsert, OpGet, OpQuery, OpBatch, OpUpdate, OpDelete, OpTable}

// Kinds of fault.
const (
	KindStatus      = "status"      // answer with a status and error code
	KindDelay       = "delay"       // wait, then serve
	KindReset       = "reset"       // close the connection with a reset, answering nothing
	KindTruncate    = "truncate"    // serve, but cut the response body short and close
	KindUnavailable = "unavailable" // make the key's partition unavailable, as during a move
)

// Rule is one fault rule. Empty match fields match everything; exactly one
// of Status, Delay, Reset, Truncate and Unavailable says what to do.
type Rule struct {
	Name string `yaml:"name,omitempty" json:"name,omitempty"`

	Table              string `yaml:"table,omitempty" json:"table,omitempty"`
	PartitionKey       string `yaml:"partition_key,omitempty" json:"partition_key,omitempty"`
	PartitionKeyPrefix string `yaml:"partition_key_prefix,omitempty" json:"partition_key_prefix,omitempty"`
	Op                 string `yaml:"op,omitempty" json:"op,omitempty"`

	// Probability fires the rule on that share of matching requests;
	// Every fires it on every Nth; After and For open a window measured
	// from when the rules were loaded. Unset, a rule fires every time.
	Probability float64  `yaml:"probability,omitempty" json:"probability,omitempty"`
	Every       int      `yaml:"every,omitempty" json:"every,omitempty"`
	After       Duration `yaml:"after,omitempty" json:"after,omitempty"`
	For         Duration `yaml:"for,omitempty" json:"for,omitempty"`

	Status      int      `yaml:"status,omitempty" json:"status,omitempty"`
	Code        string   `yaml:"code,omitempty" json:"code,omitempty"`
	Message     string   `yaml:"message,omitempty" json:"message,omitempty"`
	Delay       Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
	Reset       bool     `yaml:"reset,omitempty" json:"reset,omitempty"`
	Truncate    bool     `yaml:"truncate,omitempty" json:"truncate,omitempty"`
	Unavailable Duration `yaml:"unavailable,omitempty" json:"unavailable,omitempty"`
}

// Duration is a time.Duration written as "2s" in YAML and JSON.
type Duration time.Duration

// UnmarshalYAML reads a duration such as 2s or 1m30s.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration: use one such as 500ms, 2s or 1m", n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as 2s.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalJSON writes the duration as "2s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// Kind returns what the rule does.
func (r *Rule) Kind() string {
	switch {
	case r.Status != 0:
		return KindStatus
	case r.Delay > 0:
		return KindDelay
	case r.Reset:
		return KindReset
	case r.Truncate:
		return KindTruncate
	case r.Unavailable > 0:
		return KindUnavailable
	}
	return ""
}

// label names a rule in an error: its name, or its place in the file.
func (r *Rule) label(i int) string {
	if i < 0 {
		return "the fault"
	}
	if r.Name != "" {
		return fmt.Sprintf("fault %d (%s)", i+1, r.Name)
	}
	return fmt.Sprintf("fault %d", i+1)
}

func (r *Rule) validate(i int) error {
	what := r.label(i)
	n := 0
	for _, set := range []bool{r.Status != 0, r.Delay > 0, r.Reset, r.Truncate, r.Unavailable > 0} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("%s does nothing: give one of status (with code), delay, reset, truncate or unavailable", what)
	case n > 1:
		return fmt.Errorf("%s does more than one thing: give only one of status, delay, reset, truncate and unavailable", what)
	case r.Op != "" && !slices.Contains(ops, r.Op):
		return fmt.Errorf("%s: op %q is not known: use %s", what, r.Op, strings.Join(ops, ", "))
	case r.Probability < 0 || r.Probability > 1:
		return fmt.Errorf("%s: probability %g is out of range: use a share above 0 up to 1", what, r.Probability)
	case r.Every < 0:
		return fmt.Errorf("%s: every %d: use a count of 1 or more", what, r.Every)
	case r.Probability > 0 && r.Every > 0:
		return fmt.Errorf("%s: give probability or every, not both", what)
	case r.Status != 0 && (r.Status < 400 || r.Status > 599):
		return fmt.Errorf("%s: status %d is not an error status: use 400 to 599, such as 503", what, r.Status)
	case r.Status != 0 && r.Code == "":
		return fmt.Errorf("%s: status %d needs a code, such as ServerBusy, OperationTimedOut or InternalError", what, r.Status)
	case r.Code != "" && r.Status == 0:
		return fmt.Errorf("%s: code %s needs a status, such as 503", what, r.Code)
	case r.PartitionKey != "" && r.PartitionKeyPrefix != "":
		return fmt.Errorf("%s: give partition_key or partition_key_prefix, not both", what)
	case r.Unavailable > 0 && r.Op == OpTable:
		return fmt.Errorf("%s: a table operation has no partition to make unavailable", what)
	}
	return nil
}

// Message returns the error message the rule answers with.
func (r *Rule) message() string {
	if r.Message != "" {
		return r.Message
	}
	if m, ok := messages[r.Code]; ok {
		return m
	}
	return "Injected by tablebench: " + r.Code + "."
}

var messages = map[string]string{
	"ServerBusy":        "The server is busy.",
	"OperationTimedOut": "Operation could not be completed within the specified time.",
	"InternalError":     "The server encountered an internal error. Please retry the request.",
}

// File is a rules file: `faults: [...]`.
type File struct {
	Faults []Rule `yaml:"faults" json:"faults"`
}

// Parse reads a rules file, YAML or JSON, and checks every rule. Its error
// is one line that names the rule and what to fix.
func Parse(data []byte) ([]Rule, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the faults file is empty: write faults: [...], or faults: [] for none")
	}
	if err := yamldoc.Size(data); err != nil {
		return nil, fmt.Errorf("the faults file is not valid: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	err := dec.Decode(&f)
	if err == nil {
		err = yamldoc.End(dec)
	}
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		msg = strings.TrimPrefix(msg, "yaml: ")
		if strings.Contains(msg, "not found in type") {
			msg += " (a rule has name, table, partition_key, partition_key_prefix, op, probability, every, after, for, status, code, message, delay, reset, truncate, unavailable)"
		}
		return nil, fmt.Errorf("the faults file is not valid: %s", msg)
	}
	for i := range f.Faults {
		if err := f.Faults[i].validate(i); err != nil {
			return nil, err
		}
	}
	return f.Faults, nil
}

// ParseHeader reads the x-tablebench-fault header: the fields of one rule
// as key=value pairs separated by semicolons, such as
// "status=503;code=ServerBusy", "delay=2s", "reset" or "unavailable=15s".
// It applies to its own request, so it has no match fields.
func ParseHeader(v string) (Rule, error) {
	var r Rule
	n := 0
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n++
		key, val, hasVal := strings.Cut(part, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		var err error
		switch key {
		case "status":
			r.Status, err = strconv.Atoi(val)
		case "code":
			r.Code = val
		case "message":
			r.Message = val
		case "delay", "unavailable":
			var d time.Duration
			if d, err = time.ParseDuration(val); err == nil && d <= 0 {
				err = errors.New("not positive")
			}
			if key == "delay" {
				r.Delay = Duration(d)
			} else {
				r.Unavailable = Duration(d)
			}
		case "reset", "truncate":
			on := true
			if hasVal {
				on, err = strconv.ParseBool(val)
			}
			if key == "reset" {
				r.Reset = on
			} else {
				r.Truncate = on
			}
		default:
			return Rule{}, fmt.Errorf("x-tablebench-fault: %q is not a fault field: use status and code, delay, reset, truncate or unavailable, such as status=503;code=ServerBusy", key)
		}
		if err != nil {
			return Rule{}, fmt.Errorf("x-tablebench-fault: %s=%q is not valid: use status=503, delay=2s, reset, truncate or unavailable=15s", key, val)
		}
	}
	if n == 0 {
		return Rule{}, errors.New("x-tablebench-fault is empty: give a fault such as status=503;code=ServerBusy")
	}
	if err := r.validate(-1); err != nil {
		return Rule{}, fmt.Errorf("x-tablebench-fault: %w", err)
	}
	return r, nil
}

// Request is what a rule is matched on.
type Request struct {
	Op, Table, PartitionKey string
}

// Set is the rules in force, safe for concurrent use. Rules are replaced as
// a whole; the counts behind every and the clock behind after and for
// start again with them.
type Set struct {
	mu     sync.Mutex
	rules  []Rule
	counts []int
	loaded time.Time
	rng    *rand.Rand
	now    func() time.Time
	fired  map[string]*atomic.Int64 // by kind
	count  atomic.Int32             // len(rules), read without the lock
}

// NewSet returns an empty set; seed seeds its chance draws.
func NewSet(seed uint64) *Set {
	s := &Set{rng: rand.New(rand.NewPCG(seed, 0x6661756c74)), now: time.Now, fired: map[string]*atomic.Int64{}}
	for _, k := range []string{KindStatus, KindDelay, KindReset, KindTruncate, KindUnavailable} {
		s.fired[k] = &atomic.Int64{}
	}
	s.loaded = s.now()
	return s
}

// Replace puts rules in force.
func (s *Set) Replace(rules []Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = slices.Clone(rules)
	s.counts = make([]int, len(rules))
	s.count.Store(int32(len(rules)))
	s.loaded = s.now()
}

// Rules returns the rules in force.
func (s *Set) Rules() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rules)
}

// Fired returns how many requests each kind of fault was injected into.
func (s *Set) Fired() map[string]int64 {
	out := map[string]int64{}
	for k, n := range s.fired {
		out[k] = n.Load()
	}
	return out
}

// Count records that a fault of kind was injected (by a rule or a header).
func (s *Set) Count(kind string) {
	if n := s.fired[kind]; n != nil {
		n.Add(1)
	}
}

// Match returns the first rule that fires for req, if any.
func (s *Set) Match(req Request) (Rule, bool) {
	if s.count.Load() == 0 { // every request asks: no lock while there are no rules
		return Rule{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	since := s.now().Sub(s.loaded)
	for i := range s.rules {
		r := &s.rules[i]
		if !matches(r, req) {
			continue
		}
		if since < time.Duration(r.After) || r.For > 0 && since >= time.Duration(r.After)+time.Duration(r.For) {
			continue
		}
		if r.Every > 0 {
			s.counts[i]++
			if s.counts[i]%r.Every != 0 {
				continue
			}
		}
		if r.Probability > 0 && s.rng.Float64() >= r.Probability {
			continue
		}
		return *r, true
	}
	return Rule{}, false
}

func matches(r *Rule, req Request) bool {
	switch {
	case r.Op != "" && r.Op != req.Op:
		return false
	case r.Table != "" && !strings.EqualFold(r.Table, req.Table):
		return false
	case r.PartitionKey != "" && r.PartitionKey != req.PartitionKey:
		return false
	case r.PartitionKeyPrefix != "" && !strings.HasPrefix(req.PartitionKey, r.PartitionKeyPrefix):
		return false
	}
	return true
}

// StatusText is the service's form of an injected status: its code and
// message.
func (r *Rule) StatusText() (status int, code, message string) {
	return r.Status, r.Code, r.message()
}
