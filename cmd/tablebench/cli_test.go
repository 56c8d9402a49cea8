package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads/aztarget"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// stdinText is what the command reads on standard input in tests: nothing.
const stdinText = ""

// tb runs the command in process and returns its exit code and output.
func tb(t *testing.T, ctx context.Context, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	code := run(ctx, args, strings.NewReader(stdinText), &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

var runID = regexp.MustCompile(`tbtb[0-9a-f]{8}`)

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = runID.ReplaceAllString(got, "RUNID")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestRunSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		code, out, errOut := tb(t, context.Background(), nil, "run", "--op=batch", "--batch-size=20", "--partition=shared", "--vms=3", "--threads=10", "--duration=30s", "--warmup=5s", "--seed=3")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		golden(t, "run-summary", out)
		golden(t, "run-config", errOut)
	})
}

func TestRunJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		code, out, errOut := tb(t, context.Background(), nil, "run", "--json", "--quiet", "--threads=3", "--duration=10s")
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var v map[string]any
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
		}
		if dec.More() {
			t.Fatal("stdout holds more than one JSON object")
		}
		for _, k := range []string{"entities_per_sec", "requests_per_sec", "throttled_pct", "errors", "latency_ms", "spec", "partitions"} {
			if _, ok := v[k]; !ok {
				t.Errorf("no %q in %s", k, out)
			}
		}
		if p, _ := v["partitions"].(map[string]any); p["distinct"] != 3.0 || p["distinct_exact"] != true || len(p["top"].([]any)) != 3 {
			t.Errorf("partitions %v; want 3 threads' keys, exactly", p)
		}
		for _, k := range []string{"intervals", "histograms", "heatmap"} { // left out, not null
			if x, ok := v[k]; ok {
				t.Errorf("%q is %v in the summary; leave it out", k, x)
			}
		}
		lat := v["latency_ms"].(map[string]any)
		for _, k := range []string{"p50", "p90", "p95", "p99", "p999", "max", "mean"} {
			if _, ok := lat[k].(float64); !ok {
				t.Errorf("latency_ms has no %q", k)
			}
		}
		if v["entities_per_sec"].(float64) <= 0 {
			t.Fatal("no throughput")
		}
	})
}

