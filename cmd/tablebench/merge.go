package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads/casestudy"
)

// mergeCmd combines the records of a sharded run, or the result
// directories of a sharded suite, into one.
func mergeCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "merge", "[--json] [--out DIR] SHARD...")
	asJSON := fs.Bool("json", false, "print the merged run records as JSON")
	out := fs.String("out", "", "directory for the merged record(s); a merged suite needs one, and gets a report there")
	if err := parseWords(fs, args); err != nil {
		return err
	}
	inputs := fs.Args()
	if len(inputs) == 0 {
		return usagef("give the shards to merge: their run records (run --json, or the .json of run --out) or their suite directories")
	}
	sets, runs, err := readShards(e, inputs)
	if err != nil {
		return err
	}
	if len(sets) > 0 && len(runs) > 0 {
		return usagef("give suite directories or run records, not both")
	}
	if len(sets) > 0 {
		return mergeSuites(e, sets, *out)
	}
	merged, err := mergeByID(runs)
	if err != nil {
		return err
	}
	for _, m := range merged {
		if *asJSON {
			if err := results.Write(e.stdout, m); err != nil {
				return err
			}
		} else {
			results.WriteSummary(e.stdout, m)
			fmt.Fprintf(e.stdout, "  merged from      %d shards\n", len(m.MergedFrom))
		}
		if *out != "" {
			if err := os.MkdirAll(*out, 0o755); err != nil {
				return usagef("--out: cannot create %s: %v", *out, err)
			}
			if err := store(*out, m); err != nil {
				return fmt.Errorf("the merged run above could not be stored in %s: %w", *out, err)
			}
		}
	}
	return nil
}

// readShards reads what merge is given: suite directories (each with its
// runs' interval logs), or run records in files and in directories of them.
func readShards(e *env, inputs []string) (sets []*results.Dir, runs []*results.Run, err error) {
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, nil, usagef("%s: %v", in, errors.Unwrap(err))
		}
		var rs []*results.Run
		switch _, serr := os.Stat(filepath.Join(in, results.SetFile)); {
		case st.IsDir() && serr == nil:
			d, err := readSuiteShard(e, in)
			if err != nil {
				return nil, nil, err
			}
			sets = append(sets, d)
			continue
		case st.IsDir():
			files, _ := filepath.Glob(filepath.Join(in, "*.json"))
			if len(files) == 0 {
				return nil, nil, usagef("%s holds no run records and no %s", in, results.SetFile)
			}
			for _, f := range files {
				frs, err := readRecords(f)
				if err != nil {
					return nil, nil, err
				}
				rs = append(rs, frs...)
			}
		default:
			if rs, err = readRecords(in); err != nil {
				return nil, nil, err
			}
		}
		runs = append(runs, rs...)
	}
	return sets, runs, nil
}

// readSuiteShard reads a shard's suite directory with its runs' interval
// logs; a run without one is merged without per-second percentiles.
func readSuiteShard(e *env, in string) (*results.Dir, error) {
	d, err := results.ReadDir(in)
	if err != nil {
		return nil, usagef("%v", err)
	}
	for _, r := range d.Set.Runs {
		if d.Missing(r) { // the merged run's per-second percentiles are left out
			fmt.Fprintf(e.stderr, "warning: run %s has no interval log in %s: the merged run has no per-second percentiles\n", r.ID, in)
			continue
		}
		if err := r.ReadHlog(d.HlogPath(r)); err != nil {
			return nil, usagef("%v", err)
		}
	}
	return d, nil
}

// readRecords reads shards' run records from a file: one record (the .json
// of run --out, with its interval log beside it), or the lines of several
// pods' logs, where each run --json record is a line of its own and other
// lines (warnings) are passed over.
func readRecords(path string) ([]*results.Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%s: %v", path, errors.Unwrap(err))
	}
	if r, err := results.ReadRun(bytes.NewReader(data)); err == nil && bytes.Count(bytes.TrimSpace(data), []byte("\n{")) == 0 {
		hlog := strings.TrimSuffix(path, ".json") + ".hlog"
		if _, err := os.Stat(hlog); err == nil {
			if err := r.ReadHlog(hlog); err != nil {
				return nil, usagef("%v", err)
			}
		}
		return []*results.Run{r}, nil
	}
	var out []*results.Run
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		r, err := results.ReadRun(bytes.NewReader(line))
		if err != nil {
			return nil, usagef("%s, line %d: %v", path, i+1, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, usagef("%s holds no run record", path)
	}
	return out, nil
}

