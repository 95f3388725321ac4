#!/usr/bin/env bash
# `make test`: lint, unit and CDK template tests, then the end-to-end tests
# against the stack deployed in the local cloud. Starts the local cloud if it
# is not running and stops it afterwards if this script started it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

started=""
cleanup() { if [ -n "$started" ]; then scripts/local-down.sh || true; fi; }
trap cleanup EXIT

make --no-print-directory lint
go test -count=1 ./...

if [ -n "${HOOKLINE_OWN_CLOUD:-}" ] && ! curl -fsS -m 2 "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null 2>&1; then
  started=1
fi
make --no-print-directory deploy-local
go test -count=1 -tags e2e -timeout 20m -v ./e2e/... 2>&1 | tee "$STATE_DIR/e2e.log"
