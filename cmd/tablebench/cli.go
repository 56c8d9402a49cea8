package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// env is what a command needs of its process, injectable for tests.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// terminal reports whether stderr is a terminal, for progress bars.
	terminal bool
}

// usageError is bad input: the command exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitRegression is the exit code of a comparison that found a regression
// beyond its tolerance and beyond noise: numbers that are trusted but
// worse, which a pipeline tells from a failure (1) and bad input (2).
const exitRegression = 3

// regressionError is a comparison's regressions: the command exits 3.
type regressionError struct{ msg string }

func (e *regressionError) Error() string { return e.msg }

// exitThreshold is the exit code of a run or sweep whose numbers are
// trusted but fail a --threshold its user set: a pipeline tells it from a
// failure or untrusted numbers (1), bad input (2) and a comparison's
// regression (3). docs/exit-codes.md lists every code.
const exitThreshold = 4

// thresholdError is a failed --threshold: the command exits 4.
type thresholdError struct{ msg string }

func (e *thresholdError) Error() string { return e.msg }

// command is one of tablebench's commands. The table of them is the one
// list: the usage lists it, and main.go's package doc must match it
// (TestDocListsEveryCommand).
type command struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}

// commands returns the commands in the order they are listed.
func commands() []command {
	return []command{
		{"run", "one run: VMs x threads of one operation or a workload against the engine or a Table endpoint", runCmd},
		{"workloads", "list the preset workloads (YCSB A-F, the case study's loads), or show one as a file", workloadsCmd},
		{"figures", "reproduce Figures 3-15 and check every published claim", figuresCmd},
		{"experiments", "test the case study's advice its figures never test: retries, keys, balancing, conflicts, today", experimentsCmd},
		{"advise", "compare candidate key designs by simulation at a target rate, ranked, with where the load lands", adviseCmd},
		{"sweep", "a figure of your own: any run parameters as lists", sweepCmd},
		{"report", "rebuild the pages of a stored result set or run", reportCmd},
		{"compare", "two result sets side by side, each difference tested against the runs' noise", compareCmd},
		{"merge", "combine the shards of a run or suite into one", mergeCmd},
		{"k8s", "print a Kubernetes Indexed Job that runs a run's shards", k8sCmd},
		{"serve", "serve the engine as an Azure Table endpoint", serveCmd},
		{"profile", "list the engine's service models, or print one as a file to change and load with --profile", profileCmd},
		{"admin", "change a served engine's fault rules and rates while it runs", adminCmd},
		{"version", "print the version", versionCmd},
	}
}

// run runs the command line and returns the process's exit code: 0, 1 for a
// failure or numbers that cannot be trusted, 2 for bad input, 3
// (exitRegression) for a comparison's regression beyond its tolerance, 4
// (exitThreshold) for a --threshold that fails.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if f, ok := stderr.(*os.File); ok {
		e.terminal = term.IsTerminal(int(f.Fd()))
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			if err == nil {
				return 0
			}
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			fmt.Fprintf(stderr, "tablebench %s: %v\n", c.name, oneLine(err))
			var ue *usageError
			if errors.As(err, &ue) {
				return 2
			}
			var re *regressionError
			if errors.As(err, &re) {
				return exitRegression
			}
			var te *thresholdError
			if errors.As(err, &te) {
				return exitThreshold
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "tablebench: unknown command %q; run 'tablebench help' for the list\n", args[0])
	return 2
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func usage(w io.Writer) {
	fmt.Fprintln(w, "tablebench: benchmark table stores and reproduce the Azure Tables case study")
	fmt.Fprintln(w, "\nusage: tablebench <command> [flags]   (tablebench <command> -h for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, line := range commandLines("  ") {
		fmt.Fprintln(w, line)
	}
}

// commandLines lists the commands, a line each after prefix: its name,
// aligned, then its summary.
func commandLines(prefix string) []string {
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	var lines []string
	for _, c := range commands() {
		lines = append(lines, fmt.Sprintf("%s%-*s  %s", prefix, width, c.name, c.summary))
	}
	return lines
}

func versionCmd(ctx context.Context, e *env, args []string) error {
	fmt.Fprintln(e.stdout, "tablebench", version)
	return nil
}

// flagSet is a subcommand's flags: errors are reported as one line, and
// -h prints its help.
type flagSet struct {
	*flag.FlagSet
	help func()
	// hidden are older names of flags, kept for command lines written
	// before a rename: they parse, and help lists only the new name.
	hidden map[string]bool
}

func newFlagSet(e *env, name, synopsis string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), hidden: map[string]bool{}}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.help = func() {
		fmt.Fprintf(e.stdout, "usage: tablebench %s %s\n\nflags:\n", name, synopsis)
		shown := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.VisitAll(func(f *flag.Flag) {
			if !fs.hidden[f.Name] {
				shown.Var(f.Value, f.Name, f.Usage)
				shown.Lookup(f.Name).DefValue = f.DefValue // not what was parsed before -h
			}
		})
		shown.SetOutput(e.stdout)
		shown.PrintDefaults()
	}
	return fs
}

// alias makes old another name of the flag name, without a line of help.
func (fs *flagSet) alias(old, name string) {
	fs.Var(fs.Lookup(name).Value, old, "an older name of --"+name)
	fs.hidden[old] = true
}

// parse parses flags; errors are usage errors naming the fix.
func parse(fs *flagSet, args []string) error {
	if err := parseWords(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; flags go as --name=value, see 'tablebench %s -h'", fs.Arg(0), fs.Name())
	}
	return nil
}

// parseWords parses flags and leaves the words after them in fs.Args().
func parseWords(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.help()
			return err
		}
		return usagef("%v; see 'tablebench %s -h'", err, fs.Name())
	}
	return nil
}

// given reports whether the named flag was given on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
