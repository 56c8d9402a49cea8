package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"strings"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/workloads/vm"
)

// engineUse is how a command runs the engine, which decides the defaults
// of some of its flags.
type engineUse int

const (
	// inProcess: run, figures, experiments and sweep drive the engine in
	// this process, in virtual time unless --time-scale says otherwise.
	inProcess engineUse = iota
	// served: serve answers clients over HTTP, in wall time, and a profile
	// that models no servers starts its tables unsplit.
	served
)

// engineFlags configure the in-tree engine: every command that has one
// gives each the same name and meaning; only the defaults that must
// differ (serve's wall time) differ, and their help says so.
type engineFlags struct {
	profile   string
	timeScale float64
	presplit  bool
	balancer  string
	// budgets: registered where a single engine is configured (run and
	// serve); a suite's claims hold for the profile's own budgets.
	partitionRate, accountRate, latencyScale float64
	// ru and ruMax provision the cosmos profile's throughput.
	ru, ruMax float64

	use engineUse
	fs  *flag.FlagSet // where --presplit was or was not given
	// files holds the profile files read, by --profile's value, shared by
	// every copy of the flags: a suite reads its file once, so every run
	// and the settings it records see the same profile.
	files map[string]*profileFile
}

// profileFile is a profile file as --profile named it.
type profileFile struct {
	path string
	*engine.ProfileFile
}

// engineFlagNames are the flags engineFlags may register: they configure
// the in-tree engine and nothing else.
var engineFlagNames = []string{"profile", "time-scale", "presplit", "balancer", "partition-rate", "account-rate", "latency-scale", "ru", "ru-max"}

// register binds the engine's flags for a command that runs it as use
// says; budgets adds the rates and the latency scale.
func (f *engineFlags) register(fs *flag.FlagSet, use engineUse, budgets bool) {
	f.use, f.fs, f.latencyScale, f.files = use, fs, 1, map[string]*profileFile{}
	fs.StringVar(&f.profile, "profile", "wa2010", "engine model: wa2010 (the 2010 case study), modern (today's targets), cosmos (Cosmos DB for Table, in request units; docs/cosmos.md), none (no latency, no throttling), or a profile FILE.yaml (see 'tablebench profile show')")
	fs.Float64Var(&f.ru, "ru", 0, "engine, profile cosmos: provisioned throughput of each table in RU/s, 400 to 1,000,000 (default: 100,000, the Table service's 20,000 entities/s of 1 KB writes)")
	fs.Float64Var(&f.ruMax, "ru-max", 0, "engine, profile cosmos: autoscale instead, with this maximum in RU/s, 1,000 to 1,000,000: each table scales between 10% and 100% of it at once")
	switch use {
	case served:
		fs.Float64Var(&f.timeScale, "time-scale", 1, "engine: model seconds per wall second, above 0 up to 1000; serve answers clients in wall time, so its default is 1, as the service would, and 0 (virtual time) is refused")
		fs.BoolVar(&f.presplit, "presplit", true, "engine: start tables split into one range partition per server core, as after a warm-up (default: true under wa2010 and modern; false under none, which models no servers, so a scan is not cut into a page per range partition)")
	default:
		fs.Float64Var(&f.timeScale, "time-scale", 0, "engine: 0 runs in virtual time, as fast as the CPU allows and exact (profile none, which models no time, then runs in wall time); a factor above 0 runs in wall time that much faster, 1 as the service would")
		fs.BoolVar(&f.presplit, "presplit", true, "engine: start tables split into one range partition per server core, as after the case study's warm-up; false starts them cold in one range partition")
	}
	fs.StringVar(&f.balancer, "balancer", "default", "engine: load balancer: default (decides in 5-10 min), accelerated (15-30 s) or off")
	if budgets {
		fs.Float64Var(&f.partitionRate, "partition-rate", 0, "engine: entities/s one PartitionKey serves before 503 ServerBusy (default: the profile's; any profile, none included)")
		fs.Float64Var(&f.accountRate, "account-rate", 0, "engine: entities/s the account serves before 503 ServerBusy (default: the profile's)")
		fs.Float64Var(&f.latencyScale, "latency-scale", 1, "engine: multiply the profile's latencies (front end, commit, stalls) by this factor; a partition's capacity is kept")
	}
}

