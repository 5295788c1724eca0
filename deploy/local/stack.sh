#!/usr/bin/env bash
# Starts and stops the local services tocsin needs: the Temporal dev server
# (with its UI) and MinIO, both built into ./bin by the Makefile, and checks
# that PostgreSQL answers. Two profiles with separate ports and data:
#   run   Temporal 7233 (UI 8233), MinIO 9000 (console 9001)  - make run
#   test  Temporal 17233 (no UI),  MinIO 19000 (console 19001) - make test
# A service whose port already answers is reused and left alone on "down".
#
#   deploy/local/stack.sh up|down|env run|test
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
cmd=${1:?usage: stack.sh up|down|env run|test}
profile=${2:?usage: stack.sh up|down|env run|test}

case "$profile" in
  run)  tport=${TOCSIN_LOCAL_TEMPORAL_PORT:-7233};  uiport=${TOCSIN_LOCAL_TEMPORAL_UI_PORT:-8233}
        mport=${TOCSIN_LOCAL_MINIO_PORT:-9000};     mcport=${TOCSIN_LOCAL_MINIO_CONSOLE_PORT:-9001} ;;
  test) tport=17233; uiport=0; mport=19000; mcport=19001 ;;
  *) echo "unknown profile $profile" >&2; exit 2 ;;
esac
data="$root/.data/$profile"
mkdir -p "$data/minio" "$data/pids" "$data/logs"

# Task queue priority and per-tenant fairness, the same values as
# deploy/temporal/dynamicconfig.yaml (see README, "Under load").
temporal_dynamic_config=(
  --dynamic-config-value matching.useNewMatcher=true
  --dynamic-config-value matching.enableFairness=true
  --dynamic-config-value matching.numTaskqueueReadPartitions=1
  --dynamic-config-value matching.numTaskqueueWritePartitions=1
)

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # port name seconds
  for _ in $(seq 1 "$(( $3 * 5 ))"); do answers "$1" && return 0; sleep 0.2; done
  echo "$2 did not start on port $1; see $data/logs/$2.log" >&2
  tail -n 20 "$data/logs/$2.log" >&2 || true
  return 1
}

start() { # name port command...
  local name=$1 port=$2; shift 2
  if answers "$port"; then
    echo "$name: already answering on 127.0.0.1:$port, reusing it"
    return 0
  fi
  nohup "$@" >"$data/logs/$name.log" 2>&1 &
  echo $! >"$data/pids/$name"
  wait_for "$port" "$name" 60
  echo "$name: started on 127.0.0.1:$port (log: .data/$profile/logs/$name.log)"
}

up() {
  for tool in temporal minio; do
    [ -x "bin/$tool" ] || { echo "bin/$tool is missing: run make tools" >&2; exit 1; }
  done
  if [ "$profile" = run ]; then
    # WAL with synchronous=normal: commits do not wait for fsync, and a
    # crash of the server process loses nothing (see README).
    start temporal "$tport" bin/temporal server start-dev --ip 127.0.0.1 --port "$tport" \
      --ui-port "$uiport" --db-filename "$data/temporal.db" --log-level warn \
      --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
      --dynamic-config-value limit.blobSize.error=67108864 "${temporal_dynamic_config[@]}"
  else
    start temporal "$tport" bin/temporal server start-dev --ip 127.0.0.1 --port "$tport" \
      --headless --log-level warn "${temporal_dynamic_config[@]}"
  fi
  MINIO_ROOT_USER=minioadmin MINIO_ROOT_PASSWORD=minioadmin MINIO_BROWSER=$([ "$profile" = run ] && echo on || echo off) \
    start minio "$mport" bin/minio server "$data/minio" --address "127.0.0.1:$mport" \
      --console-address "127.0.0.1:$mcport" --quiet
}

down() {
  for f in "$data"/pids/*; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      echo "$(basename "$f"): stopped"
    fi
    rm -f "$f"
  done
}

env_vars() {
  echo "TOCSIN_TEMPORAL_ADDRESS=127.0.0.1:$tport"
  echo "TOCSIN_MINIO_ENDPOINT=127.0.0.1:$mport"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  env) env_vars ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