// mergeByID merges the shards of each run, run by run.
func mergeByID(runs []*results.Run) ([]*results.Run, error) {
	byID := map[string][]*results.Run{}
	var ids []string
	for _, r := range runs {
		if r.ID == "" || len(r.Spec) == 0 {
			return nil, usagef("a record without a run ID or spec is not a run record: give the .json of run --out or the lines of run --json")
		}
		if _, ok := byID[r.ID]; !ok {
			ids = append(ids, r.ID)
		}
		byID[r.ID] = append(byID[r.ID], r)
	}
	var out []*results.Run
	for _, id := range ids {
		if rs := byID[id]; len(rs) == 1 && rs[0].Shard == nil { // a run too small to shard: one shard ran it whole
			if err := rs[0].Check(); err != nil {
				return nil, usagef("%v", err)
			}
			out = append(out, rs[0])
			continue
		}
		m, err := results.MergeRuns(byID[id])
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// unsharded returns a shard's settings without its shard: the settings of
// the suite merged from every shard.
func unsharded(s results.Settings) results.Settings {
	if s == nil {
		return nil
	}
	s = maps.Clone(s)
	delete(s, "shard")
	return s
}

// mergeSuites merges the shard directories of one suite into out, checks
// the claims on the merged runs and writes the report.
func mergeSuites(e *env, sets []*results.Dir, out string) error {
	if out == "" {
		return usagef("a merged suite needs --out DIR for its results and report")
	}
	first := sets[0].Set
	for _, d := range sets[1:] {
		if d.Set.Mode != first.Mode || !slices.Equal(d.Set.Figures, first.Figures) || string(d.Set.Sweep) != string(first.Sweep) {
			return usagef("%s is not a shard of the same suite as %s (mode, figures or sweep differ)", d.Path, sets[0].Path)
		}
		if name, a, b, differ := unsharded(first.Settings).Diff(unsharded(d.Set.Settings)); differ {
			return usagef("%s and %s are not shards of one suite: one was made %s, the other %s", sets[0].Path, d.Path, withFlag(name, a), withFlag(name, b))
		}
	}
	var runs []*results.Run
	for _, d := range sets {
		runs = append(runs, d.Set.Runs...)
	}
	merged, err := mergeByID(runs)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(out, results.SetFile)); err == nil {
		return usagef("--out %s already holds results: give an empty directory", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return usagef("--out: %v", err)
	}
	dir, err := results.OpenDir(out)
	if err != nil {
		return usagef("--out: %v", err)
	}
	if err := dir.Lock(); err != nil {
		return usagef("--out: %v", err)
	}
	defer dir.Close()
	dir.Set.Tablebench, dir.Set.Mode, dir.Set.Figures, dir.Set.Sweep, dir.Set.Settings = version, first.Mode, first.Figures, first.Sweep, unsharded(first.Settings)
	var paths []string
	for _, d := range sets {
		paths = append(paths, d.Path)
	}
	dir.Set.Command = "tablebench merge --out " + out + " " + strings.Join(paths, " ")
	for _, m := range merged {
		if err := dir.Add(m); err != nil {
			return err
		}
	}
	figs, err := setFigures(&dir.Set)
	if err != nil {
		return err
	}
	var claims []results.CheckedClaim
	if dir.Set.Mode != "sweep" {
		claims = casestudy.Check(figs, dir.Set.Runs)
	}
	dir.Set.Claims = claims
	if err := dir.Save(); err != nil {
		return err
	}
	summary := []string{fmt.Sprintf("Merged from %d shards: %s.", len(sets), strings.Join(paths, ", ")), "Made by: " + first.Command}
	return finishReport(e, &suiteFlags{}, dir, figs, claims, summary)
}
