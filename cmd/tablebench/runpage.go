package main

import (
	"cmp"
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
// each run --out, other JSON files passed over), each with its interval
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
		if err != nil || r.ID == "" || len(r.Spec) == 0 || filepath.Base(path) != r.ID+".json" {
			continue // not a run record of this directory's
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
