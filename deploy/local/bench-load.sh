#!/usr/bin/env bash
# make bench-load: starts what the benchmark needs (the stack.sh test
# profile: Temporal 17233, MinIO 19000, and PostgreSQL with a tocsin_bench
# database), runs bin/tocsin-bench load, which seeds four tenants in a schema
# of its own, runs the worker as a separate process and the API in its own
# process, and writes .bench/load-<time>.json and .md, then stops the
# services it started. BENCH_LOAD_QUICK=1 runs small sizes (a smoke run);
# bin/tocsin-bench load -h lists the other BENCH_LOAD_* settings.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/local/test-services.sh
use_test_services TOCSIN_BENCH_DATABASE_URL tocsin_bench
echo "load average (uptime): $(uptime)"
# shellcheck disable=SC2086
bin/tocsin-bench load ${BENCH_FLAGS:-}
echo "load average (uptime): $(uptime)"
