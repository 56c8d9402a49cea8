package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/yamldoc"
)

// A profile file is a Profile as YAML, one parameter a line with its
// meaning and unit in a comment, so a user who measured their own account
// can write down what they measured and run any design against it. The file
// form is derived from the Profile struct by reflection: profileDocs gives
// each field its key, unit and meaning, and a field without an entry is
// refused by the tests, so a parameter added later cannot be left out of
// the file or written without its unit.

// fieldDoc is how one Profile field reads in a profile file.
type fieldDoc struct {
	key  string // its YAML key
	unit string // the unit its value is in, first in its comment (with a colon where the meaning does not read on from it)
	text string // what it means, read after the unit
	// rule is checked beyond the generic one (no negative number).
	rule rule
}

// rule is a check a field's value must pass in a profile file.
type rule int

const (
	anyValue        rule = iota
	positiveIfModel      // above 0 when the profile models latency
	entityBudget         // above 0 when the profile models latency in entity units, not request units
	fraction             // from 0 to 1
	spread               // a coefficient of variation, from 0 to maxCV
	nameRule             // a profile's name
)

// maxCV bounds a coefficient of variation: the lognormal times it spreads
// overflow a duration long before a spread of 1e300, and past 10 the
// median is a tenth of the mean, no service's times.
const maxCV = 10

