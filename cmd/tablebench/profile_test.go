package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
)

func TestProfileCommand(t *testing.T) {
	for _, args := range [][]string{{"profile"}, {"profile", "list"}} {
		code, out, errOut := tb(t, context.Background(), nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, n := range engine.ProfileNames() {
			if !strings.Contains(out, "\n"+n+" ") && !strings.HasPrefix(out, n+" ") {
				t.Errorf("%v does not list %s:\n%s", args, n, out)
			}
		}
	}
	for _, n := range engine.ProfileNames() {
		code, out, errOut := tb(t, context.Background(), nil, "profile", "show", n)
		if code != 0 {
			t.Fatalf("show %s: exit %d: %s", n, code, errOut)
		}
		f, err := engine.ParseProfile([]byte(out))
		p, _ := engine.ProfileByName(n)
		if err != nil || !reflect.DeepEqual(f.Profile, p) {
			t.Errorf("show %s prints what reads back as %+v, %v", n, f, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile", "show", "modren"}, `unknown profile "modren"`},
		{[]string{"profile", "show"}, "show takes one profile"},
		{[]string{"profile", "show", "a", "b"}, "show takes one profile"},
		{[]string{"profile", "bogus"}, `unexpected argument "bogus"`},
	} {
		code, out, errOut := tb(t, context.Background(), nil, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// writeProfile writes a profile file in dir and returns its path.
func writeProfile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readRun reads the one run record stored in dir, and its bytes.
func readRun(t *testing.T, dir string) (*results.Run, []byte) {
	t.Helper()
	jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(jsons) != 1 {
		t.Fatalf("%s holds %v", dir, jsons)
	}
	b, err := os.ReadFile(jsons[0])
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadRun(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// A built-in profile printed and loaded back runs as the built-in: the same
// record, byte for byte, for the same seed. A changed file under a name of
// its own is recorded as what it is: its name, its file and its hash.
func TestProfileFileRunsAsTheBuiltin(t *testing.T) {
	tmp := t.TempDir()
	_, shown, _ := tb(t, context.Background(), nil, "profile", "show", "modern")
	file := writeProfile(t, tmp, "m.yaml", shown)
	mine := writeProfile(t, tmp, "mine.yaml", "name: mine\nbase: modern\npartition_rate: 300\n")
	args := []string{"run", "--quiet", "--vms=2", "--threads=5", "--partition=shared", "--duration=5s", "--warmup=1s", "--seed=7"}
	records := map[string][]byte{}
	for _, profile := range []string{"modern", file, mine} {
		dir := filepath.Join(tmp, filepath.Base(profile)+".out")
		if code, _, errOut := tb(t, context.Background(), nil, append(args, "--profile="+profile, "--out="+dir)...); code != 0 {
			t.Fatalf("--profile %s: exit %d: %s", profile, code, errOut)
		}
		r, b := readRun(t, dir)
		records[profile] = b
		hlogs, _ := filepath.Glob(filepath.Join(dir, "*.hlog"))
		h, _ := os.ReadFile(hlogs[0])
		records[profile+".hlog"] = h
		switch profile {
		case mine:
			f, _ := engine.ParseProfile([]byte("name: mine\nbase: modern\npartition_rate: 300\n"))
			if r.Env.Profile != "mine" || r.Env.ProfileFile != mine || r.Env.ProfileSHA256 != f.SHA256 {
				t.Errorf("a changed profile is recorded as %+v", r.Env)
			}
			if r.EntitiesPerSec > 330 {
				t.Errorf("a PartitionKey of 300 entities/s served %.0f", r.EntitiesPerSec)
			}
		default:
			if r.Env.Profile != "modern" || r.Env.ProfileFile != "" || r.Env.ProfileSHA256 != "" {
				t.Errorf("--profile %s is recorded as %+v", profile, r.Env)
			}
		}
	}
	if !bytes.Equal(records["modern"], records[file]) || !bytes.Equal(records["modern.hlog"], records[file+".hlog"]) {
		t.Error("the built-in profile and its file, loaded back, give different records")
	}
}

// Today's service runs through today's client unless --vm-size says
// otherwise; the 2010 profile keeps the 2010 XL VM.
func TestClientFollowsTheProfile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "xl"},
		{[]string{"--profile=modern"}, "modern"},
		{[]string{"--profile=modern", "--vm-size=xl"}, "xl"},
		{[]string{"--profile=wa2010", "--vm-size=modern"}, "modern"},
	} {
		args := append([]string{"run", "--json", "--quiet", "--duration=2s", "--warmup=0s"}, tc.args...)
		code, out, errOut := tb(t, context.Background(), nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		r, err := results.ReadRun(strings.NewReader(out))
		if err != nil || r.Setup.VMSize != tc.want {
			t.Errorf("%v: VM size %q (%v), want %s", tc.args, r.Setup.VMSize, err, tc.want)
		}
	}
}

// A bad profile file is one line naming the field and its line, exit 2,
// wherever a profile is taken, and nothing runs.
func TestBadProfileFileRunsNothing(t *testing.T) {
	tmp := t.TempDir()
	bad := writeProfile(t, tmp, "bad.yaml", "name: mine\nbase: modern\npartiton_rate: 300\n")
	out := filepath.Join(tmp, "out")
	for _, args := range [][]string{
		{"run", "--out", out},
		{"sweep", "--vms", "1,2", "--out", out},
		{"figures", "--quick", "--only", "3", "--out", out},
		{"experiments", "--quick", "--only", "modern", "--out", out},
		{"serve", "--addr", "127.0.0.1:0"},
	} {
		code, stdout, errOut := tb(t, context.Background(), nil, append(args, "--profile", bad)...)
		want := "--profile " + bad + ": line 3: partiton_rate: not a profile field: did you mean partition_rate?"
		if code != 2 || stdout != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and the one line %q", args[0], code, stdout, errOut, want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%s wrote %v", args[0], entries)
		}
	}
}

// A resumed suite refuses a profile file that gives other parameters under
// the name the suite was made with, and takes the same parameters from
// another file.
func TestResumeRefusesAnotherProfileOfTheSameName(t *testing.T) {
	tmp := t.TempDir()
	a := writeProfile(t, tmp, "a.yaml", "name: mine\nbase: modern\npartition_rate: 300\n")
	same := writeProfile(t, tmp, "same.yml", "# the same model\nbase: modern\nname: mine\npartition_rate: 300.0\n")
	other := writeProfile(t, tmp, "other.yaml", "name: mine\nbase: modern\npartition_rate: 500\n")
	out := filepath.Join(tmp, "out")
	sweep := func(vms string, more ...string) []string {
		return append([]string{"sweep", "--quiet", "--vms", vms, "--threads", "2", "--duration", "2s", "--warmup", "0s", "--out", out}, more...)
	}
	suite(t, sweep("1", "--profile", a)...)
	code, _, errOut := tb(t, context.Background(), nil, sweep("1,2", "--resume", "--profile", other)...)
	if code != 2 || !strings.Contains(errOut, "was made with profile mine from a file (sha256 ") || !strings.Contains(errOut, "gives other parameters under its name") {
		t.Errorf("resume with another model of the same name: exit %d, %s", code, errOut)
	}
	suite(t, sweep("1,2", "--resume", "--profile", same)...)
	if set := readSet(t, out); len(set.Runs) != 2 || set.Settings["profile"] != "mine" {
		t.Errorf("resumed set: %d runs, settings %v", len(set.Runs), set.Settings)
	}
}

// serve answers under a profile file's model and says which file it is.
func TestServeTakesAProfileFile(t *testing.T) {
	file := writeProfile(t, t.TempDir(), "slow.yaml", "name: slowpk\nbase: modern\npartition_rate: 123\n")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--profile", file}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	}()
	for i := 0; i < 1000 && !strings.Contains(out.String(), "budgets:"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "serving the engine (profile slowpk from "+file+", sha256 ") || !strings.Contains(s, "budgets: 123 entities/s per PartitionKey") {
		t.Errorf("serve says:\n%s", s)
	}
}

// A set whose runs ran on two models of one name, from two files, is
// refused like a set of two profiles.
func TestSameProfileTellsFilesApart(t *testing.T) {
	set := &results.Set{Settings: results.Settings{"profile": "mine", settingProfileSHA: "aaaa"}}
	set.Runs = []*results.Run{
		{ID: "a", Env: results.Environment{Target: "engine", Profile: "mine", ProfileSHA256: "aaaa"}},
		{ID: "b", Env: results.Environment{Target: "engine", Profile: "mine", ProfileSHA256: "bbbb"}},
	}
	err := sameProfile(set, nil)
	if err == nil || !strings.Contains(err.Error(), "run b ran on profile mine from a file (sha256 bbbb), but the set was made with profile mine from a file (sha256 aaaa)") {
		t.Errorf("err = %v", err)
	}
	set.Runs = set.Runs[:1]
	if err := sameProfile(set, nil); err != nil {
		t.Errorf("one model refused: %v", err)
	}
}
