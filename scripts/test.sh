#!/usr/bin/env bash
# `make test`: lint; the local cloud started and the stack deployed (through
# the upgrade test); unit and CDK template tests (cdk-nag among them) and
# cfn-lint on the synthesized template, beside the one end-to-end test that
# must run alone; then the other end-to-end tests, schemathesis, the kill test
# and a faulted soak against the stack deployed in the local cloud. The
# TypeScript and Python outbox libraries' tests run beside the upgrade test.
# Starts the local cloud if it is not running and stops it afterwards if
# this script started it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

started=""
# Each phase's time, printed as it ends and summed up at the end, so a slow
# run shows where its minutes went.
phases=""
phase_start=$(date +%s)
phase() {
  local now; now=$(date +%s)
  phases+="$(printf '%-22s %4d s' "$1" $((now - phase_start)))"$'\n'
  echo "test: phase $1 took $((now - phase_start)) s"
  phase_start=$now
}
# One test at a time runs in the background, beside the foreground's
# (`beside LOG CMD...`, its output to LOG; `beside_wait` for its status). A
# failure elsewhere that ends the run stops it: its child (go run and go
# test each start one), then it.
bg_pid=""
beside() { local log=$1; shift; "$@" >"$log" 2>&1 & bg_pid=$!; }
beside_wait() { local rc=0; wait "$bg_pid" || rc=$?; bg_pid=""; return "$rc"; }
cleanup() {
  if [ -n "$bg_pid" ]; then
    pkill -P "$bg_pid" 2>/dev/null || true
    kill "$bg_pid" 2>/dev/null || true
  fi
  if [ -n "$started" ]; then scripts/local-down.sh || true; fi
}
trap cleanup EXIT

# The console's browser tests (e2e/console_*_test.go) drive Debian's headless
# Chromium; when it is missing it is installed (CI runs as root on Debian) in
# the background, while the lint and the local cloud's setup run, and waited
# for before the end-to-end tests.
chromium_pid=""
if [ ! -x /usr/bin/chromium ]; then
  echo "test: /usr/bin/chromium is missing; installing Debian's chromium for the console's browser tests (apt-get, in the background)"
  # As root (CI), or through sudo where the user has it.
  as_root=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then as_root="sudo -n"; fi
  { $as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends chromium; } \
    >"$STATE_DIR/chromium-install.log" 2>&1 &
  chromium_pid=$!
fi
wait_chromium() {
  [ -n "$chromium_pid" ] || return 0
  if ! wait "$chromium_pid"; then
    echo "test: installing chromium failed (log: $STATE_DIR/chromium-install.log); the console's browser tests need it" >&2
    tail -20 "$STATE_DIR/chromium-install.log" >&2
    exit 1
  fi
  echo "test: chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
  chromium_pid=""
}

phase "setup"
make --no-print-directory lint
phase "lint"

if [ -n "${HOOKLINE_OWN_CLOUD:-}" ] && ! curl -fsS -m 2 "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null 2>&1; then
  started=1
fi
make --no-print-directory local-up build-local tools
phase "local cloud"
# The upgrade test: the earlier releases (52e80f2, then c4d38bf) deployed
# into the fresh local cloud, written through, and upgraded by the steps
# of docs/deploying.md; its last step, this version's defaults, is the
# deploy-local below, which the end-to-end tests use
# (TestUpgradeKeptEverything checks what was written before).
# Beside it, which mostly waits on the local cloud's deploys: the
# TypeScript and Python outbox libraries' tests (the shared vectors,
# outbox/testvectors.json, among them), which also build what the
# end-to-end test of their example producers runs
# (TestProducersInOtherLanguages): npm ci and a venv from the registries.
beside "$STATE_DIR/libraries.log" make --no-print-directory outbox-ts-test outbox-py-test
scripts/upgrade.sh
libraries_ok=1
beside_wait || libraries_ok=""
cat "$STATE_DIR/libraries.log"
[ -n "$libraries_ok" ] || { echo "test: the outbox libraries' tests failed (log: $STATE_DIR/libraries.log)" >&2; exit 1; }
phase "upgrade, libraries"
make --no-print-directory deploy-local
phase "deploy"

