#!/usr/bin/env bash
# make run: starts Temporal (UI :8233) and MinIO (:9000) unless they already
# answer, creates and migrates the tocsin database, then runs the API (:8080)
# and the worker in one process, with the loopback email/text sandbox (SMTP
# :1025, texts :8091, inspect http://127.0.0.1:8025/messages) unless an SMTP
# server already answers. Ctrl-C stops everything this script started.
set -euo pipefail
cd "$(dirname "$0")/../.."

export TOCSIN_DATABASE_URL=${TOCSIN_DATABASE_URL:-${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tocsin?sslmode=disable}}
http=${TOCSIN_HTTP_ADDR:-127.0.0.1:8080}
tenant=${TOCSIN_DEV_TENANT:-1001}

smtp=${TOCSIN_SMTP_ADDR:-127.0.0.1:1025}
inspect=${TOCSIN_SANDBOX_INSPECT_ADDR:-127.0.0.1:8025}

stop() { trap - EXIT INT TERM; echo; echo "stopping..."; kill "${child:-}" "${sandbox:-}" 2>/dev/null || true; wait 2>/dev/null || true; deploy/local/stack.sh down run; }
trap stop EXIT INT TERM

bin/tocsin migrate --create-db 2>/dev/null || { bin/tocsin migrate --create-db; exit 1; }
deploy/local/stack.sh up run

if (exec 3<>"/dev/tcp/${smtp%:*}/${smtp##*:}") 2>/dev/null; then
  mail="Email/texts     an SMTP server already answers on $smtp; texts go to ${TOCSIN_SMS_URL:-http://127.0.0.1:8091/messages}"
else
  mkdir -p .data/run/logs
  bin/tocsin sandbox --inspect "$inspect" >.data/run/logs/sandbox.log 2>&1 &
  sandbox=$!
  mail="Email/texts     sandbox (SMTP $smtp, texts ${TOCSIN_SMS_URL:-http://127.0.0.1:8091/messages}); received: http://$inspect/messages"
fi

token=$(bin/tocsin token --tenant "$tenant")
optoken=$(bin/tocsin token --tenant 1 --sub operator --scope operator)
cat <<MSG

tocsin is starting.
  API             http://$http   (OpenAPI: http://$http/openapi.json, docs: http://$http/docs)
  Metrics         http://$http/metrics  and worker http://${TOCSIN_WORKER_METRICS_ADDR:-127.0.0.1:9464}/metrics
  Temporal UI     http://127.0.0.1:8233
  MinIO console   http://127.0.0.1:9001  (minioadmin / minioadmin)
  $mail

A development token for tenant $tenant (valid 24 hours; mint others with bin/tocsin token --tenant ID):
export TOKEN=$token
  curl -s -X POST -H "Authorization: Bearer \$TOKEN" http://$http/ops/smoke

Temporal payloads are encrypted. To read them in the Temporal UI, sign in at
http://$http/codec/session with this operator token, then tick "Include
cross-origin credentials" under Configure Codec Server in the UI (README: Reading payloads):
$optoken

MSG
bin/tocsin dev &
child=$!
wait "$child"
