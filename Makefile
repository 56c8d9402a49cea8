# tablebench: `make bench` reproduces the case study, `make test` runs every test.
GO ?= go

.PHONY: all build test bench vet fmt

all: build

build:
	$(GO) build -o bin/tablebench ./cmd/tablebench

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }

# The engine's calibration tests simulate minutes of load in virtual time;
# they run in a second pass without the race detector, which would make them
# several times slower and adds nothing the shorter model tests don't check.
test: vet
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -tags calibration -run Calibration ./engine/

bench:
	@echo "make bench: the figure suite is not built yet; see the figures issue." >&2; exit 1
