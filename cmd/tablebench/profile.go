package main

import (
	"context"
	"fmt"

	"github.com/tablebench/tablebench/engine"
)

// profileCmd lists the engine's built-in profiles, or prints one as a
// profile file a user can change and load with --profile FILE.yaml.
func profileCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "profile", "[list | show NAME|FILE.yaml]")
	if err := parseWords(fs, args); err != nil {
		return err
	}
	words := fs.Args()
	switch {
	case len(words) == 0 || words[0] == "list" && len(words) == 1:
		for _, n := range engine.ProfileNames() {
			fmt.Fprintf(e.stdout, "%-8s %s\n", n, engine.ProfileSummary(n))
		}
		fmt.Fprintln(e.stdout, "\n'tablebench profile show NAME' prints one as a file to change and load with --profile FILE.yaml (docs/profiles.md)")
		return nil
	case words[0] == "show" && len(words) == 2:
		f := engineFlags{profile: words[1]}
		p, _, err := f.resolveProfile()
		if err != nil {
			return err
		}
		return engine.WriteProfile(e.stdout, p)
	case words[0] == "show":
		return usagef("show takes one profile: %v, or a profile file such as mine.yaml", engine.ProfileNames())
	}
	return usagef("unexpected argument %q: use 'tablebench profile list' or 'tablebench profile show NAME'", words[0])
}
