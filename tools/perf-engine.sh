#!/usr/bin/env bash
# The raw engine's benchmarks at a previous release and at the working tree,
# run in turns on this machine, compared by benchstat: `make perf` calls it.
# PERF_BASE names the release (a tag or commit), PERF_COUNT the turns.
#
# Each benchmark runs a fixed number of operations (PERF_RUNS, name:count
# pairs) rather than for a fixed time: a write benchmark keeps what it
# writes, so with a time budget the faster build would be measured on a
# larger store than the slower one.
set -euo pipefail
base=${PERF_BASE:?set PERF_BASE to the release to compare with, a tag or commit}
count=${PERF_COUNT:-5}
runs=${PERF_RUNS:-'Insert:1000000 Get:3000000 Batch100:10000 MemoryPerEntity:1 MemoryPerStoredEntity:1 MemoryPerKey:1'}
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
	echo "perf: release $base is not in this clone: fetch its tag, or set PERF_BASE to a commit" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/base"
git archive "$base" | tar -x -C "$work/base"
# Both builds run this tree's benchmark code, so a change to a benchmark
# (how it makes keys, say) cannot pass for a change in the engine. A
# release whose engine API it does not compile against keeps its own.
cp "$work/base/engine/bench_test.go" "$work/own_bench_test.go" 2>/dev/null || : >"$work/own_bench_test.go"
cp engine/bench_test.go "$work/base/engine/bench_test.go"
if ! (cd "$work/base" && go test -c -o "$work/base.test" ./engine/ 2>"$work/build.err"); then
	echo "perf: this tree's benchmarks do not build against $base ($(head -1 "$work/build.err")); it runs its own" >&2
	if [ -s "$work/own_bench_test.go" ]; then
		cp "$work/own_bench_test.go" "$work/base/engine/bench_test.go"
	else
		rm "$work/base/engine/bench_test.go"
	fi
	(cd "$work/base" && go test -c -o "$work/base.test" ./engine/)
fi
go test -c -o "$work/head.test" ./engine/
for i in $(seq "$count"); do
	echo "perf: turn $i of $count" >&2
	for r in $runs; do
		for build in base head; do
			"$work/$build.test" -test.run '^$' -test.bench "^Benchmark${r%%:*}\$" -test.benchtime "${r#*:}x" >>"$work/$build.txt"
		done
	done
done

# The served engine's own work per request (BenchmarkServe*: signed
# SDK-shaped requests into its handler, the network's work aside), the
# same turns, both builds running this tree's benchmark file.
serve_runs=${PERF_SERVE_RUNS:-'ServeBatch:20000 ServeInsert:300000 ServeGet:300000'}
cp engine/rest/serve_bench_test.go "$work/base/engine/rest/serve_bench_test.go"
if (cd "$work/base" && go test -c -o "$work/base-rest.test" ./engine/rest/ 2>"$work/build.err"); then
	go test -c -o "$work/head-rest.test" ./engine/rest/
	for i in $(seq "$count"); do
		echo "perf: served engine, turn $i of $count" >&2
		for r in $serve_runs; do
			for build in base head; do
				"$work/$build-rest.test" -test.run '^$' -test.bench "^Benchmark${r%%:*}\$" -test.benchtime "${r#*:}x" -test.cpu 1 >>"$work/$build.txt"
			done
		done
	done
else
	echo "perf: the served engine's benchmarks do not build against $base ($(head -1 "$work/build.err")): not compared" >&2
fi
mkdir -p results/perf
cp "$work/base.txt" "results/perf/engine-$base.txt"
cp "$work/head.txt" results/perf/engine-head.txt
echo "perf: the runs are in results/perf/, for benchstat" >&2
go tool benchstat "$base=$work/base.txt" "head=$work/head.txt"

# The engine as a simulator in virtual time (workloads/simulate_bench_test.go):
# simulated requests per CPU-second at 240, 3,840 and 15,000 threads, for
# each calibrated profile, and the memory a simulated thread holds. Both
# builds run this tree's benchmark file, on one core as `tablebench run`
# runs a virtual run. A release from before the clock had its own package,
# or before Coordinator was named so, gets the file with those names
# changed; one it still does not build against is not compared.
cp workloads/simulate_bench_test.go "$work/base/workloads/simulate_bench_test.go"
if [ ! -d "$work/base/clock" ] && [ -d "$work/base/engine/clock" ]; then
	sed -i 's#tablebench/tablebench/clock"#tablebench/tablebench/engine/clock"#' "$work/base/workloads/simulate_bench_test.go"
fi
if ! grep -q 'func NewCoordinator' "$work/base/workloads/coordinator.go" 2>/dev/null; then
	sed -i 's#workloads\.NewCoordinator#workloads.NewRunner#' "$work/base/workloads/simulate_bench_test.go"
fi
if (cd "$work/base" && go test -c -o "$work/base-sim.test" ./workloads/ 2>"$work/build.err"); then
	go test -c -o "$work/head-sim.test" ./workloads/
	for i in $(seq "${PERF_SIM_COUNT:-3}"); do
		echo "perf: simulator, turn $i" >&2
		for build in base head; do
			"$work/$build-sim.test" -test.run '^$' -test.bench '^BenchmarkSimulate(Memory)?$' -test.benchtime 1x -test.cpu 1 >>"$work/$build-sim.txt"
		done
	done
	cp "$work/base-sim.txt" "results/perf/simulate-$base.txt"
	cp "$work/head-sim.txt" results/perf/simulate-head.txt
	go tool benchstat -filter '.unit:(sim-req/cpu-s OR bytes/thread)' "$base=$work/base-sim.txt" "head=$work/head-sim.txt"