// config returns the engine configuration the flags describe, seeded with
// seed. It checks every flag and builds nothing, so bad flags fail before
// anything is built or run. A time scale of 0 stays 0 here: the caller
// decides how to run in virtual time.
func (f *engineFlags) config(seed uint64) (engine.Config, error) {
	cfg := engine.DefaultConfig()
	p, _, err := f.resolveProfile()
	if err != nil {
		return cfg, err
	}
	// Each range is written as what is in it, so that NaN, which no
	// comparison holds for, is out of it.
	switch {
	case f.use == served && !(f.timeScale > 0 && f.timeScale <= 1000):
		return cfg, usagef("--time-scale %g is out of range: use a factor above 0 up to 1000", f.timeScale)
	case !(f.timeScale >= 0 && f.timeScale <= 1000):
		return cfg, usagef("--time-scale %g is out of range: use 0 (virtual time, the default) or a factor up to 1000; 1 is wall time", f.timeScale)
	}
	switch f.balancer {
	case "default":
	case "accelerated":
		cfg.Balancer = engine.AcceleratedBalancerConfig()
	case "off":
		cfg.Balancer.Enabled = false
	default:
		return cfg, usagef("--balancer %q is not known: use default, accelerated or off", f.balancer)
	}
	if !(f.partitionRate >= 0 && f.accountRate >= 0) {
		return cfg, usagef("--partition-rate and --account-rate must be positive entities/s, such as 200")
	}
	if !(f.latencyScale > 0 && f.latencyScale <= 1000) {
		return cfg, usagef("--latency-scale %g is out of range: use a factor above 0 up to 1000", f.latencyScale)
	}
	if f.latencyScale != 1 && !p.Model {
		return cfg, usagef("--latency-scale: profile %s models no latency; use wa2010, modern, cosmos or a profile with model: true", p.Name)
	}
	if p.RequestUnits() && (f.partitionRate > 0 || f.accountRate > 0) {
		return cfg, usagef("--partition-rate and --account-rate are the Table service's budgets in entities/s; profile cosmos provisions request units: use --ru or --ru-max")
	}
	if f.ru != 0 || f.ruMax != 0 {
		if !p.RequestUnits() {
			return cfg, usagef("--ru and --ru-max provision request units: use them with --profile cosmos")
		}
		switch {
		case f.ru != 0 && f.ruMax != 0:
			return cfg, usagef("--ru and --ru-max: give one, manual throughput or an autoscale maximum")
		case f.ru != 0 && !(f.ru >= engine.MinRU && f.ru <= engine.MaxRU):
			return cfg, usagef("--ru %g is out of range: use %d to %d RU/s", f.ru, engine.MinRU, engine.MaxRU)
		case f.ruMax != 0 && !(f.ruMax >= engine.MinRUMax && f.ruMax <= engine.MaxRU):
			return cfg, usagef("--ru-max %g is out of range: use %d to %d RU/s", f.ruMax, engine.MinRUMax, engine.MaxRU)
		case f.ru != 0:
			p.RU = f.ru
		default:
			p.RU, p.RUMax = 0, f.ruMax
		}
	}
	cfg.Profile, cfg.TimeScale, cfg.Seed = p, f.timeScale, seed
	if f.latencyScale != 1 {
		cfg.Profile = p.ScaleLatency(f.latencyScale)
	}
	cfg.PartitionRate, cfg.AccountRate = f.partitionRate, f.accountRate
	if f.split(p) {
		cfg.PreSplit = p.SteadySplit()
	}
	return cfg, nil
}

// split reports whether tables start split under profile p. A served
// engine's range partitions only matter to the model: unmodelled, they
// would only end a query's pages at their bounds, which a client of a
// local endpoint would read as the service's paging; so there they start
// unsplit unless --presplit is given.
func (f *engineFlags) split(p engine.Profile) bool {
	if f.use == served && !p.Model && (f.fs == nil || !given(f.fs, "presplit")) {
		return false
	}
	return f.presplit
}

// resolveProfile returns the profile --profile names: a built-in one, or
// the profile file it names (anything with a path separator or ending in
// .yaml or .yml), read once; file is nil for a built-in profile.
func (f *engineFlags) resolveProfile() (p engine.Profile, file *profileFile, err error) {
	if !engine.IsProfileFile(f.profile) {
		p, err := engine.ProfileByName(f.profile)
		if err != nil {
			return p, nil, usagef("--profile: %v, or a profile file such as mine.yaml ('tablebench profile show modern > mine.yaml' writes one)", err)
		}
		return p, nil, nil
	}
	if file := f.files[f.profile]; file != nil {
		return file.Profile, file, nil
	}
	file, err = loadProfile(f.profile)
	if err != nil {
		return p, nil, err
	}
	if f.files != nil {
		f.files[f.profile] = file
	}
	return file.Profile, file, nil
}

// loadProfile reads and checks the profile file at path, the client it
// names included; a mistake is one line naming the field and its line.
func loadProfile(path string) (*profileFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("--profile %s: %v; give a profile file, or one of %s", path, err, strings.Join(engine.ProfileNames(), ", "))
	}
	pf, err := engine.ParseProfile(data)
	if err != nil {
		return nil, usagef("--profile %s: %v", path, err)
	}
	if c := pf.Profile.Client; c != "" {
		if _, err := vm.ParseSize(c); err != nil {
			return nil, usagef("--profile %s: %v", path, &engine.ProfileError{Line: pf.Line("client"), Field: "client", Msg: err.Error()})
		}
	}
	return &profileFile{path: path, ProfileFile: pf}, nil
}