e2e() { go test -count=1 -tags e2e -timeout 20m "$@" ./e2e/...; }
# The end-to-end tests' log: the verbose log is long and a CI page may show
# only its ends, so what the tests themselves said (their file:line
# messages) and which failed are repeated last, where they are seen.
e2e_failed() {
  echo "test: the end-to-end tests failed; what they said (whole log: $1):"
  awk '/^=== (RUN|CONT|NAME|PAUSE)/ { keep = 0 }
       /^[[:space:]]+[A-Za-z0-9_]+_test\.go:[0-9]+:/ { keep = ($1 !~ /^docs_test\.go:/) }
       /^[[:space:]]*--- FAIL/ { print; keep = 0; next }
       keep' "$1" | tail -150
  grep -E '^[[:space:]]*--- FAIL' "$1" || true
  exit 1
}

# One end-to-end test breaks the enqueue function for a minute
# (TestParkedStreamBatchesAreReprocessed: a batch is parked only once it is
# older than the stream mapping's age cap, 60 s at least), so no other
# end-to-end test may run beside it; it mostly waits, and the unit tests and
# cfn-lint, which need no cloud, use that minute.
parked='^TestParkedStreamBatchesAreReprocessed$'
beside "$STATE_DIR/e2e-parked.log" e2e -run "$parked" -v
make --no-print-directory test-unit
scripts/cfn-lint.sh
beside_wait || e2e_failed "$STATE_DIR/e2e-parked.log"
grep -E '^(--- |ok|PASS)' "$STATE_DIR/e2e-parked.log" || true
phase "unit tests, cfn-lint"

wait_chromium
if ! e2e -skip "$parked" -parallel "${E2E_PARALLEL:-6}" -v 2>&1 | tee "$STATE_DIR/e2e.log"; then
  e2e_failed "$STATE_DIR/e2e.log"
fi
phase "end to end"
# The kill test: SIGKILL to the running deliver and enqueue processes while
# events flow to receivers that fail at random (one of them down, so its
# deliveries die and are replayed); every pair must arrive, signed, under one
# webhook-id, and each crash victim's wait until its retry is printed. Beside
# the two HTTP receivers, one SQS, SNS and EventBridge destination each (at a
# customer account on the local cloud) is held to the same checks.
#
# It runs beside schemathesis (the API against its OpenAPI document: no
# server error, no undocumented status, no schema-violating request
# accepted, no answer off its schema): the kill test mostly waits on its
# chaos and its victims' visibility timeouts, and kills only the deliver and
# enqueue functions' processes, while schemathesis tests the api function
# with tenants of its own. One operation is fuzzed after the kill test
# instead: the operator's whole-DLQ redrive would move the kill test's dead
# deliveries, which it expects listed dead until it replays them.
beside "$STATE_DIR/kill-test.log" \
  go run ./tooling/cmd/soak -events 200 -endpoints 2 -chaos 15s -rate 10 -kill 3s -kill-for 25s -timeout 8m
redrive=/v1/admin/dlq/redrive
SCHEMATHESIS_ARGS="--exclude-path $redrive" scripts/schemathesis.sh
kill_ok=1
beside_wait || kill_ok=""
cat "$STATE_DIR/kill-test.log"
[ -n "$kill_ok" ] || { echo "test: the kill test failed (log: $STATE_DIR/kill-test.log)" >&2; exit 1; }
SCHEMATHESIS_ARGS="--include-path $redrive" SCHEMATHESIS_LOG="$STATE_DIR/schemathesis-redrive.log" scripts/schemathesis.sh
phase "schemathesis, kill test"

# A small soak: the same stack redeployed with faults injected into the
# functions (a deliver process that exits mid-batch, an enqueue that fails
# after sending part of its messages), chaotic receivers, and the check that
# nothing is lost. `make soak` runs the full size. A deliver exit takes its
# whole batch's delivered first attempts with it (their records are written
# together, at the batch's end: issue 37), each redelivered a visibility
# timeout later, so the rate is half `make soak`'s: about 8 exits in 1,600
# attempts, each with up to ten victims (at 1% the run's tail of victims
# of victims took 3 minutes to settle, and make test a minute and a half
# more; nothing was lost).
echo "soak: redeploying with injected faults"
HOOKLINE_LOCAL_FAULTS=deliver_crash:0.005,enqueue_fail:0.05 HOOKLINE_LOCAL_DELIVER_TIMEOUT=10s scripts/deploy-local.sh
go run ./tooling/cmd/soak -events 300 -endpoints 2 -chaos 20s -timeout 8m
phase "faulted soak"
printf 'test: time by phase\n%s' "$phases"
if [ -z "$started" ]; then
  echo "soak: redeploying without faults (the local cloud stays up)"
  scripts/deploy-local.sh
fi
