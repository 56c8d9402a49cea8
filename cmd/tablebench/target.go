package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/workloads"
	"github.com/tablebench/tablebench/workloads/aztarget"
	"github.com/tablebench/tablebench/workloads/enginetarget"
	"github.com/tablebench/tablebench/workloads/gctune"
)

const version = workloads.Version

// targetFlags are the flags that choose and configure a target; run,
// figures and sweep share them.
type targetFlags struct {
	target string
	engineFlags
	az   aztarget.Config
	keep bool
	yes  bool
}

// register binds the target's flags; budgets adds the engine's rates and
// latency scale (run's single engine has them, a suite's profile decides).
func (t *targetFlags) register(fs *flag.FlagSet, budgets bool) {
	az := aztarget.DefaultConfig()
	t.az = az
	fs.StringVar(&t.target, "target", "engine", "engine (the in-tree engine, in process) or table (a Table endpoint through the Azure SDK)")
	t.engineFlags.register(fs, inProcess, budgets)
	fs.StringVar(&t.az.Auth, "auth", "", "table: connection-string, key, sas or entra (default: a connection string, or key/sas when --endpoint and their variable are set)")
	fs.StringVar(&t.az.ConnectionStringEnv, "connection-string-env", az.ConnectionStringEnv, "table: environment variable holding the connection string")
	fs.StringVar(&t.az.Endpoint, "endpoint", "", "table: the table service URL, e.g. https://ACCOUNT.table.core.windows.net or http://127.0.0.1:10002/devstoreaccount1")
	fs.StringVar(&t.az.Account, "account", "", "table: account name for key auth (default: from the endpoint)")
	fs.StringVar(&t.az.KeyEnv, "account-key-env", az.KeyEnv, "table: environment variable holding the account key")
	fs.StringVar(&t.az.SASEnv, "sas-env", az.SASEnv, "table: environment variable holding a SAS token")
	fs.BoolVar(&t.keep, "keep-tables", false, "keep the tables a run creates instead of deleting them at the end")
	fs.BoolVar(&t.yes, "yes", false, "run against a non-loopback endpoint without asking first")
}

// Flags that configure one kind of target only. Given with the other, they
// would be ignored without a word, so a user would believe a setting that
// never took effect.
var (
	tableOnlyFlags  = []string{"auth", "connection-string-env", "endpoint", "account", "account-key-env", "sas-env"}
	engineOnlyFlags = engineFlagNames
)

// contradictions refuses target flags given explicitly for a target they do
// not configure.
func (t *targetFlags) contradictions(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case t.target == "engine" && slices.Contains(tableOnlyFlags, f.Name):
			err = usagef("--%s configures a Table endpoint, but the target is the in-tree engine: add --target table, or leave --%s out", f.Name, f.Name)
		case t.target == "table" && slices.Contains(engineOnlyFlags, f.Name):
			err = usagef("--%s configures the in-tree engine, but the target is a Table endpoint (--target table), whose service decides it: leave --%s out", f.Name, f.Name)
		}
	})
	return err
}

// assumedLatency is what a plan's request count assumes a request takes in
// a closed loop; the real count depends on the endpoint.
const assumedLatency = 20 * time.Millisecond

// confirm shows what runs will send to a real (non-loopback) endpoint and
// asks before sending it, unless --yes was given. endpoint is the Table
// endpoint the flags resolve to, "" for the engine.
func (t *targetFlags) confirm(e *env, endpoint string, specs []workloads.Spec) error {
	if endpoint == "" || aztarget.IsLoopback(endpoint) || t.yes {
		return nil
	}
	var requests, entities float64
	for _, s := range specs {
		secs := (s.Warmup + s.Duration).Seconds()
		n := float64(s.VMs*s.Threads) * secs / assumedLatency.Seconds()
		if s.Load == workloads.LoadOpen {
			n = s.Rate * secs
		}
		requests += n
		entities += n * float64(s.EntitiesPerRequest(s.Op))
		if s.Reads() {
			loaded := float64(s.VMs * s.Threads * s.Preload)
			if s.Partition == workloads.PartitionFixed {
				loaded = float64(s.Keys.Count * s.Preload)
			}
			entities += loaded
			requests += loaded / 100 // loaded in batches
		}
	}
	fmt.Fprintf(e.stderr, "%s is not on this machine: %d run(s) will send up to about %.0f requests (%.0f billable transactions, %.0f entities) if each takes %v; each run creates a table and deletes it at the end.\n",
		endpoint, len(specs), requests, requests, entities, assumedLatency)
	fmt.Fprint(e.stderr, "go ahead? [y/N] ")
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(e.stderr)
		return usagef("not confirmed: nothing was sent; give --yes to run against %s without asking", endpoint)
	}
	return nil
}

// virtualEpoch is when every virtual-time run starts, so stored timestamps
// are the same from one run to the next.
var virtualEpoch = time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)

// virtual reports whether the flags run the engine in virtual time.
func (t *targetFlags) virtual() bool {
	if t.target != "engine" || t.timeScale != 0 {
		return false
	}
	p, _, err := t.resolveProfile()
	return err == nil && p.Model
}

