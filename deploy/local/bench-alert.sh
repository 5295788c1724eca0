#!/usr/bin/env bash
# make bench-alert / make bench-crash: starts what the benchmark needs (the
# stack.sh test profile: Temporal 17233, MinIO 19000, and PostgreSQL with a
# tocsin_bench database), runs bin/tocsin-bench alert|crash, which seeds
# BENCH_RECIPIENTS contacts (100000 by default) in a schema of its own, runs
# the worker as a separate process and writes .bench/<command>-<n>-<time>.json
# and .md, then stops the services it started. BENCH_FLAGS adds flags
# (bin/tocsin-bench alert -h lists them).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmd=${1:-alert}
. deploy/local/test-services.sh
use_test_services TOCSIN_BENCH_DATABASE_URL tocsin_bench
# shellcheck disable=SC2086
bin/tocsin-bench "$cmd" --recipients "${BENCH_RECIPIENTS:-100000}" ${BENCH_FLAGS:-}
