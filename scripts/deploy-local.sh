#!/usr/bin/env bash
# Deploys the CDK app into the local cloud with `cdk bootstrap` and `cdk
# deploy`, then applies the local cloud's workarounds (all of them here, in
# one place; see docs/local-cloud.md). Writes the stack outputs to
# .local/outputs.json for the tests and the demo.
#
# Local settings: binaries for the host architecture, a short retry schedule
# so retries and dead-lettering happen in seconds, and loopback allowed by the
# SSRF guard so receivers on 127.0.0.1 can be reached and registered (http),
# and a 5 s delivery.dead window so the operational events' tests see their
# summaries in seconds. The endpoints' isolation is scaled to the short
# schedule (0s,1s,4s,10s spans 15 s): the circuit breaker opens for 1 s,
# doubling to at most 4 s, and a run of failures must last 30 s, besides
# disableAfter attempts, before it disables an endpoint (override with
# HOOKLINE_LOCAL_BREAKER_COOLDOWN, HOOKLINE_LOCAL_BREAKER_MAX_COOLDOWN,
# HOOKLINE_LOCAL_DISABLE_AFTER_FOR). An expensive API request's time budget
# is 6 s, not 2 s (HOOKLINE_LOCAL_API_EXPENSIVE_BUDGET): every function and
# the local cloud share two cores, and under the e2e suite's parallel tests
# a message-log listing ran over 2 s and the console test waiting for its
# rows failed; the budget's own behaviour is held by internal/api's tests.
# Not more than 6 s: the construct lowers an unset per-tenant expensive
# rate to hold half of the api function's 60 executions (30 / budget), and
# the e2e tests count on the default 5 a second.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

SCHEDULE=${HOOKLINE_LOCAL_RETRY_SCHEDULE:-0s,1s,4s,10s}
MAX_AGE=${HOOKLINE_LOCAL_MAX_AGE:-1h}
CDK=(scripts/cdk.sh)
CTX=(-c architecture=host -c "retrySchedule=$SCHEDULE" -c "maxAge=$MAX_AGE" -c allowCIDRs=127.0.0.0/8 -c allowHTTP=true
  -c "requestTimeout=${HOOKLINE_LOCAL_REQUEST_TIMEOUT:-3s}" -c "disableAfter=${HOOKLINE_LOCAL_DISABLE_AFTER:-50}"
  -c "replayRate=${HOOKLINE_LOCAL_REPLAY_RATE:-10}" -c sweepInterval=1m
  -c "failingAfter=${HOOKLINE_LOCAL_FAILING_AFTER:-10}" -c "deadNoticeWindow=${HOOKLINE_LOCAL_DEAD_NOTICE_WINDOW:-5s}"
  -c portalMinTTL=1s -c destinationOwnAccount=true -c destinationRoleProbe=false
  -c "breakerCooldown=${HOOKLINE_LOCAL_BREAKER_COOLDOWN:-1s}" -c "breakerMaxCooldown=${HOOKLINE_LOCAL_BREAKER_MAX_COOLDOWN:-4s}"
  -c "disableAfterFor=${HOOKLINE_LOCAL_DISABLE_AFTER_FOR:-30s}"
  -c "statsFlushEvery=${HOOKLINE_LOCAL_STATS_FLUSH_EVERY:--1s}"
  -c "apiExpensiveBudget=${HOOKLINE_LOCAL_API_EXPENSIVE_BUDGET:-6s}"
  -c deliverMaxConcurrency=10 -c enqueueParallelization=1 -c enqueueSendConcurrency=1
  -c notifyFrom=notices@hookline.local)
# The message log is the default's, as a new stack's: the sharded index only
# (by_tenant_shard), which the end-to-end tests read and erase through.
# deliverMaxConcurrency=10 (the tenant lane's mapping keeps its default, 6;
# deliver's reservation covers both: 10 + 6 + 1 = 17),
# enqueueParallelization=1 and enqueueSendConcurrency=1 keep the local cloud
# at the construct's earlier behaviour: the end-to-end tests run on 2 cores,
# and were written and timed against it (AWS's defaults are 25, 2 and 4:
# docs/capacity.md).
# The deliver function's timeout is derived from the request timeout (3s + 5s)
# unless set: its queue's visibility, six times that, is how long a crashed
# batch waits before it is tried again.
# The event-type catalog: the local stack's is e2e/testdata/catalog, which
# declares every type the end-to-end tests, the demo, the docs' examples and
# the benchmarks subscribe to (with a catalog, an endpoint may subscribe only
# to what it knows) and the catalog tests' own (a reject and a warn type).
# HOOKLINE_LOCAL_EVENT_TYPES_DIR names another folder, or "none" for a stack
# without a catalog.
EVENT_TYPES_DIR=${HOOKLINE_LOCAL_EVENT_TYPES_DIR:-e2e/testdata/catalog}
if [ "$EVENT_TYPES_DIR" != none ]; then
  CTX+=(-c "eventTypesDir=$EVENT_TYPES_DIR")
fi
if [ -n "${HOOKLINE_LOCAL_DELIVER_TIMEOUT:-}" ]; then
  CTX+=(-c "deliverTimeout=$HOOKLINE_LOCAL_DELIVER_TIMEOUT")
fi
# The upgrade test (scripts/upgrade.sh) deploys the documented upgrade
# steps with their own context: "-c key=value ..." (never otherwise).
if [ -n "${HOOKLINE_LOCAL_CONTEXT:-}" ]; then
  read -r -a extra <<<"$HOOKLINE_LOCAL_CONTEXT"
  CTX+=("${extra[@]}")
  echo "deploy-local: with $HOOKLINE_LOCAL_CONTEXT"
fi
# The soak deploys with faults injected into the functions (never otherwise).
if [ -n "${HOOKLINE_LOCAL_FAULTS:-}" ]; then
  CTX+=(-c "faults=$HOOKLINE_LOCAL_FAULTS")
  echo "deploy-local: with injected faults $HOOKLINE_LOCAL_FAULTS"
fi

echo "deploy-local: cdk bootstrap"
"${CDK[@]}" bootstrap "aws://$CDK_DEFAULT_ACCOUNT/$AWS_REGION" "${CTX[@]}" >"$STATE_DIR/bootstrap.log" 2>&1 \
  || { cat "$STATE_DIR/bootstrap.log" >&2; exit 1; }
echo "deploy-local: cdk deploy (retry schedule $SCHEDULE)"
"${CDK[@]}" deploy Hookline --require-approval never "${CTX[@]}" \
  --outputs-file "$STATE_DIR/outputs.json" >"$STATE_DIR/deploy.log" 2>&1 \
  || { tail -40 "$STATE_DIR/deploy.log" >&2; exit 1; }

# Workaround: some local clouds drop the RedrivePolicy of a queue created by
# CloudFormation. Set it again through the SQS API from the stack outputs;
# on a cloud that kept it, this rewrites the same value.
go run ./tooling/cmd/localfix -outputs "$STATE_DIR/outputs.json" -ses-identity hookline.local
echo "deploy-local: done; outputs in .local/outputs.json"
