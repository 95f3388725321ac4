#!/usr/bin/env bash
# Synthesizes an earlier release of hookline (a commit) from its own
# checkout under .local/releases/<commit> (a git worktree, made here if it
# is missing), with the given context (key=value ...), into
# .local/releases/<commit>.out/<context>; prints the template's path.
# Placeholder binaries stand in for the functions: the template's tables
# and indexes do not depend on them. `go run ./infra tables TEMPLATE` reads
# the tables' indexes out of it (infra/testdata/releases.golden.json).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$HOOKLINE_ROOT"
commit=${1:?usage: release-synth.sh COMMIT [key=value ...]}
shift
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "release-synth: commit $commit is not in this clone: fetch the full history (git fetch --unshallow)" >&2
  exit 1
fi
tree="$STATE_DIR/releases/$commit"
if [ ! -d "$tree" ]; then
  mkdir -p "$STATE_DIR/releases"
  git worktree add --detach "$tree" "$commit" >/dev/null
fi
assets="$STATE_DIR/releases/fake-assets"
for fn in enqueue deliver api replay; do
  mkdir -p "$assets/$fn" && printf '%s placeholder' "$fn" >"$assets/$fn/bootstrap"
done
ctx=$(printf '%s\n' "$@" | sort | paste -sd, -)
out="$STATE_DIR/releases/$commit.out/${ctx:-defaults}"
rm -rf "$out" && mkdir -p "$out"
json="{\"assetDir\":\"$assets\",\"architecture\":\"arm64\""
for kv in "$@"; do json+=",\"${kv%%=*}\":\"${kv#*=}\""; done
json+="}"
(cd "$tree" && CDK_OUTDIR="$out" CDK_CONTEXT_JSON="$json" go run ./infra) >"$out.log" 2>&1 \
  || { tail -20 "$out.log" >&2; exit 1; }
ls "$out"/*.template.json | head -1
