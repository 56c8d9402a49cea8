package engine

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every field of Profile must be in the file form with a key, a unit and a
// meaning: a parameter added without them would be left out of the files
// users write, or written without saying what it means.
func TestProfileFileDocumentsEveryField(t *testing.T) {
	fields, err := profileFields()
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[Profile]()
	exported := 0
	for i := range typ.NumField() {
		if typ.Field(i).IsExported() {
			exported++
		}
	}
	if len(fields) != exported {
		t.Fatalf("%d fields in the file form, %d in Profile", len(fields), exported)
	}
	keys := map[string]string{}
	for _, f := range fields {
		if other, dup := keys[f.doc.key]; dup || f.doc.key == baseKey {
			t.Errorf("Profile.%s: key %q is taken (by %s)", f.goName, f.doc.key, other)
		}
		keys[f.doc.key] = f.goName
	}
	for name := range profileDocs {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("profileDocs documents %s, which Profile does not have", name)
		}
	}
	var b bytes.Buffer
	if err := WriteProfile(&b, WA2010()); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.HasPrefix(line, "#") && !strings.Contains(line, "  # ") {
			t.Errorf("line without its comment: %q", line)
		}
	}
}

// A field the file form does not know is reported by name.
func TestProfileFieldsRefusesAnUndocumentedField(t *testing.T) {
	saved := profileDocs["Burst"]
	delete(profileDocs, "Burst")
	defer func() { profileDocs["Burst"] = saved }()
	if _, err := profileFields(); err == nil || !strings.Contains(err.Error(), "Profile.Burst") {
		t.Fatalf("err = %v, want one naming Profile.Burst", err)
	}
}

func TestEveryBuiltinProfileHasASummary(t *testing.T) {
	for _, n := range ProfileNames() {
		if ProfileSummary(n) == "" {
			t.Errorf("profile %s has no summary in profileSummaries", n)
		}
	}
}

// Each built-in profile, written and read back, is itself: the same
// parameters, known as the built-in.
func TestProfileFileRoundTrip(t *testing.T) {
	for _, name := range ProfileNames() {
		p, _ := ProfileByName(name)
		var b bytes.Buffer
		if err := WriteProfile(&b, p); err != nil {
			t.Fatal(err)
		}
		f, err := ParseProfile(b.Bytes())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b.String())
		}
		if !reflect.DeepEqual(f.Profile, p) || !f.Builtin || f.Base != "" {
			t.Errorf("%s: read back %+v (builtin %v), want %+v", name, f.Profile, f.Builtin, p)
		}
	}
}

