package rest_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/workloads/aztarget/azurite"
)

// The served engine against SDKs nobody here wrote: the JavaScript SDK
// (@azure/data-tables, pinned in tools/) and the Python SDK
// (azure-data-tables, Debian's python3-azure). Each suite lives in
// tools/clients/ and runs in its own language's test runner.

// toolsDir finds tools/ from the package directory.
func toolsDir(t *testing.T) string {
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "tools", "package.json")); err == nil {
			return filepath.Join(d, "tools")
		}
		if filepath.Dir(d) == d {
			t.Fatal("tools/ not found above " + wd)
		}
	}
}

// missing fails the test under CI, where everything must be installed, and
// skips it elsewhere, saying what to install.
func missing(t *testing.T, what string) {
	t.Helper()
	azurite.Need(t, what)
}

// servedEngine serves a fresh engine with the development account's key on
// loopback and returns its endpoint.
func servedEngine(t *testing.T) string {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.PreSplit, cfg.TableDeleteGrace = engine.None(), 4, 0
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	srv := httptest.NewServer(rest.New(e, rest.Config{Account: rest.DevAccount, Key: key}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + rest.DevAccount
}

func runSuite(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	endpoint := servedEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TABLES_ENDPOINT="+endpoint, "TABLES_ACCOUNT="+rest.DevAccount, "TABLES_KEY="+rest.DevKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	t.Logf("%s", out)
}

func TestJavaScriptSDK(t *testing.T) {
	tools := toolsDir(t)
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not installed: install Node.js 18 or later to run the JavaScript SDK suite")
	}
	if _, err := os.Stat(filepath.Join(tools, "node_modules", "@azure", "data-tables", "package.json")); err != nil {
		missing(t, "@azure/data-tables is not installed: run 'make assets' (npm ci in tools/)")
	}
	runSuite(t, filepath.Join(tools, "clients"), "node", "--test", "--test-reporter=spec", "conformance.mjs")
}

// python is Debian's interpreter, where python3-azure installs the SDK.
const python = "/usr/bin/python3"

func TestPythonSDK(t *testing.T) {
	tools := toolsDir(t)
	if err := exec.Command(python, "-c", "import azure.data.tables").Run(); err != nil {
		missing(t, "the Python Azure Tables SDK is not installed: apt-get install python3-azure")
	}
	runSuite(t, filepath.Join(tools, "clients"), python, "-W", "ignore::ResourceWarning", "-m", "unittest", "-v", "test_conformance")
}
