# tocsin: `make run` starts everything, `make test` runs every test.
# Tools the platform needs are built into ./bin on first use (pinned versions).

SHELL := /bin/bash
GO ?= go
TEMPORAL_CLI := github.com/temporalio/cli/cmd/temporal@v1.5.1
MINIO_SERVER := github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
REDOCLY_CLI := @redocly/cli@2.77.0

.PHONY: run test build tools openapi lint-openapi bench bench-alert bench-crash clean stop xmllint
.PHONY: bench-recipients bench-load bench-hooks fuzz

build: bin/tocsin

bin/tocsin: $(shell find . -name '*.go' -not -path './bin/*') $(wildcard storage/migrations/*.sql) go.mod go.sum
	$(GO) build -o bin/tocsin ./cmd/tocsin

bin/tocsin-bench: $(shell find . -name '*.go' -not -path './bin/*') $(wildcard storage/migrations/*.sql) go.mod go.sum
	$(GO) build -o bin/tocsin-bench ./cmd/tocsin-bench

bin/temporal:
	@echo "Building the Temporal CLI and dev server into ./bin (once; takes several minutes)..."
	GOBIN=$(CURDIR)/bin $(GO) install $(TEMPORAL_CLI)

bin/minio:
	@echo "Building the MinIO server into ./bin (once; takes several minutes)..."
	GOBIN=$(CURDIR)/bin $(GO) install $(MINIO_SERVER)

bin/node/node_modules/.bin/redocly:
	npm install --silent --no-audit --no-fund --prefix bin/node $(REDOCLY_CLI)

tools: bin/temporal bin/minio

# Starts PostgreSQL checks, Temporal (UI on :8233), MinIO (:9000), migrations,
# then the API (:8080) and the worker in one process. Ctrl-C stops everything
# this started.
run: build tools
	@deploy/local/run.sh

# xmllint validates CAP documents against the CAP 1.2 schema in tests
# (Debian's libxml2-utils).
xmllint:
	@command -v xmllint >/dev/null || { echo "Installing libxml2-utils (xmllint)..."; \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libxml2-utils >/dev/null; \
		else sudo apt-get update -qq && sudo apt-get install -y -qq libxml2-utils >/dev/null; fi; }

# Everything the tests need, then every test, then the OpenAPI lint.
test: build tools bin/node/node_modules/.bin/redocly xmllint
	@deploy/local/test.sh

# Regenerates openapi.json from the code (a test fails when it is stale).
openapi: build
	bin/tocsin openapi > openapi.json

lint-openapi: bin/node/node_modules/.bin/redocly
	bin/node/node_modules/.bin/redocly lint openapi.json --format=summary

# Benchmarks: each writes JSON and a Markdown table under .bench/ (git-ignored).
bench: bench-alert bench-load bench-hooks bench-recipients

# A text alert to BENCH_RECIPIENTS (100000) seeded contacts through a loopback
# SMS endpoint: accept latency, time to every recipient final, deliveries/s,
# worker peak RSS, and the endpoint's raw throughput.
bench-alert: build tools bin/tocsin-bench
	@deploy/local/bench-alert.sh alert

# SIGKILL the worker in the middle of such an alert, restart it, and check
# that every recipient ends with exactly one result.
bench-crash: build tools bin/tocsin-bench
	@deploy/local/bench-alert.sh crash

# Many small alerts: a burst of 1,000 from 16 clients, open loop at 50, 100
# and 200 requests/s, Emergency alerts and verification codes during a flood
# next to a 100,000-recipient alert, and empty workflows on the same Temporal
# server as the limit. BENCH_LOAD_QUICK=1 runs small sizes.
bench-load: build tools bin/tocsin-bench
	@deploy/local/bench-load.sh load

# One tenant's 500 events, each to its 10 hook subscriptions: starts/s of
# the hook dispatcher while no worker runs, and how soon another tenant's
# event is dispatched; then deliveries/s from a worker process to a
# loopback target. BENCH_FLAGS sets other sizes (bin/tocsin-bench hooks -h).
bench-hooks: build tools bin/tocsin-bench
	@deploy/local/bench-load.sh hooks

# Imports a generated 1,000,000-row contacts CSV into a schema of its own in
# the database of TOCSIN_DATABASE_URL; prints rows/s and peak memory.
bench-recipients:
	$(GO) run ./cmd/tocsin-bench import

# Starts `tocsin dev` on the test services and sends it FUZZ_REQUESTS (12000)
# hostile requests over every operation (NUL, invalid UTF-8, %00 ids,
# truncated multipart, oversize declared lengths, deep nesting, huge key
# counts, odd methods); prints status counts per operation and the API's
# peak RSS. Then 2,000 connections send half a request head slowly for 30 s
# while normal requests go on; prints their latency, refusals and the API's
# RSS. Fails on a 5xx, a failed normal request or a peak RSS over 512 MB.
FUZZ_REQUESTS ?= 12000
fuzz: build tools bin/tocsin-bench
	bin/tocsin-bench fuzz -requests $(FUZZ_REQUESTS)

# Stops services a killed `make run` or `make test` left behind.
stop:
	@deploy/local/stack.sh down run; deploy/local/stack.sh down test

clean: stop
	rm -rf .data
