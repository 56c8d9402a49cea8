# tablebench: `make bench` reproduces the case study, `make test` runs every test.
GO ?= go
ECHARTS := tools/node_modules/echarts/dist/echarts.min.js

.PHONY: all build assets test bench bench-quick experiments experiments-quick vet perf pgo fuzz seeds

# The parsers a served engine exposes, fuzzed briefly by `make test`: a few
# seconds each, as counts of executions rather than durations, because a
# duration can end in a spurious "context deadline exceeded" from Go 1.26's
# fuzz coordinator (golang/go#75804, fixed in Go 1.27).
FUZZ := FuzzParseFilter:./engine/:10000x FuzzDecodeToken:./engine/:40000x FuzzRequest:./engine/rest/:30000x \
	FuzzBatch:./engine/rest/:30000x FuzzPlainHeaders:./engine/rest/:30000x FuzzSplitMultipart:./engine/rest/:30000x FuzzIndexDelim:./engine/rest/:30000x FuzzReadChangeset:./engine/rest/:30000x FuzzEntityJSON:./odata/:40000x FuzzScanFlat:./odata/:40000x FuzzAppendString:./odata/:40000x FuzzPlainJSON:./odata/:40000x FuzzEntityPath:./engine/rest/:50000x \
	FuzzPlainTarget:./engine/rest/:30000x FuzzPlainRequestLine:./engine/rest/:30000x FuzzSharedKey:./engine/rest/:30000x

all: build

build:
	$(GO) build -o bin/tablebench ./cmd/tablebench

# The report's charts load echarts from the report folder, never from the
# network; the build takes the pinned version from the npm registry.
assets: $(ECHARTS)

$(ECHARTS): tools/package.json tools/package-lock.json
	cd tools && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

vet:
	$(GO) tool staticcheck ./...
	$(GO) vet ./...
	$(GO) vet -tags calibration ./workloads/ # the calibration tests build only with their tag
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './tools/*'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }

# The calibration and model tests run minutes of load through the harness in
# virtual time;
# they run in a second pass without the race detector, which would make them
# several times slower and adds nothing the shorter model tests don't check.
# Explicit timeouts: generous for a busy machine, yet a hung test fails the
# run instead of stalling CI.
# A test that lacks chromium, Azurite or an SDK skips outside CI; its note is
# printed at the end, since go test shows skips only with -v.
# Whole suites run twice in the browser test and the repeatability test,
# minutes under the race detector for nothing it can find there: the clock's
# and the coordinator's own tests run under it. They run in the plain pass.
NORACE := TestReportInBrowser|TestFiguresRepeatExactly

# The key-space package is arithmetic in one goroutine, tested over
# millions of draws, and the advisor's tests are whole simulations whose
# concurrency (the suite runner's) is the workloads package's to test: the
# race detector would only make them several times slower.
NORACE_PKGS := ./workloads/keyspace/ ./workloads/advise/

# Tests build without the command's profile-guided optimization
# (default.pgo): it changes no result, and rebuilding with it would cost
# make test minutes on two cores.
TESTPGO := -pgo=off

test: vet assets
	@rm -f .skipped
	TABLEBENCH_SKIPPED=$(CURDIR)/.skipped $(GO) test $(TESTPGO) -race -count=1 -timeout 25m -skip '^($(NORACE))$$' $$($(GO) list ./... | grep -v -e '/workloads/keyspace$$' -e '/workloads/advise$$') || { cat .skipped 2>/dev/null; rm -f .skipped; exit 1; }
	TABLEBENCH_SKIPPED=$(CURDIR)/.skipped $(GO) test $(TESTPGO) -count=1 -timeout 10m -run '^($(NORACE))$$' ./cmd/tablebench/ || { cat .skipped 2>/dev/null; rm -f .skipped; exit 1; }
	$(GO) test $(TESTPGO) -count=1 -timeout 5m $(NORACE_PKGS)
	@cat .skipped 2>/dev/null; rm -f .skipped
	$(GO) test $(TESTPGO) -count=1 -timeout 10m -tags calibration -run 'Calibration|Model' ./workloads/
	$(GO) test $(TESTPGO) -count=1 -timeout 5m -run 'TestSharedKeyCheck' ./engine/rest/ # allocation counts, which the race detector's pools upset
	$(MAKE) --no-print-directory fuzz

