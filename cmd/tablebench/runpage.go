package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/tablebench/tablebench/charts"
	"github.com/tablebench/tablebench/results"
)

// readRunDir reads the run records a run directory holds (the ID.json of
// each run --out; other JSON files passed over, a record that does not
// read or is misnamed refused), each with its interval
// log where it has one, oldest first.
func readRunDir(dir string) ([]*results.Run, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var runs []*results.Run
	for _, path := range paths {
		if filepath.Base(path) == results.SetFile {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		r, err := results.ReadRun(f)
		f.Close()
		if !looksLikeRun(path) {
			continue // another JSON file, not a run record
		}
		// A record that was edited until it no longer reads, or renamed, is
		// refused: passed over, its run would be missing from the page
		// without a word.
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable run record (edited?): %v; restore it or run it again", path, err)
		}
		if filepath.Base(path) != r.ID+".json" {
			return nil, fmt.Errorf("%s holds run %q, whose record is named %q: renamed, or copied from another directory; restore its name or remove it", path, r.ID, r.ID+".json")
		}
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		hlog := filepath.Join(dir, r.ID+".hlog")
		if err := r.ReadHlog(hlog); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		runs = append(runs, r)
	}
	slices.SortStableFunc(runs, func(a, b *results.Run) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ID, b.ID))
	})
	return runs, nil
}

// looksLikeRun reports whether a JSON file is meant as a run record: an
// object with a run's id and spec, whatever else of it reads.
func looksLikeRun(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var probe struct {
		ID   json.RawMessage `json:"id"`
		Spec json.RawMessage `json:"spec"`
	}
	return json.Unmarshal(data, &probe) == nil && len(probe.ID) > 0 && len(probe.Spec) > 0
}

// writeRunPages renders the report of a run directory from what it
// stores, and returns its index page.
func writeRunPages(dir string) (string, error) {
	runs, err := readRunDir(dir)
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("%s holds no results: no %s and no run records there", dir, results.SetFile)
	}
	if err := charts.WriteRuns(dir, runs); err != nil {
		return "", err
	}
	return filepath.Join(dir, "index.html"), nil
}

// holdsSuite reports whether dir holds a suite's results, whose report a
// run's page must not replace.
func holdsSuite(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.SetFile))
	return err == nil
}
