#!/usr/bin/env bash
# Stops the ministack that local-up.sh started (and the function processes it
# runs). Leaves a user's own AWS_ENDPOINT_URL cloud alone.
set -euo pipefail
source "$(dirname "$0")/env.sh"
pidfile="$STATE_DIR/ministack.pid"
if [ -f "$pidfile" ]; then
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    pkill -TERM -P "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
    echo "local cloud: ministack stopped"
  fi
  rm -f "$pidfile"
else
  echo "local cloud: not started by this project"
fi
