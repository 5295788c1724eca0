#!/usr/bin/env bash
# make test: starts what the tests need (stack.sh test profile), runs every Go
# test (each integration test gets a database of its own, copied from a
# template migrated once), prints how many tests passed, failed and skipped
# (naming every skip), lints openapi.json, and stops the services it started.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/local/test-services.sh
use_test_services TOCSIN_TEST_DATABASE_URL tocsin_test

# Integration tests mostly wait (timers, callbacks, a broadcast window), so
# more of them run at once than the machine has cores (go test's default).
# Packages build and test as many at once as the machine has cores (or
# TEST_PACKAGES), but those that use the database take turns (storage/testdb):
# one package's running stacks hold up to about 65 of PostgreSQL's default
# 100 connections.
go test -json -count=1 ${TEST_PACKAGES:+-p "$TEST_PACKAGES"} -parallel "${TEST_PARALLEL:-8}" -timeout "${TEST_TIMEOUT:-25m}" ${TEST_FLAGS:-} ./... 2>&1 | go run ./deploy/local/testsummary
bin/node/node_modules/.bin/redocly lint openapi.json --format=summary 2>&1 | grep -v -e '^\s*[║╔╚]' -e '^$'
