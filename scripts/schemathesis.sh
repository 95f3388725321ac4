#!/usr/bin/env bash
# Runs schemathesis (pinned in scripts/env.sh, installed into .venv) against
# docs/openapi.yaml on the API deployed in the local cloud, tenant and
# operator routes alike, with the checks and bounds of scripts/schemathesis.toml:
# no server error, no undocumented status or media type, no schema-violating
# request accepted, no answer that does not match its schema, 405 with Allow
# for a method a path does not take. Exits non-zero on any failure. Needs
# `make deploy-local` first. SCHEMATHESIS_ARGS adds arguments (a --seed, say,
# or --max-examples N, which overrides the file's); SCHEMATHESIS_LOG names
# the log (default .local/schemathesis.log); SCHEMATHESIS_TIMEOUT bounds the
# run in seconds (default 900). scripts/schemathesis-seeds.sh runs it over
# several fresh seeds (make test-api-seeds).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

[ -f "$STATE_DIR/outputs.json" ] || { echo "schemathesis: no $STATE_DIR/outputs.json: run make deploy-local first" >&2; exit 1; }

want="schemathesis==$SCHEMATHESIS_VERSION"
if [ ! -x "$VENV/bin/schemathesis" ] || [ "$(cat "$VENV/.schemathesis" 2>/dev/null)" != "$want" ]; then
  echo "schemathesis: installing $want into .venv"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$want"
  echo "$want" > "$VENV/.schemathesis"
fi

# A fresh tenant, its key and the operator key, kept in this environment only.
targets=$(go run ./tooling/cmd/apitarget)
eval "$targets"
export HOOKLINE_API_URL HOOKLINE_TENANT_KEY HOOKLINE_OPERATOR_KEY

log="${SCHEMATHESIS_LOG:-$STATE_DIR/schemathesis.log}"
echo "schemathesis: $want against docs/openapi.yaml at $HOOKLINE_API_URL (log: $log)"
# The examples per operation bound a run to a minute or two on two cores;
# the timeout stops one that hangs. Run in .local, where schemathesis keeps
# its cache of failures (for `st replay <id>`, run there).
run() {
  status=0
  (
    cd "$STATE_DIR"
    timeout "${SCHEMATHESIS_TIMEOUT:-900}" "$VENV/bin/schemathesis" --no-color --config-file "$HOOKLINE_ROOT/scripts/schemathesis.toml" \
      run "$HOOKLINE_ROOT/docs/openapi.yaml" ${SCHEMATHESIS_ARGS:-}
  ) >"$log" 2>&1 || status=$?
}
run
# CPython 3.11's AST constructor can raise a spurious SystemError under
# threads (python/cpython#106905, fixed in later releases), which schemathesis's
# workers report as its own runtime error. A run that failed on that alone,
# with no check failing, is the interpreter's and runs once more; a run
# with any check failing stands, and so does the second run's outcome.
if [ "$status" -ne 0 ] && grep -q "AST constructor recursion depth mismatch" "$log" && ! grep -q "= FAILURES =" "$log"; then
  cp "$log" "$log.interpreter-error"
  echo "schemathesis: the run failed on CPython's spurious AST SystemError only (log kept in $log.interpreter-error); running once more"
  run
fi
# The summary: from the SUMMARY banner to the end (the failures above it are
# in the log).
sed -n '/= SUMMARY =/,$p' "$log"
if [ "$status" -ne 0 ]; then
  echo "schemathesis: failed (exit $status); the failures, with a curl line to reproduce each, are in $log" >&2
  exit "$status"
fi
