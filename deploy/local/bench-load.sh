#!/usr/bin/env bash
# make bench-load / make bench-hooks: starts what the benchmark needs (the
# stack.sh test profile: Temporal 17233, MinIO 19000, and PostgreSQL with a
# tocsin_bench database), runs bin/tocsin-bench load|hooks, which works in a
# schema of its own, runs the worker as a separate process and the API in
# its own process, and writes .bench/<command>-<time>.json and .md, then
# stops the services it started. For load, BENCH_LOAD_QUICK=1 runs small
# sizes (a smoke run); bin/tocsin-bench load -h lists the other
# BENCH_LOAD_* settings. BENCH_FLAGS adds flags (bin/tocsin-bench hooks -h).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmd=${1:-load}
. deploy/local/test-services.sh
use_test_services TOCSIN_BENCH_DATABASE_URL tocsin_bench
echo "load average (uptime): $(uptime)"
# shellcheck disable=SC2086
bin/tocsin-bench "$cmd" ${BENCH_FLAGS:-}
echo "load average (uptime): $(uptime)"
