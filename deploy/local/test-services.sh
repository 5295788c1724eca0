# shellcheck shell=bash
# Sourced by the scripts that run on the test services (test.sh,
# bench-alert.sh, bench-load.sh), from the top of the repository.
#
# use_test_services VAR NAME: unless VAR is set, points it at the database
# NAME on the server of DATABASE_URL, or else on the local PostgreSQL, and
# exports it; then starts the stack.sh test profile (Temporal 17233, MinIO
# 19000), which stops what it started when the script exits.
use_test_services() {
  local var=$1 name=$2 url=${!1:-}
  if [ -z "$url" ] && [ -n "${DATABASE_URL:-}" ]; then
    url=${DATABASE_URL%/*}/$name?sslmode=disable
  fi
  export "$var=${url:-postgres://postgres@127.0.0.1:5432/$name?sslmode=disable}"
  trap 'deploy/local/stack.sh down test' EXIT
  deploy/local/stack.sh up test
}