fuzz:
	@for t in $(FUZZ); do \
		name=$${t%%:*}; rest=$${t#*:}; pkg=$${rest%%:*}; n=$${rest#*:}; \
		echo "fuzz $$name for $$n executions"; \
		$(GO) test -run XXX -fuzz "^$$name\$$" -fuzztime $$n $$pkg > .fuzz.log 2>&1 || { cat .fuzz.log; rm -f .fuzz.log; exit 1; }; \
		tail -1 .fuzz.log; \
	done; rm -f .fuzz.log

# Figures 3-15 on the in-tree engine: results/<UTC time>/ and results/latest.
bench: build
	./bin/tablebench figures --check

bench-quick: build
	./bin/tablebench figures --quick --check

# The experiments the case study's advice calls for (retries, append-only
# keys, load balancing, confusing retries, 2010 against today): about a
# minute in quick mode, several in full. Their claims are findings, so a
# failing one does not fail the target.
experiments: build
	./bin/tablebench experiments

experiments-quick: build
	./bin/tablebench experiments --quick

# The claims on seeds never used while fitting the model: the full suite
# once per seed, each into results/seeds/<seed>, one line per seed.
SEEDS ?= 101 102 103 104 105 106 107 108 109 110
seeds: build
	@mkdir -p results/seeds; passed=0; n=0; \
	for s in $(SEEDS); do \
		rm -rf results/seeds/$$s; n=$$((n+1)); \
		./bin/tablebench figures --quiet --seed $$s --out results/seeds/$$s > results/seeds/$$s.txt 2>&1; \
		line=$$(grep -E 'claims pass' results/seeds/$$s.txt); \
		fails=$$(grep -E '^C[0-9.]+ +FAIL' results/seeds/$$s.txt | awk '{print $$1}' | tr '\n' ' '); \
		echo "seed $$s: $$line $${fails:+(failing: $$fails)}"; \
		case "$$line" in "25 of 25"*) passed=$$((passed+1));; esac; \
	done; echo "$$passed of $$n seeds pass every claim"

# Speed, in Go benchmark format for benchstat, each figure a ratio measured
# in one run on this machine: the raw engine and the engine as a simulator
# in virtual time (simulated requests per CPU-second at 240, 3,840 and
# 15,000 threads, bytes per simulated thread) against the previous release
# (PERF_BASE, run in turns), the harness's own cost per request and its
# ceiling per core against a canned endpoint, and the served engine beside
# Azurite and the canned server under one aztables load (median, range and
# the median's 95% confidence interval over alternating rounds, beside a
# second canned server measured the same way as the control).
# The previous release, v0.1.0, named by its commit: a clone need not carry
# the tag (BenchmarkMemoryPerStoredEntity there: 682 bytes an entity).
PERF_BASE ?= 9e63c57
perf: assets
	PERF_BASE=$(PERF_BASE) tools/perf-engine.sh
	$(GO) test -run XXX -bench Harness -benchtime 2s -count 3 ./workloads/ # the simulator's, in perf-engine.sh
	$(GO) test -run XXX -bench HarnessCeiling -benchtime 1x -v ./workloads/aztarget/ | grep -E 'per core|Benchmark|ok'
	$(GO) test -run XXX -bench Servers -benchtime 1x -v ./engine/rest/ | grep -E 'served engine|control|by round|CPU per operation|Benchmark|ok'

# cmd/tablebench/default.pgo: the CPU profile `go build` optimizes the
# command with (profile-guided optimization, on by default for a main
# package that has one), from the runs it is used for most: simulations
# at 240 and 15,000 threads on both calibrated profiles, and the figures'
# suite. Made by a build without it. Regenerate it after a change to the
# simulator's hot path; a stale profile still builds, and only helps less.
pgo:
	$(GO) build -pgo=off -o bin/tablebench-nopgo ./cmd/tablebench
	rm -rf bin/pgo && mkdir -p bin/pgo
	for p in wa2010 modern; do for v in 16 1000; do \
		TABLEBENCH_CPUPROFILE=bin/pgo/run-$$p-$$v.prof bin/tablebench-nopgo run --profile $$p --op insert --partition guid \
			--vms $$v --threads 15 --duration 60s --warmup 10s --quiet --json >/dev/null || exit 1; \
	done; done
	TABLEBENCH_CPUPROFILE=bin/pgo/figures.prof bin/tablebench-nopgo figures --quick --quiet --out bin/pgo/figures >/dev/null
	$(GO) tool pprof -proto bin/pgo/*.prof >cmd/tablebench/default.pgo
	rm -rf bin/pgo bin/tablebench-nopgo
