#!/usr/bin/env bash
# Runs scripts/schemathesis.sh several times, each with a fresh random seed
# (printed before its run, and again at the end beside its result) and more
# examples per operation than make test's run (scripts/schemathesis.toml's
# generation.max-examples, 40). Reproduce a run with
#   SCHEMATHESIS_ARGS="--seed SEED --max-examples N" make test-api
# Settings: SCHEMATHESIS_SEEDS runs (default 3), SCHEMATHESIS_MAX_EXAMPLES
# per operation (default 150), SCHEMATHESIS_TIMEOUT per run in seconds
# (default 2400); SCHEMATHESIS_ARGS is passed on to every run. Each run's log
# is .local/schemathesis-<seed>.log. Exits non-zero when any run failed.
# Needs `make deploy-local` first.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

runs=${SCHEMATHESIS_SEEDS:-3}
examples=${SCHEMATHESIS_MAX_EXAMPLES:-150}
results=()
failed=0
for i in $(seq 1 "$runs"); do
  # A fresh seed from the kernel's random source, not $RANDOM (15 bits).
  seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  echo "schemathesis-seeds: run $i of $runs: seed $seed, $examples examples per operation"
  status=0
  SCHEMATHESIS_ARGS="--seed $seed --max-examples $examples ${SCHEMATHESIS_ARGS:-}" \
    SCHEMATHESIS_TIMEOUT="${SCHEMATHESIS_TIMEOUT:-2400}" \
    SCHEMATHESIS_LOG="$STATE_DIR/schemathesis-$seed.log" \
    scripts/schemathesis.sh || status=$?
  if [ "$status" -eq 0 ]; then
    results+=("seed $seed: passed")
  else
    results+=("seed $seed: FAILED (exit $status; log $STATE_DIR/schemathesis-$seed.log)")
    failed=1
  fi
done
echo "schemathesis-seeds: $runs runs, $examples examples per operation:"
printf '  %s\n' "${results[@]}"
exit "$failed"