// profileDocs documents every field of Profile, by Go field name.
var profileDocs = map[string]fieldDoc{
	"Name":  {"name", "text:", "the profile's name, as run records show it", nameRule},
	"Model": {"model", "true/false:", "false serves without latency, throttling or load balancing", anyValue},

	"AccountRate":      {"account_rate", "entities/s", "the account serves before 503 ServerBusy", entityBudget},
	"AccountBurst":     {"account_burst", "time", "of its rate the account's budget can save up", anyValue},
	"PartitionKeyRate": {"partition_rate", "entities/s", "one PartitionKey serves before 503 ServerBusy", entityBudget},
	"Burst":            {"partition_burst", "time", "of its rate one PartitionKey's budget can save up", anyValue},

	"WriteA":    {"lane_write", "time", "a write holds its range partition's lane, fixed part", anyValue},
	"WriteB":    {"lane_write_per_unit", "time", "a write holds the lane for each entity unit (1 KB)", anyValue},
	"Get":       {"lane_get", "time", "a point read holds the lane", anyValue},
	"Scan":      {"lane_scan", "time", "a query holds the lane for each entity it scans", anyValue},
	"ScanLimit": {"scan_limit", "time", "of scanning after which a query page ends with a continuation", anyValue},

	"ThrottleAt":  {"throttle_at", "requests", "queued at a lane at which every request is throttled", positiveIfModel},
	"ThrottleExp": {"throttle_exp", "exponent", "k: a request is throttled with probability (queued/throttle_at)^k", positiveIfModel},

	"FEWrite":     {"fe_write", "time", "in the front end for a write, fixed part (parallel)", anyValue},
	"FEWriteUnit": {"fe_write_per_unit", "time", "in the front end for each entity unit written", anyValue},
	"FERead":      {"fe_read", "time", "in the front end for a read", anyValue},
	"PostWrite":   {"post_write", "time", "to commit a write after its lane, fixed part (parallel)", anyValue},
	"PostUnit":    {"post_write_per_entity", "time", "to commit each entity of a write", anyValue},
	"PostRead":    {"post_read", "time", "to return a read after its lane", anyValue},
	"CV":          {"cv", "ratio:", "coefficient of variation of the front-end and commit times", spread},
	"LaneCV":      {"lane_cv", "ratio:", "coefficient of variation of the lane times", spread},

	"HiccupP":   {"hiccup_p", "probability", "that a request's commit stalls", fraction},
	"HiccupMin": {"hiccup_min", "time", "a stall adds, at least", anyValue},
	"HiccupMax": {"hiccup_max", "time", "a stall adds, at most", anyValue},

	"Servers":       {"servers", "count", "of partition servers the account's tables are spread over", positiveIfModel},
	"ServerCores":   {"server_cores", "count", "of lanes one server runs at once", positiveIfModel},
	"ServerTimeout": {"server_timeout", "time", "a request may take before 500 OperationTimedOut", positiveIfModel},
	"HoldMax":       {"hold_max", "time", "a request waits for an unavailable partition before 503", anyValue},
	"SplitPauseMin": {"split_pause_min", "time", "a split partition is unavailable, at least", anyValue},
	"SplitPauseMax": {"split_pause_max", "time", "a split partition is unavailable, at most", anyValue},
	"MoveMin":       {"move_min", "time", "a moved partition is unavailable, at least", anyValue},
	"MoveMax":       {"move_max", "time", "a moved partition is unavailable, at most", anyValue},

	"RU":                    {"ru", "RU/s:", "the table's provisioned throughput in request units (Cosmos DB); 0 with ru_max 0: the entity budgets above apply instead", anyValue},
	"RUMax":                 {"ru_max", "RU/s:", "autoscale maximum: the table scales between 10% and 100% of it; replaces ru when above 0", anyValue},
	"PartitionRU":           {"partition_ru", "RU/s", "one physical partition serves at most", anyValue},
	"PartitionBytes":        {"partition_bytes", "bytes", "a physical partition stores before it splits in two", anyValue},
	"LogicalPartitionBytes": {"logical_partition_bytes", "bytes", "one PartitionKey stores at most; a write past it gets 403", anyValue},
	"SplitMin":              {"split_min", "time", "a physical partition's split takes, at least", anyValue},
	"SplitMax":              {"split_max", "time", "a physical partition's split takes, at most", anyValue},
	"ReadRU":                {"read_ru", "RU", "a point read of a 1 KB entity is charged", anyValue},
	"WriteRU":               {"write_ru", "RU", "a write of a 1 KB entity is charged", anyValue},
	"RU100KB":               {"ru_100kb", "times:", "a 100 KB entity's charge over a 1 KB one's; linear between", anyValue},
	"QueryRU":               {"query_ru", "RU", "a query is charged for each entity it reads (a page at least one)", anyValue},
	"MaxRowKeyBytes":        {"max_rowkey_bytes", "bytes:", "the longest RowKey (UTF-8); 0 leaves the Table service's limit", anyValue},
	"MaxBatchBytes":         {"max_batch_bytes", "bytes:", "the largest batch; 0 is the Table service's 4 MiB", anyValue},
	"UnsortedQueries":       {"unsorted_queries", "true/false:", "query pages return entities in no key order, as the Cosmos DB Table API", anyValue},

	"Client": {"client", "VM size:", "the client run and the experiments model unless --vm-size names one: xl (2010's) or modern (today's, also when empty)", anyValue},
}

// baseKey names the built-in profile a file starts from.
const baseKey = "base"

// profileField is one field of Profile found by reflection: where it is in
// the struct and how the file writes it.
type profileField struct {
	index  []int // reflect.Value.FieldByIndex
	goName string
	doc    fieldDoc
	typ    reflect.Type
}

var durationType = reflect.TypeFor[time.Duration]()

// profileFields lists Profile's fields in declaration order, or the first
// field the file form cannot hold: one without a doc, or of a kind it
// cannot write.
func profileFields() ([]profileField, error) {
	t := reflect.TypeFor[Profile]()
	var fields []profileField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		doc, ok := profileDocs[f.Name]
		if !ok {
			return nil, fmt.Errorf("engine: Profile.%s has no entry in profileDocs: give it a key, a unit and a meaning", f.Name)
		}
		if doc.key == "" || doc.unit == "" || doc.text == "" {
			return nil, fmt.Errorf("engine: Profile.%s's entry in profileDocs needs a key, a unit and a meaning", f.Name)
		}
		if !scalar(f.Type) {
			return nil, fmt.Errorf("engine: Profile.%s is a %s: a profile file holds numbers, durations, true/false and text", f.Name, f.Type)
		}
		fields = append(fields, profileField{index: f.Index, goName: f.Name, doc: doc, typ: f.Type})
	}
	return fields, nil
}

