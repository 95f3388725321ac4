#!/usr/bin/env bash
# The upgrade test, the first deploy of `make test`: deploys the earliest
# supported release (52e80f2) into a fresh local cloud, writes data of
# every kind through it, and upgrades step by step by the plan of
# docs/deploying.md ("Upgrading from an earlier release", parsed by
# internal/upgradeplan), through c4d38bf and 94033e1, the release before
# issue 37 (each deployed where its own plan joins, and written through
# again), waiting after each deploy until every
# index is ACTIVE as the documented steps do. It stops before the last
# step, this version's defaults: that deploy is `make deploy-local`, the
# one the end-to-end tests use, and TestUpgradeKeptEverything (e2e) checks
# that everything written before is still listed, readable, replayable and
# delivered, from .local/upgrade-fixture.json.
#
# An earlier release is built from a git worktree of its commit under
# .local/releases/<commit> (its own Makefile's build-local and its own
# scripts/deploy-local.sh, with this checkout's CDK CLI and the shared Go
# module cache); a step's context reaches it through its cdk.context.json.
# HOOKLINE_UPGRADE_CHAIN names the releases (default 52e80f2,c4d38bf,94033e1);
# a clone without their commits fails here, loudly.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"

CHAIN=${HOOKLINE_UPGRADE_CHAIN:-52e80f2,c4d38bf,94033e1}
for c in ${CHAIN//,/ }; do
  if ! git cat-file -e "$c^{commit}" 2>/dev/null; then
    echo "upgrade: release $c is not in this clone; the upgrade test needs the full history (git fetch --unshallow)" >&2
    exit 1
  fi
done
# A fixture of an earlier run would describe data this run did not write.
rm -f "$STATE_DIR/upgrade-fixture.json"
if go run ./tooling/cmd/upgrade stack-exists >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then
    echo "upgrade: the stack is already deployed; the upgrade test needs a fresh local cloud" >&2
    exit 1
  fi
  echo "upgrade: the stack is already deployed in this local cloud: the upgrade test is skipped (make local-down for a fresh cloud)"
  exit 0
fi

go run ./tooling/cmd/upgrade plan -chain "$CHAIN" >"$STATE_DIR/upgrade-plan.txt"
steps=$(wc -l <"$STATE_DIR/upgrade-plan.txt")
echo "upgrade: $((steps - 1)) deploys, then make deploy-local:"
sed 's/^/  /' "$STATE_DIR/upgrade-plan.txt"

deploy_release() {
  local commit=$1; shift
  local tree="$STATE_DIR/releases/$commit"
  if [ ! -d "$tree" ]; then
    mkdir -p "$STATE_DIR/releases"
    git worktree add --detach "$tree" "$commit" >/dev/null
  fi
  ln -sfn "$HOOKLINE_ROOT/node_modules" "$tree/node_modules"
  # The step's context (-c key=value ...) as the release's cdk.context.json.
  local json="{" sep="" kv
  while [ $# -gt 0 ]; do
    kv=$2; shift 2
    json+="$sep\"${kv%%=*}\":\"${kv#*=}\""; sep=","
  done
  printf '%s}\n' "$json" >"$tree/cdk.context.json"
  echo "upgrade: building and deploying release $commit (context $(cat "$tree/cdk.context.json"))"
  (cd "$tree" && make --no-print-directory build-local >"$STATE_DIR/upgrade-build-$commit.log" 2>&1) \
    || { tail -20 "$STATE_DIR/upgrade-build-$commit.log" >&2; exit 1; }
  (cd "$tree" && env -u HOOKLINE_ROOT scripts/deploy-local.sh) || exit 1
  cp "$tree/.local/outputs.json" "$STATE_DIR/outputs.json"
}

n=0
while read -r kind rest; do
  n=$((n + 1))
  [ "$n" -lt "$steps" ] || break # the last: this version's defaults, make deploy-local
  read -r -a args <<<"$rest"
  case $kind in
    release)
      deploy_release "${args[@]}"
      go run ./tooling/cmd/upgrade wait-active
      go run ./tooling/cmd/upgrade write -release "${args[0]}" -context "$(printf '%s\n' "${args[@]:1}" | grep -v '^-c$' | sort | paste -sd, -)"
      ;;
    checkout)
      echo "upgrade: deploying this version with ${rest:-the defaults}"
      HOOKLINE_LOCAL_CONTEXT="$rest" scripts/deploy-local.sh
      go run ./tooling/cmd/upgrade wait-active
      ;;
  esac
done <"$STATE_DIR/upgrade-plan.txt"
echo "upgrade: done; make deploy-local takes the last step"
