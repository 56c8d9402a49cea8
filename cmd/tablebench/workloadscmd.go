package main

import (
	"context"
	"fmt"

	"github.com/tablebench/tablebench/workloads"
)

// workloadsCmd lists the preset workloads, or with `show NAME` prints one
// as a workload file that run --workload accepts.
func workloadsCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "workloads", "[show NAME]")
	if err := parseWords(fs, args); err != nil {
		return err
	}
	words := fs.Args()
	switch {
	case len(words) == 0:
		width := 0
		for _, p := range workloads.Presets() {
			width = max(width, len(p.Name))
		}
		for _, p := range workloads.Presets() {
			fmt.Fprintf(e.stdout, "%-*s  %s\n", width, p.Name, p.Summary)
		}
		fmt.Fprintln(e.stdout, "\nrun one: tablebench run --workload NAME; see it as a file: tablebench workloads show NAME")
		return nil
	case words[0] == "show" && len(words) == 2:
		p, err := workloads.LookupPreset(words[1])
		if err != nil {
			return usagef("%v", err)
		}
		fmt.Fprintf(e.stdout, "# %s\n# run it: tablebench run --workload FILE (flags beside it override its fields)\n%s", p.Summary, p.File)
		return nil
	case words[0] == "show":
		return usagef("workloads show takes one preset name, as in: tablebench workloads show ycsb-a")
	}
	return usagef("unexpected argument %q: use tablebench workloads, or tablebench workloads show NAME", words[0])
}