func scalar(t reflect.Type) bool {
	if t == durationType {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// format writes a field's value as the file holds it: durations as Go
// durations with us for microseconds, numbers without exponent.
func format(v reflect.Value) string {
	if v.Type() == durationType {
		return strings.ReplaceAll(time.Duration(v.Int()).String(), "µs", "us")
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.String:
		if s := v.String(); s != "" && safePlain.MatchString(s) {
			return s
		}
		return strconv.Quote(v.String())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	default:
		return strconv.FormatUint(v.Uint(), 10)
	}
}

// safePlain is text YAML reads back as the same string without quotes.
var safePlain = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:,-]*$`)

// WriteProfile writes p as a profile file: every field, a line each, with
// its unit and meaning in a comment, after a header saying how to use it.
func WriteProfile(w io.Writer, p Profile) error {
	fields, err := profileFields()
	if err != nil {
		return err
	}
	v := reflect.ValueOf(p)
	lines := make([]string, len(fields))
	width := 0
	for i, f := range fields {
		lines[i] = f.doc.key + ": " + format(v.FieldByIndex(f.index))
		width = max(width, len(lines[i]))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# tablebench profile %s: the engine's model of a Table service.\n", p.Name)
	fmt.Fprintln(&b, "# Load a changed copy with --profile FILE.yaml under a name of its own; a file")
	fmt.Fprintln(&b, "# may also give base: NAME (a built-in profile) and only the fields it changes.")
	fmt.Fprintln(&b, "# Times are Go durations (650us, 20ms, 1.5s); an entity unit is 1 KB.")
	for i, f := range fields {
		fmt.Fprintf(&b, "%-*s  # %s %s\n", width, lines[i], f.doc.unit, f.doc.text)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// ProfileFile is a profile read from a file.
type ProfileFile struct {
	// Profile is the resolved profile: the base's fields, then the file's.
	Profile Profile
	// Base is the built-in profile the file starts from, "" for none.
	Base string
	// Builtin reports that the resolved profile is exactly the built-in
	// profile of its name, so a record of it need not say it came from a
	// file.
	Builtin bool
	// SHA256 is the hash of the resolved profile's parameters (the file
	// WriteProfile writes for it), in hex: two files that resolve to the
	// same parameters have the same hash, whatever their comments.
	SHA256 string
	lines  map[string]int // key: line it is given on
}

// Line returns the line of the file that gives key, 0 if it does not.
func (f *ProfileFile) Line(key string) int { return f.lines[key] }

// ProfileError is a profile file's mistake: the field, the line it is on
// (0 when the file does not give it) and what is wrong with it.
type ProfileError struct {
	Line  int
	Field string
	Msg   string
	// alt is the same mistake told from another field's side, for a file
	// that gives that field and not this one.
	alt *ProfileError
}

func (e *ProfileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Msg)
	}
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Msg)
}

// ParseProfile reads a profile file. A file with base: NAME starts from
// that built-in profile and changes only the fields it gives; one without
// must give every field. Every field is checked: an unknown or repeated
// key, a value of the wrong type, a negative number, a duration that does
// not parse, a model without servers, a minimum above its maximum. The
// error is a *ProfileError naming the first mistake's field and line.
func ParseProfile(data []byte) (*ProfileFile, error) {
	fields, err := profileFields()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yamldoc.One(data, &doc); err != nil {
		return nil, &ProfileError{Msg: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 {
		return nil, &ProfileError{Msg: "the file is empty: write key: value lines, as 'tablebench profile show modern' prints"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &ProfileError{Line: root.Line, Field: "profile", Msg: "the file must be key: value lines, as 'tablebench profile show modern' prints"}
	}
	byKey := map[string]profileField{}
	for _, f := range fields {
		byKey[f.doc.key] = f
	}
	pf := &ProfileFile{lines: map[string]int{}}
	values := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if _, known := byKey[key]; !known && key != baseKey {
			return nil, &ProfileError{Line: k.Line, Field: key, Msg: "not a profile field" + suggest(key, fields)}
		}
		if at, twice := pf.lines[key]; twice {
			return nil, &ProfileError{Line: k.Line, Field: key, Msg: fmt.Sprintf("given twice (first on line %d): keep one", at)}
		}
		pf.lines[key] = k.Line
		if v.Kind != yaml.ScalarNode {
			return nil, &ProfileError{Line: v.Line, Field: key, Msg: "must be one value on its line, not a list or a map"}
		}
		if v.Tag == "!!null" {
			return nil, &ProfileError{Line: v.Line, Field: key, Msg: "has no value: give one, or leave the line out"}
		}
		values[key] = v
	}
	var p Profile
	if b, ok := values[baseKey]; ok {
		base, err := ProfileByName(b.Value)
		if err != nil {
			return nil, &ProfileError{Line: b.Line, Field: baseKey, Msg: fmt.Sprintf("%q is not a built-in profile: use one of %s", b.Value, strings.Join(ProfileNames(), ", "))}
		}
		p, pf.Base = base, b.Value
	}
	pv := reflect.ValueOf(&p).Elem()
	for _, f := range fields {
		v, ok := values[f.doc.key]
		if !ok {
			if pf.Base == "" {
				return nil, &ProfileError{Field: f.doc.key, Msg: "missing: give every field, or start the file with base: NAME (a built-in profile) to take the ones it leaves out from there"}
			}
			continue
		}
		if err := set(pv.FieldByIndex(f.index), v.Value); err != nil {
			return nil, &ProfileError{Line: v.Line, Field: f.doc.key, Msg: err.Error()}
		}
	}
	if err := checkProfile(p, fields); err != nil {
		if err.alt != nil && pf.lines[err.Field] == 0 && pf.lines[err.alt.Field] > 0 {
			err = err.alt
		}
		err.Line = pf.lines[err.Field]
		if err.Line == 0 && pf.Base != "" {
			err.Msg += fmt.Sprintf(" (taken from base %s)", pf.Base)
		}
		return nil, err
	}
	if b, err := ProfileByName(p.Name); err == nil {
		if changed := differs(p, b, fields); changed != "" && pf.lines["name"] == 0 {
			return nil, &ProfileError{Field: "name", Msg: fmt.Sprintf("missing: this file changes base %s's %s, so give the profile a name of its own, such as name: myaccount", pf.Base, changed)}
		} else if changed != "" {
			return nil, &ProfileError{Line: pf.lines["name"], Field: "name", Msg: fmt.Sprintf("%s is a built-in profile, and this file changes its %s: give the profile a name of its own", p.Name, changed)}
		}
		pf.Builtin = true
	}
	var canon bytes.Buffer
	if err := WriteProfile(&canon, p); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon.Bytes())
	pf.Profile, pf.SHA256 = p, hex.EncodeToString(sum[:])
	return pf, nil
}

// set parses s into the field v as its type says.
func set(v reflect.Value, s string) error {
	if v.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
				return fmt.Errorf("%s has no unit: write a duration such as %sms or %sus", s, s, s)
			}
			return fmt.Errorf("%q is not a duration: write one such as 650us, 20ms or 1.5s", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.Bool:
		switch s {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			return fmt.Errorf("%q is not true or false", s)
		}
	case reflect.String:
		v.SetString(s)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		v.SetInt(n)
	default:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number from 0", s)
		}
		v.SetUint(n)
	}
	return nil
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// checkProfile checks every field of p: none negative, each its rule, and
// every XMin no more than its XMax. The error's Line is left for the
// caller, who knows the file.
func checkProfile(p Profile, fields []profileField) *ProfileError {
	v := reflect.ValueOf(p)
	byName := map[string]profileField{}
	for _, f := range fields {
		byName[f.goName] = f
	}
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		bad := func(format string, args ...any) *ProfileError {
			return &ProfileError{Field: f.doc.key, Msg: fmt.Sprintf(format, args...)}
		}
		n, numeric := number(fv)
		if numeric && n < 0 {
			return bad("%s must not be negative", format(fv))
		}
		switch f.doc.rule {
		case positiveIfModel:
			if p.Model && numeric && n <= 0 {
				return bad("%s: a profile with model: true needs it above 0", format(fv))
			}
		case entityBudget:
			if p.Model && !p.RequestUnits() && numeric && n <= 0 {
				return bad("%s: a profile with model: true needs it above 0, unless it provisions request units (ru or ru_max)", format(fv))
			}
		case fraction:
			if numeric && n > 1 {
				return bad("%s is not a fraction from 0 to 1", format(fv))
			}
		case spread:
			if numeric && n > maxCV {
				return bad("%g is out of range: a coefficient of variation from 0 to %d (0.5 is the built-in profiles')", n, maxCV)
			}
		case nameRule:
			if !profileName.MatchString(fv.String()) {
				return bad("%q is not a profile name: use up to 64 letters, digits, '.', '-' and '_', such as myaccount", fv.String())
			}
		}
		if lo, ok := strings.CutSuffix(f.goName, "Max"); ok {
			if mf, ok := byName[lo+"Min"]; ok {
				mv := v.FieldByIndex(mf.index)
				if m, _ := number(mv); m > n {
					e := bad("%s is below %s %s: the maximum must be at least the minimum", format(fv), mf.doc.key, format(mv))
					e.alt = &ProfileError{Field: mf.doc.key, Msg: fmt.Sprintf("%s is above %s %s: the minimum must be at most the maximum", format(mv), f.doc.key, format(fv))}
					return e
				}
			}
		}
	}
	return nil
}

// number returns a numeric field's value as a float64.
func number(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	}
	return 0, false
}

// differs returns the key of the first field in which a and b differ, ""
// if none.
func differs(a, b Profile, fields []profileField) string {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for _, f := range fields {
		if !av.FieldByIndex(f.index).Equal(bv.FieldByIndex(f.index)) {
			return f.doc.key
		}
	}
	return ""
}

// suggest names the known key closest to a mistyped one, if one is close.
func suggest(key string, fields []profileField) string {
	best, bestD := "", 3
	for _, f := range fields {
		if d := editDistance(key, f.doc.key); d < bestD {
			best, bestD = f.doc.key, d
		}
	}
	if editDistance(key, baseKey) < bestD {
		best = baseKey
	}
	if best == "" {
		return ": see 'tablebench profile show modern' for the fields"
	}
	return ": did you mean " + best + "?"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// IsProfileFile reports whether a --profile value names a file rather than
// a built-in profile: it has a path separator or ends in .yaml or .yml.
func IsProfileFile(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// profileSummaries says in a line what each built-in profile models.
var profileSummaries = map[string]string{
	"wa2010": "the 2010 case study's service, calibrated to its Figures 3-15, with its 2010 client",
	"modern": "today's published targets: 2,000 entities/s a PartitionKey, 20,000 an account, single-digit ms",
	"cosmos": "Cosmos DB for Table: request units per second split over physical partitions of 10,000 RU/s, 429s",
	"none":   "no latency, no throttling, no load balancing: the raw engine",
}

// ProfileSummary says in a line what the built-in profile name models.
func ProfileSummary(name string) string { return profileSummaries[name] }