// wallPerPlanned returns the wall seconds a planned second of a run takes:
// 0 in virtual time, where it depends only on the CPU.
func (t *targetFlags) wallPerPlanned() float64 {
	switch {
	case t.virtual():
		return 0
	case t.target == "engine" && t.timeScale > 0:
		return 1 / t.timeScale
	}
	return 1
}

// tune sets the process's memory for the target: its collector policy
// (gcPolicy), and, for the engine in virtual time, huge pages for its heap
// (gctune.HugePages), which a wall-time run, whose latencies they could
// move, does without.
func (t *targetFlags) tune() {
	gctune.Use(t.gcPolicy())
	if t.virtual() {
		gctune.HugePages()
	}
}

// gcPolicy is the collector policy of a process that runs against the
// target: one that drives an endpoint keeps little and only makes load;
// one that runs the engine in process holds its store.
func (t *targetFlags) gcPolicy() gctune.Policy {
	if t.target == "table" {
		return gctune.Load
	}
	return gctune.Store
}

// closer releases a target.
type closer func()

// newEngineTarget and newTableTarget build targets; tests count them.
var (
	newEngineTarget = enginetarget.New
	newTableTarget  = aztarget.New
)

// check checks the flags without building a target: the engine's
// configuration is checked and no engine is made. A Table target's
// flags are resolved to the endpoint they name, which it returns; that
// makes an SDK client, which opens no connection, and drops it.
func (t *targetFlags) check(getenv func(string) string) (endpoint string, err error) {
	switch t.target {
	case "engine":
		_, err := t.config(0)
		return "", err
	case "table":
		tg, err := t.table(getenv)
		if err != nil {
			return "", err
		}
		return tg.Endpoint(), nil
	}
	return "", usagef("--target %q is not known: use engine or table", t.target)
}

// build returns the target the flags describe, to run on; seed seeds the
// engine.
func (t *targetFlags) build(getenv func(string) string, seed uint64) (workloads.Target, closer, error) {
	switch t.target {
	case "engine":
		cfg, err := t.config(seed)
		if err != nil {
			return nil, nil, err
		}
		if t.timeScale == 0 {
			cfg.TimeScale = 1
			if cfg.Profile.Model {
				cfg.Clock = clock.NewVirtual(virtualEpoch)
			}
		}
		tg, err := newEngineTarget(cfg)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		if _, file, _ := t.resolveProfile(); file != nil && !file.Builtin {
			tg.FromFile(file.path, file.SHA256)
		}
		return tg, func() { tg.Close() }, nil
	case "table":
		tg, err := t.table(getenv)
		if err != nil {
			return nil, nil, err
		}
		return tg, func() {}, nil
	}
	return nil, nil, usagef("--target %q is not known: use engine or table", t.target)
}

// table returns the Table target the flags describe.
func (t *targetFlags) table(getenv func(string) string) (*aztarget.Target, error) {
	cfg := t.az
	cfg.Getenv = getenv
	tg, err := newTableTarget(cfg)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return tg, nil
}

// endpointOf returns a Table target's endpoint, "" for the engine.
func endpointOf(tg workloads.Target) string {
	if at, ok := tg.(*aztarget.Target); ok {
		return at.Endpoint()
	}
	return ""
}

// describe writes the target's effective configuration, without secrets.
func (t *targetFlags) describe(w io.Writer, tg workloads.Target) {
	if d, ok := tg.(workloads.Describer); ok {
		env := d.Describe()
		switch env.Target {
		case "engine":
			clock := fmt.Sprintf("wall time at scale %g", env.TimeScale)
			if env.TimeScale == 0 {
				clock = "virtual time"
			}
			profile := env.Profile
			if env.ProfileFile != "" {
				profile += fmt.Sprintf(" (from %s, sha256 %.12s)", env.ProfileFile, env.ProfileSHA256)
			}
			fmt.Fprintf(w, "target engine: profile %s, %s, presplit %v, balancer %s%s\n", profile, clock, t.presplit, t.balancer, t.describeBudgets())
		default:
			fmt.Fprintf(w, "target table: %s\n", env.Endpoint)
		}
	}
}

// describeBudgets names the budgets and latency scale given, if any.
func (f *engineFlags) describeBudgets() string {
	var b strings.Builder
	if f.partitionRate > 0 {
		fmt.Fprintf(&b, ", %g entities/s per PartitionKey", f.partitionRate)
	}
	if f.accountRate > 0 {
		fmt.Fprintf(&b, ", %g entities/s per account", f.accountRate)
	}
	if f.latencyScale != 1 && f.latencyScale != 0 {
		fmt.Fprintf(&b, ", latencies x%g", f.latencyScale)
	}
	b.WriteString(f.describeRU())
	return b.String()
}

// describeRU names the throughput provisioned under the cosmos profile.
func (f *engineFlags) describeRU() string {
	p, _, err := f.resolveProfile()
	switch {
	case err != nil || !p.RequestUnits():
		return ""
	case f.ruMax > 0:
		return fmt.Sprintf(", autoscale to %g RU/s per table", f.ruMax)
	case f.ru > 0:
		return fmt.Sprintf(", %g RU/s per table", f.ru)
	}
	return fmt.Sprintf(", %g RU/s per table", p.RU)
}
