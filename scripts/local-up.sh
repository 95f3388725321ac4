#!/usr/bin/env bash
# Starts the local cloud (ministack, pinned, in a project-local virtualenv) on
# 127.0.0.1:$HOOKLINE_LOCAL_PORT (default 4566) and waits until it is healthy. Idempotent: a healthy local
# cloud is left as it is. With AWS_ENDPOINT_URL set by the user, only checks
# that it answers.
set -euo pipefail
source "$(dirname "$0")/env.sh"

healthy() { curl -fsS -m 2 "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null 2>&1; }

if [ -z "${HOOKLINE_OWN_CLOUD:-}" ]; then
  for _ in $(seq 1 30); do healthy && { echo "local cloud: using $AWS_ENDPOINT_URL"; exit 0; }; sleep 1; done
  echo "local cloud: $AWS_ENDPOINT_URL (from AWS_ENDPOINT_URL) does not answer" >&2
  exit 1
fi

if healthy; then
  echo "local cloud: ministack already running on $AWS_ENDPOINT_URL"
  exit 0
fi

want="ministack==$MINISTACK_VERSION cbor2==$CBOR2_VERSION"
if [ ! -x "$VENV/bin/ministack" ] || [ "$(cat "$VENV/.pinned" 2>/dev/null)" != "$want" ]; then
  echo "local cloud: installing $want into .venv"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $want
  echo "$want" > "$VENV/.pinned"
fi

echo "local cloud: starting ministack $MINISTACK_VERSION on 127.0.0.1:$HOOKLINE_LOCAL_PORT (log: $STATE_DIR/ministack.log)"
# ministack's app with Lambda's batching window honoured
# (scripts/localcloud/hookline_localcloud.py; docs/local-cloud.md).
shim="$(cd "$(dirname "$0")/localcloud" && pwd)"
(
  cd "$STATE_DIR"
  # The functions ministack runs inherit this environment.
  BIND_HOST=127.0.0.1 GATEWAY_PORT=$HOOKLINE_LOCAL_PORT LOG_LEVEL=${MINISTACK_LOG_LEVEL:-INFO} \
    PYTHONPATH="$shim${PYTHONPATH:+:$PYTHONPATH}" nohup "$VENV/bin/python" -m hypercorn hookline_localcloud:app --bind 127.0.0.1:$HOOKLINE_LOCAL_PORT \
    --keep-alive 75 >"$STATE_DIR/ministack.log" 2>&1 &
  echo $! > "$STATE_DIR/ministack.pid"
)
for _ in $(seq 1 60); do
  if healthy; then echo "local cloud: healthy"; exit 0; fi
  if ! kill -0 "$(cat "$STATE_DIR/ministack.pid")" 2>/dev/null; then
    echo "local cloud: ministack exited; last lines of its log:" >&2
    tail -20 "$STATE_DIR/ministack.log" >&2
    exit 1
  fi
  sleep 1
done
echo "local cloud: ministack did not become healthy in 60 s; last lines of its log:" >&2
tail -20 "$STATE_DIR/ministack.log" >&2
exit 1
