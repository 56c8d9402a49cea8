package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Set is a stored result set: every run of a suite or sweep and the claims
// checked against them. Its JSON form is results.json.
type Set struct {
	Tablebench string          `json:"tablebench"`
	Created    time.Time       `json:"created"`
	Updated    time.Time       `json:"updated"`
	Mode       string          `json:"mode"`              // full, quick, or sweep
	Command    string          `json:"command"`           // how it was made, secrets redacted
	Figures    []int           `json:"figures,omitempty"` // the catalog figures it covers
	Sweep      json.RawMessage `json:"sweep,omitempty"`   // a sweep's definition
	// Settings are the settings it was made with that change its numbers
	// besides each run's spec, by the flag that sets them: a suite resumed
	// with other settings would mix two kinds of numbers in one set.
	Settings Settings       `json:"settings,omitempty"`
	Runs     []*Run         `json:"runs"`
	Claims   []CheckedClaim `json:"claims,omitempty"`
}

// Settings are what a result set's numbers depend on besides its runs'
// specs: the target and its engine model, the seed, the mode. Each is a
// flag's name and its value as the flag would take it.
type Settings map[string]string

// SettingTarget is the setting that names the target; every set made by a
// suite records it.
const SettingTarget = "target"

// Diff returns the first setting in which s and o differ (the target
// first, which the others depend on, then by name), with its value in each
// ("" where one does not set it); ok is false when they agree.
func (s Settings) Diff(o Settings) (name, mine, theirs string, ok bool) {
	all := maps.Clone(s)
	maps.Copy(all, o)
	delete(all, SettingTarget)
	for _, n := range append([]string{SettingTarget}, slices.Sorted(maps.Keys(all))...) {
		if s[n] != o[n] {
			return n, s[n], o[n], true
		}
	}
	return "", "", "", false
}

// Dir is a result set stored in a directory: results.json, one .hlog per
// run, CSV files per figure. Runs are written as they finish, so an
// interrupted suite loses nothing. It is safe for concurrent use.
type Dir struct {
	Path  string
	mu    sync.Mutex
	Set   Set
	lock  *os.File
	saved time.Time // when results.json was last written
	dirty bool      // runs added since
}

// saveEvery is how often Add rewrites results.json: every run added would
// make a suite's writing quadratic in its runs. A run added in between is
// written by the next Add, Save or Close; after a crash it is run again
// on --resume, its interval log overwritten.
const saveEvery = 2 * time.Second

// LockFile is the file a writer of a result directory holds locked.
const LockFile = ".lock"

// Lock makes this process the directory's only writer until Close: a second
// process that would write the same directory is refused at once, rather
// than both writing and losing runs.
func (d *Dir) Lock() error {
	f, err := os.OpenFile(filepath.Join(d.Path, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("locking %s: %w", d.Path, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return fmt.Errorf("%s is being written by another tablebench process: wait for it to finish, or give another --out", d.Path)
	}
	if err := d.removeTemps(); err != nil {
		f.Close()
		return err
	}
	d.lock = f
	return nil
}

// tempPrefix starts the name of every file WriteFileAtomic writes through.
const tempPrefix = ".tmp-"

// removeTemps removes what writes cut short (a process killed mid-write)
// left behind: files with the temporary prefix. Only the holder of the
// lock removes them, so none is a write still going on.
func (d *Dir) removeTemps() error {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", d.Path, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(d.Path, e.Name())); err != nil {
				return fmt.Errorf("removing a stale temporary file: %w", err)
			}
		}
	}
	return nil
}

// Close releases the directory's lock, if this process holds it.
func (d *Dir) Close() error {
	d.mu.Lock()
	var serr error
	if d.dirty {
		serr = d.saveLocked()
	}
	d.mu.Unlock()
	if d.lock == nil {
		return serr
	}
	err := errors.Join(serr, d.lock.Close())
	d.lock = nil
	return err
}

// Missing reports whether a stored run lacks a file it needs: its interval
// log.
func (d *Dir) Missing(r *Run) bool {
	_, err := os.Stat(d.HlogPath(r))
	return err != nil
}

// CheckHlog checks that a stored run's interval log is its own, as
// ReadHlog does, without keeping its histograms.
func (d *Dir) CheckHlog(r *Run) error {
	c := *r
	return c.ReadHlog(d.HlogPath(r))
}

// HlogPath is where a stored run's interval log is.
func (d *Dir) HlogPath(r *Run) string { return filepath.Join(d.Path, r.ID+".hlog") }

// SetFile is the name of a result set's file in its directory.
const SetFile = "results.json"

// OpenDir opens (creating it if need be) a result directory and reads its
// results.json if there is one.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("creating result directory: %w", err)
	}
	d := &Dir{Path: path}
	f, err := os.Open(filepath.Join(path, SetFile))
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(&d.Set); err != nil {
		return nil, fmt.Errorf("reading %s: %w; fix or remove the file", filepath.Join(path, SetFile), err)
	}
	if err := d.Set.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(path, SetFile), err)
	}
	return d, nil
}

// ReadDir reads a stored result set to report on it; unlike OpenDir it
// creates nothing, and it refuses a set that holds no runs.
func ReadDir(path string) (*Dir, error) {
	if _, err := os.Stat(filepath.Join(path, SetFile)); err != nil {
		return nil, fmt.Errorf("%s holds no results: no %s there", path, SetFile)
	}
	d, err := OpenDir(path)
	if err != nil {
		return nil, err
	}
	if len(d.Set.Runs) == 0 {
		return nil, fmt.Errorf("%s holds no runs: its suite stopped before a run finished; finish it with --resume --out %s", filepath.Join(path, SetFile), path)
	}
	return d, nil
}

// Find returns the stored run with the given ID, or nil.
func (d *Dir) Find(id string) *Run {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.Set.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Add stores a finished run: its interval log and the updated results.json,
// replacing a stored run with its ID. Once written, the run's per-second
// histograms are dropped from memory (ReadHlog reads them back): a suite
// keeps every run it has done, and their histograms were most of its
// memory.
func (d *Dir) Add(r *Run) error {
	if err := WriteFileAtomic(filepath.Join(d.Path, r.ID+".hlog"), r.WriteHlog); err != nil {
		return err
	}
	r.IntervalHists = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	replaced := false
	for i, old := range d.Set.Runs {
		if old.ID == r.ID {
			d.Set.Runs[i], replaced = r, true
		}
	}
	if !replaced {
		d.Set.Runs = append(d.Set.Runs, r)
	}
	if time.Since(d.saved) < saveEvery {
		d.dirty = true
		return nil
	}
	return d.saveLocked()
}

// Save writes results.json.
func (d *Dir) Save() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.saveLocked()
}

func (d *Dir) saveLocked() error {
	if d.Set.Created.IsZero() {
		d.Set.Created = time.Now().UTC()
	}
	d.Set.Updated = time.Now().UTC()
	if d.Set.Runs == nil {
		d.Set.Runs = []*Run{} // a suite stopped before its first run holds [], not null
	}
	if err := WriteFileAtomic(filepath.Join(d.Path, SetFile), func(w io.Writer) error { return Write(w, &d.Set) }); err != nil {
		return err
	}
	d.saved, d.dirty = time.Now(), false
	return nil
}

// WriteFileAtomic writes a file through a temporary one in the same
// directory, so it is whole or absent.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix+filepath.Base(path))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it private
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