else
	echo "perf: the simulator's benchmarks do not build against $base ($(head -1 "$work/build.err")): not compared" >&2
fi

# The figure suite in quick mode, the same turns: user+system CPU seconds
# and peak memory, as benchmark lines benchstat compares.
if [ ! -x /usr/bin/time ]; then
	echo "perf: /usr/bin/time is missing (Debian package time): the suite's CPU and memory are not compared" >&2
	exit 0
fi
(cd "$work/base" && go build -o "$work/base.bin" ./cmd/tablebench)
go build -o "$work/head.bin" ./cmd/tablebench
suite() { # binary, output file
	rm -rf "$work/out"
	/usr/bin/time -f '%U %S %M' -o "$work/time" "$1" figures --quick --quiet --out "$work/out" >/dev/null
	read -r user sys rss <"$work/time"
	awk -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN { printf "BenchmarkFiguresQuick 1 %.0f cpu-ns/op %.0f peak-MB\n", (u+s)*1e9, r/1024 }' >>"$2"
}
for i in $(seq "${PERF_SUITE_COUNT:-2}"); do
	echo "perf: figures --quick, turn $i" >&2
	suite "$work/base.bin" "$work/base-suite.txt"
	suite "$work/head.bin" "$work/head-suite.txt"
done
cp "$work/base-suite.txt" "results/perf/suite-$base.txt"
cp "$work/head-suite.txt" results/perf/suite-head.txt
go tool benchstat "$base=$work/base-suite.txt" "head=$work/head-suite.txt"

# The same as the user runs it: `tablebench run` of single inserts in
# virtual time at 240, 3,840 and 15,000 simulated threads (16, 256 and
# 1,000 VMs of 15), on each calibrated profile, the same turns: the
# requests it measured per CPU-second of the whole command (user+system,
# building its threads included) and its peak memory, stored entities and
# all. A run is the README's and its goal's: 60 model seconds after 10 of
# warm-up (a shorter one spreads building 15,000 threads over fewer
# requests).
PERF_RUN_VMS=${PERF_RUN_VMS:-'16 256 1000'}
PERF_RUN_PROFILES=${PERF_RUN_PROFILES:-'modern wa2010'}
simrun() { # binary, profile, VMs, output file
	/usr/bin/time -f '%U %S %M' -o "$work/time" "$1" run --profile "$2" --op insert --partition guid \
		--vms "$3" --threads 15 --duration 60s --warmup 10s --quiet --json >"$work/run.json" 2>/dev/null
	read -r user sys rss <"$work/time"
	reqs=$(grep -o '"totals":{"requests":[0-9]*' "$work/run.json" | grep -o '[0-9]*$')
	awk -v p="$2" -v n="$((15 * $3))" -v q="$reqs" -v u="$user" -v s="$sys" -v r="$rss" \
		'BEGIN { printf "BenchmarkRunInsert/%s/threads=%d 1 %.0f sim-req/cpu-s %.0f peak-MB\n", p, n, q/(u+s), r/1024 }' >>"$4"
}
for i in $(seq "${PERF_SIM_COUNT:-3}"); do
	echo "perf: tablebench run in virtual time, turn $i" >&2
	for profile in $PERF_RUN_PROFILES; do
		for vms in $PERF_RUN_VMS; do
			simrun "$work/base.bin" "$profile" "$vms" "$work/base-run.txt"
			simrun "$work/head.bin" "$profile" "$vms" "$work/head-run.txt"
		done
	done
done
cp "$work/base-run.txt" "results/perf/run-$base.txt"
cp "$work/head-run.txt" results/perf/run-head.txt
go tool benchstat "$base=$work/base-run.txt" "head=$work/head-run.txt"

# Open load at scale, as the user runs it: ten model minutes of 20,000
# requests/s of single inserts spread uniformly over 10,000 PartitionKeys
# (1,000 threads, enough that none is ever short of a thread), on the
# modern profile in virtual time: the CPU seconds of the whole command.
# Goal: under 30 s. One turn by default (PERF_OPEN_COUNT): each is long.
openrun() { # binary, output file
	if ! /usr/bin/time -f '%U %S %M' -o "$work/time" "$1" run --profile modern --workload - --quiet --json >"$work/run.json" 2>/dev/null <<'YAML'
mix: {insert: 1}
partitions: {scheme: fixed, count: 10000, distribution: uniform}
load: open
rate: 20000
vms: 20
threads: 50
duration: 10m
warmup: 0s
YAML
	then
		return 1
	fi
	read -r user sys rss <"$work/time"
	reqs=$(grep -o '"totals":{"requests":[0-9]*' "$work/run.json" | grep -o '[0-9]*$')
	awk -v q="$reqs" -v u="$user" -v s="$sys" -v r="$rss" \
		'BEGIN { printf "BenchmarkOpenLoad10Min 1 %.0f cpu-ns/op %.0f sim-req/cpu-s %.0f peak-MB\n", (u+s)*1e9, q/(u+s), r/1024 }' >>"$2"
}
for i in $(seq "${PERF_OPEN_COUNT:-1}"); do
	echo "perf: open load, 10 model minutes at 20,000/s, turn $i" >&2
	if ! openrun "$work/base.bin" "$work/base-open.txt"; then
		echo "perf: $base does not run the open-load workload file: head alone" >&2
	fi
	openrun "$work/head.bin" "$work/head-open.txt"
done
cp "$work/head-open.txt" results/perf/open-head.txt
if [ -s "$work/base-open.txt" ]; then
	cp "$work/base-open.txt" "results/perf/open-$base.txt"
	go tool benchstat "$base=$work/base-open.txt" "head=$work/head-open.txt"
else
	go tool benchstat "head=$work/head-open.txt"
fi
