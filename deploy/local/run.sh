#!/usr/bin/env bash
# make run: starts Temporal (UI :8233) and MinIO (:9000) unless they already
# answer, creates and migrates the tocsin database, then runs the API (:8080)
# and the worker in one process. Ctrl-C stops everything this script started.
set -euo pipefail
cd "$(dirname "$0")/../.."

export TOCSIN_DATABASE_URL=${TOCSIN_DATABASE_URL:-${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tocsin?sslmode=disable}}
http=${TOCSIN_HTTP_ADDR:-127.0.0.1:8080}
tenant=${TOCSIN_DEV_TENANT:-1001}

stop() { trap - EXIT INT TERM; echo; echo "stopping..."; kill "${child:-}" 2>/dev/null || true; wait 2>/dev/null || true; deploy/local/stack.sh down run; }
trap stop EXIT INT TERM

bin/tocsin migrate --create-db 2>/dev/null || { bin/tocsin migrate --create-db; exit 1; }
deploy/local/stack.sh up run

token=$(bin/tocsin token --tenant "$tenant")
cat <<MSG

tocsin is starting.
  API             http://$http   (OpenAPI: http://$http/openapi.json, docs: http://$http/docs)
  Metrics         http://$http/metrics  and worker http://${TOCSIN_WORKER_METRICS_ADDR:-127.0.0.1:9464}/metrics
  Temporal UI     http://127.0.0.1:8233
  MinIO console   http://127.0.0.1:9001  (minioadmin / minioadmin)

A development token for tenant $tenant (valid 24 hours; mint others with bin/tocsin token --tenant ID):
export TOKEN=$token
  curl -s -X POST -H "Authorization: Bearer \$TOKEN" http://$http/ops/smoke

MSG
bin/tocsin dev &
child=$!
wait "$child"
