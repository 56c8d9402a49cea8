package azurite

import (
	"os"
	"testing"
)

// SkippedEnv names the file where Need appends its notes: `make test` sets
// it and prints the notes at its end, because `go test` shows a skipped
// test's message only with -v.
const SkippedEnv = "TABLEBENCH_SKIPPED"

// Need stops a test that lacks something outside Go: under CI (CI=true),
// where .ci/run installs everything, it fails; elsewhere it skips, with the
// note what says (what is missing and what installs it).
func Need(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(what)
	}
	if path := os.Getenv(SkippedEnv); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString("skipped " + t.Name() + ": " + what + "\n")
			f.Close()
		}
	}
	t.Skip(what)
}
