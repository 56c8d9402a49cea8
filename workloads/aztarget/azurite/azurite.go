// Package azurite starts Azurite, the local Table service (npm package
// azurite, pinned in tools/package.json and installed by `make assets`), on
// a free loopback port for tests that compare tablebench with it; Need
// stops any test that lacks a component from outside Go.
package azurite

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// DevKey is the public key of the local development account.
const DevKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// Binary returns the path of azurite-table under tools/node_modules, found
// from the working directory or one of its parents.
func Binary() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "tools", "node_modules", ".bin", "azurite-table")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("azurite-table is not installed: run 'make assets' (it installs the pinned azurite from npm into tools/)")
		}
	}
}

// Start starts Azurite's Table service for the test and returns its
// endpoint (path style, http://127.0.0.1:PORT/devstoreaccount1) and a
// connection string for it. Under CI a missing Azurite fails the test;
// elsewhere it skips it.
func Start(t testing.TB) (endpoint, connectionString string) {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		Need(t, err.Error())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port), "--inMemoryPersistence",
		"--disableTelemetry", "--skipApiVersionCheck", "--disableProductStyleUrl", "--silent")
	cmd.Dir = t.TempDir() // nothing persists, but anything it writes stays out of the tree
	cmd.SysProcAttr = procAttr()
	out := &safeLog{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting azurite: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("azurite exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("azurite did not listen on %s: %s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	endpoint = "http://" + addr + "/devstoreaccount1"
	return endpoint, "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + DevKey + ";TableEndpoint=" + endpoint + ";"
}