func TestWriteProfileFormat(t *testing.T) {
	var b bytes.Buffer
	if err := WriteProfile(&b, WA2010()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nname: wa2010 ", "\nlane_write: 650us ", "\nfe_write: 20ms ", "\nfe_write_per_unit: 5.5ms ",
		"\npartition_rate: 2450 ", "# entities/s one PartitionKey serves before 503 ServerBusy\n",
		"\nhiccup_p: 0.001 ", "\nserver_timeout: 30s ", "\nclient: xl ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// A file that starts from a base changes only what it gives.
func TestProfileFileBase(t *testing.T) {
	f, err := ParseProfile([]byte("name: myaccount\nbase: modern\npartition_rate: 1200\npost_write: 3ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Modern()
	want.Name, want.PartitionKeyRate, want.PostWrite = "myaccount", 1200, 3*time.Millisecond
	if !reflect.DeepEqual(f.Profile, want) || f.Builtin || f.Base != "modern" || f.Line("post_write") != 4 {
		t.Errorf("got %+v (builtin %v, base %q), want %+v", f.Profile, f.Builtin, f.Base, want)
	}
	g, _ := ParseProfile([]byte("# mine\nname: myaccount\nbase: modern\npost_write: 3ms\npartition_rate: 1200.0\n"))
	if g.SHA256 != f.SHA256 {
		t.Errorf("the same parameters hash differently: %s, %s", g.SHA256, f.SHA256)
	}
	h, _ := ParseProfile([]byte("name: myaccount\nbase: modern\npartition_rate: 1300\n"))
	if h.SHA256 == f.SHA256 {
		t.Error("other parameters hash the same")
	}
}

func TestProfileFileErrors(t *testing.T) {
	base := "name: mine\nbase: modern\n"
	for _, tc := range []struct {
		name, file, want string
	}{
		{"typo", base + "partiton_rate: 100\n", "line 3: partiton_rate: not a profile field: did you mean partition_rate?"},
		{"unknown", base + "colour: blue\n", "line 3: colour: not a profile field: see 'tablebench profile show modern' for the fields"},
		{"wrong type", base + "partition_rate: fast\n", `line 3: partition_rate: "fast" is not a number`},
		{"fraction of a whole", base + "servers: 2.5\n", `line 3: servers: "2.5" is not a whole number`},
		{"bool", base + "model: yes\n", `line 3: model: "yes" is not true or false`},
		{"negative rate", base + "account_rate: -5\n", "line 3: account_rate: -5 must not be negative"},
		{"negative duration", base + "fe_read: -1ms\n", "line 3: fe_read: -1ms must not be negative"},
		{"zero servers", base + "servers: 0\n", "line 3: servers: 0: a profile with model: true needs it above 0"},
		{"zero rate", base + "\npartition_rate: 0\n", "line 4: partition_rate: 0: a profile with model: true needs it above 0"},
		{"duration", base + "lane_get: 5 ms\n", `line 3: lane_get: "5 ms" is not a duration: write one such as 650us, 20ms or 1.5s`},
		{"duration without unit", base + "lane_get: 5\n", "line 3: lane_get: 5 has no unit: write a duration such as 5ms or 5us"},
		{"probability", base + "hiccup_p: 1.5\n", "line 3: hiccup_p: 1.5 is not a fraction from 0 to 1"},
		{"a huge spread", base + "cv: 1e308\n", "line 3: cv: 1e+308 is out of range: a coefficient of variation from 0 to 10"},
		{"a huge lane spread", base + "lane_cv: 11\n", "line 3: lane_cv: 11 is out of range"},
		{"min above max", base + "move_min: 10s\n", "line 3: move_min: 10s is above move_max 5s: the minimum must be at most the maximum"},
		{"max below min", base + "hiccup_max: 1ms\n", "line 3: hiccup_max: 1ms is below hiccup_min 20ms: the maximum must be at least the minimum"},
		{"twice", base + "servers: 4\nservers: 5\n", "line 4: servers: given twice (first on line 3): keep one"},
		{"list", base + "servers: [4]\n", "line 3: servers: must be one value on its line, not a list or a map"},
		{"empty value", base + "servers:\n", "line 3: servers: has no value: give one, or leave the line out"},
		{"unknown base", "name: mine\nbase: modem\n", `line 2: base: "modem" is not a built-in profile: use one of ` + strings.Join(ProfileNames(), ", ")},
		{"missing without base", "name: mine\nmodel: true\n", "account_rate: missing: give every field, or start the file with base: NAME"},
		{"missing name", "base: modern\npartition_rate: 1000\n", "name: missing: this file changes base modern's partition_rate, so give the profile a name of its own"},
		{"bad name", "name: my account\nbase: modern\n", `line 1: name: "my account" is not a profile name`},
		{"builtin name changed", "name: modern\nbase: modern\npartition_rate: 1000\n", "line 1: name: modern is a built-in profile, and this file changes its partition_rate: give the profile a name of its own"},
		{"empty", "", "the file is empty"},
		{"not a map", "- a\n- b\n", "line 1: profile: the file must be key: value lines"},
		{"a second document", base + "---\npartition_rate: 1\n", "line 3: a second YAML document"},
		{"not yaml", "name: [\n", "not YAML: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.file))
			var pe *ProfileError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
}