func TestRunOut(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		code, out, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--threads=2", "--duration=10s", "--warmup=2s", "--out="+dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "stored in "+dir) {
			t.Fatalf("summary does not say where: %s", out)
		}
	})
	jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	hlogs, _ := filepath.Glob(filepath.Join(dir, "*.hlog"))
	if len(jsons) != 1 || len(hlogs) != 1 {
		t.Fatalf("files %v %v", jsons, hlogs)
	}
	f, _ := os.Open(jsons[0])
	run, err := results.ReadRun(f)
	f.Close()
	if err != nil || run.Env.Target != "engine" || len(run.Spec) == 0 || len(run.Histograms) == 0 {
		t.Fatalf("run record %v: %+v", err, run)
	}
	if h, err := run.Histogram("insert/ok"); err != nil || h.TotalCount() != run.Totals.Requests {
		t.Fatalf("stored histogram %v, %d counts for %d requests", err, h.TotalCount(), run.Totals.Requests)
	}
	data, _ := os.ReadFile(hlogs[0])
	rd := hdr.NewHistogramLogReader(bytes.NewReader(data))
	var n int
	var total int64
	for h, err := rd.NextIntervalHistogram(); h != nil && err == nil; h, err = rd.NextIntervalHistogram() {
		n++
		total += h.TotalCount()
	}
	// 12 seconds, and a 13th where requests due before the end completed.
	if n < 12 || n > 13 || total < run.Totals.Requests {
		t.Fatalf("interval log: %d intervals with %d values; want 12 or 13 seconds covering %d requests", n, total, run.Totals.Requests)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"run", "--vms=x"}, `invalid value "x" for flag -vms`},
		{[]string{"run", "--nosuch"}, "flag provided but not defined: -nosuch"},
		{[]string{"run", "stray"}, `unexpected argument "stray"`},
		{[]string{"run", "--op=fly"}, `op "fly" is not known`},
		{[]string{"run", "--op=batch", "--batch-size=101"}, "batch size 101 is out of range"},
		{[]string{"run", "--partition=range"}, `partition scheme "range" is not known`},
		{[]string{"run", "--partition=fixed"}, "the fixed scheme needs a key space, which only a workload file gives: use --workload FILE"},
		{[]string{"run", "--vms=0"}, "0 VMs is out of range"},
		{[]string{"run", "--threads=-1"}, "-1 threads per VM is out of range"},
		{[]string{"run", "--vm-size=huge"}, `VM size "huge" is not valid`},
		{[]string{"run", "--vm-size=cores:0"}, "cores must be a whole number"},
		{[]string{"run", "--entity-size=10"}, "entity size 10 is out of range"},
		{[]string{"run", "--op=batch", "--entity-size=65536"}, "a batch of 100 entities of 65536 bytes is 6.2 MiB, and a batch may carry at most 4 MiB: use --batch-size 64"},
		{[]string{"run", "--duration=0s"}, "duration 0s must be positive"},
		{[]string{"run", "--duration=ten"}, `invalid value "ten" for flag -duration`},
		{[]string{"run", "--retry=often"}, `retry policy "often" is not known`},
		{[]string{"run", "--load=open"}, "open load needs a rate"},
		{[]string{"run", "--profile=fast"}, `unknown profile "fast"`},
		{[]string{"run", "--time-scale=-1"}, "--time-scale -1 is out of range"},
		{[]string{"run", "--time-scale=NaN"}, "--time-scale NaN is out of range"},
		{[]string{"run", "--latency-scale=NaN"}, "--latency-scale NaN is out of range"},
		{[]string{"serve", "--time-scale=NaN"}, "--time-scale NaN is out of range: use a factor above 0"},
		{[]string{"run", "--balancer=sometimes"}, `--balancer "sometimes" is not known`},
		{[]string{"run", "--target=cloud"}, `--target "cloud" is not known`},
		{[]string{"run", "--target=table"}, "no connection string in $TABLEBENCH_CONNECTION_STRING"},
		{[]string{"run", "--job-id=a_b"}, `job ID "a_b" is not valid`},
		{[]string{"run", "--out=/proc/nope/x"}, "--out: cannot create"},
		{[]string{"run", "--batch-size=0"}, "batch size 0 is out of range"},
		{[]string{"run", "--rate=-1"}, "rate -1 is not valid: use requests per second, 0 or more"},
		{[]string{"run", "--table=x"}, `table "x" is not a valid table name`},
		{[]string{"serve", "--partition-rate=-5"}, "--partition-rate and --account-rate must be positive"},
		{[]string{"serve", "--latency-scale=0"}, "--latency-scale 0 is out of range"},
		{[]string{"serve", "--profile=none", "--latency-scale=2"}, "profile none models no latency"},
		{[]string{"serve", "--faults=/nonexistent/faults.yaml"}, "the faults file cannot be read"},
		{[]string{"serve", "--faults=testdata/bad-faults.yaml"}, `op "gett" is not known`},
		{[]string{"serve", "--table-delete-delay=-1s"}, "--table-delete-delay -1s is negative"},
		{[]string{"serve", "--time-scale=0"}, "--time-scale 0 is out of range: use a factor above 0"},
		{[]string{"serve", "--balancer=sometimes"}, `--balancer "sometimes" is not known`},
		{[]string{"serve", "--account-key-env=NOPE"}, "--account-key-env: $NOPE is empty"},
		{[]string{"run", "--partition-rate=-1"}, "--partition-rate and --account-rate must be positive"},
		{[]string{"run", "--profile=none", "--latency-scale=2"}, "profile none models no latency"},
		{[]string{"run", "--target=table", "--partition-rate=100"}, "--partition-rate configures the in-tree engine"},
		{[]string{"admin"}, "say what to change"},
		{[]string{"run", "--shard", "0/2", "--vms", "2", "--job-id", "j"}, "a sharded run needs --target table"},
		{[]string{"run", "--shard", "2/2"}, `--shard "2/2": use K/N`},
		{[]string{"run", "--shards", "2"}, "needs $JOB_COMPLETION_INDEX"},
		{[]string{"run", "--start-at", "soon"}, "--start-at is for sharded runs"},
		{[]string{"figures", "--shard", "0/2", "--job-id", "j"}, "a sharded suite needs --target table"},
		{[]string{"merge"}, "give the shards to merge"},
		{[]string{"merge", "testdata/empty-record.json"}, "is not a run record"},
		{[]string{"admin", "rates", "--partition-rate=-1"}, "rates must be 0 (no limit) or more"},
		{[]string{"merge", "/nonexistent/x.json"}, "no such file"},
		{[]string{"admin", "faults"}, "$TABLEBENCH_CONNECTION_STRING is empty"},
		{[]string{"admin", "rates", "--partition-rate=x"}, `invalid value "x" for flag -partition-rate`},
		{[]string{"run", "--threshold=p99<50"}, `p99 is a latency: give its unit, as 50ms`},
		{[]string{"run", "--threshold=p98<50ms"}, `metric "p98" is not known`},
		{[]string{"run", "--threshold=throttled<0.1"}, "give it in %, as 0.1%"},
		{[]string{"run", "--threshold=p99"}, "no comparison"},
		{[]string{"run", "--threshold=fly.p99<1ms"}, `op "fly" is not known`},
		{[]string{"run", "--threshold=get.p99<1ms"}, "no run here does get requests"},
		{[]string{"sweep", "--vms=1,2", "--threshold=p99<50"}, "give its unit"},
		{[]string{"sweep", "--vms=1,2", "--threshold=get.p99<1ms"}, "no run here does get requests"},
		// Flags that another flag makes meaningless are refused, not ignored.
		{[]string{"run", "--rate=100", "--load=closed"}, "rate 100 with closed load"},
		{[]string{"run", "--batch-size=50", "--op=insert"}, "--batch-size 50 does nothing with --op insert"},
		{[]string{"run", "--endpoint=http://127.0.0.1:1/a"}, "--endpoint configures a Table endpoint, but the target is the in-tree engine"},
		{[]string{"run", "--auth=sas"}, "--auth configures a Table endpoint"},
		{[]string{"figures", "--sas-env=X"}, "--sas-env configures a Table endpoint"},
		{[]string{"run", "--target=table", "--profile=modern"}, "--profile configures the in-tree engine, but the target is a Table endpoint"},
		{[]string{"sweep", "--target=table", "--time-scale=10", "--vms=1,2"}, "--time-scale configures the in-tree engine"},
		{[]string{"sweep", "--x=threads", "--threads=10", "--vms=1,2"}, "x axis threads has one value"},
		{[]string{"sweep", "--op=insert", "--batch-size=1,20", "--vms=1,2"}, "batch sizes do nothing with op insert"},
		{[]string{"sweep", "--vms=1,-2"}, "-2 VMs is out of range"},
		{[]string{"sweep", "--vms=1,,2"}, `--vms "1,,2": an item of the list is empty`},
		{[]string{"sweep", "--vms=1,2,"}, `--vms "1,2,": an item of the list is empty`},
		{[]string{"sweep", "--vms=1,2", "--op=insert,,batch"}, `--op "insert,,batch": an item of the list is empty; give a list such as insert,batch`},
		{[]string{"sweep", "--rate=100,,500"}, `--rate "100,,500": an item of the list is empty`},
		{[]string{"figures", "--only=3,,8"}, `"3,,8": an item of the list is empty: list figures as 3,8,15`},
		{[]string{"experiments", "--only=retry,"}, `--only "retry,": an item of the list is empty; give a list such as retry,append`},
		{[]string{"serve", "--addr=0.0.0.0:0"}, "can be reached from other hosts, and with the publicly known development key"},
		{[]string{"serve", "--addr=:0", "--auth=none"}, "with --auth none anyone there can read and write"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Bad input is refused before anything runs; a command that
			// starts anyway (a server that should have refused) is stopped.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			code, out, errOut := tb(t, ctx, nil, tc.args...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{}, {"help"}, {"run", "-h"}, {"version"}} {
		code, out, _ := tb(t, context.Background(), nil, args...)
		if code != 0 || out == "" {
			t.Fatalf("%v: exit %d, %q", args, code, out)
		}
	}
	// A sweep has no modes and no claims: figures' flags stay out of its help.
	_, out, _ := tb(t, context.Background(), nil, "sweep", "-h")
	if strings.Contains(out, "-quick") || strings.Contains(out, "claim") || !strings.Contains(out, "-check") {
		t.Fatalf("sweep's help:\n%s", out)
	}
}

func TestInterruptedRunKeepsResults(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(25*time.Second, cancel)
		code, out, errOut := tb(t, ctx, nil, "run", "--quiet", "--time-scale=1", "--threads=2", "--duration=1h", "--warmup=5s", "--out="+dir)
		if code != 1 || !strings.Contains(errOut, "interrupted after 20.0 s") || strings.Contains(errOut, "answered nothing") || !strings.Contains(out, "(interrupted): 20.0 s measured") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
	})
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 1 {
		t.Fatalf("interrupted run stored %v", files)
	}
}

// TestCheckFailsOnASaturatedClient: a small VM's 30 threads of batches
// measure the modelled client, not the service: the run says so, says how
// to add client capacity, and fails its --check.
func TestCheckFailsOnASaturatedClient(t *testing.T) {
	code, _, errOut := tb(t, context.Background(), nil, "run", "--quiet", "--op=batch", "--vm-size=small", "--threads=30", "--duration=10s", "--warmup=2s", "--check")
	if code != 1 || !strings.Contains(errOut, "warning: the modelled 2010 client was saturated") || !strings.Contains(errOut, "more VMs (--vms)") || !strings.Contains(errOut, "check failed") {
		t.Fatalf("exit %d\nstderr %s", code, errOut)
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close() // every request fails, with its URL in the transport error
	const key = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTIzNA=="
	const sas = "sv=2019-02-02&sp=raud&se=2030-01-01&sig=c2VjcmV0c2lnbmF0dXJl%3D"
	env := map[string]string{
		"TABLEBENCH_CONNECTION_STRING": "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";TableEndpoint=" + url + "/acct",
		"MYSAS":                        sas,
	}
	getenv := func(k string) string { return env[k] }
	for _, args := range [][]string{
		{"run", "--target=table", "--duration=1s", "--warmup=0s"},
		{"run", "--target=table", "--json", "--duration=1s", "--warmup=0s"},
		{"run", "--target=table", "--auth=sas", "--sas-env=MYSAS", "--endpoint=" + url + "/acct", "--duration=1s"},
	} {
		code, out, errOut := tb(t, context.Background(), getenv, args...)
		if code == 0 {
			t.Fatalf("%v succeeded against a closed port", args)
		}
		for _, s := range []string{key, sas, "c2VjcmV0", "sig=c2"} {
			if strings.Contains(out+errOut, s) {
				t.Fatalf("%v printed a secret:\n%s%s", args, out, errOut)
			}
		}
	}
}

// TestRunPrintsBeforeStoring: a store that fails (a directory no file can
// be created in, as on a full disk) loses nothing: the result is printed,
// then the error.
func TestRunPrintsBeforeStoring(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc, where no file can be created")
	}
	code, out, errOut := tb(t, context.Background(), nil, "run", "--duration", "2s", "--warmup", "0s", "--quiet", "--out", "/proc/self")
	if code == 0 || !strings.Contains(out, "entities/s") || !strings.Contains(errOut, "could not be stored") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRunAgainstASilentEndpoint: an endpoint that accepts connections and
// never answers fails the run with a clear line after the request timeout,
// instead of hanging it.
func TestRunAgainstASilentEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	endpoint := "http://" + ln.Addr().String() + "/devstoreaccount1"
	getenv := csEnv("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + aztarget.DevelopmentKey + ";TableEndpoint=" + endpoint + ";")
	start := time.Now()
	code, out, errOut := tb(t, context.Background(), getenv, "run", "--target", "table", "--request-timeout", "1s", "--duration", "2s", "--quiet")
	if code == 0 || !strings.Contains(errOut, "did not answer within the request timeout") || time.Since(start) > 30*time.Second {
		t.Fatalf("exit %d after %v\n%s\n%s", code, time.Since(start), out, errOut)
	}
}
