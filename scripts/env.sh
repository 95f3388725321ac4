# Sourced by the other scripts: where the local cloud is and how to reach it.
# A user who runs their own local cloud (e.g. LocalStack) sets AWS_ENDPOINT_URL
# before calling make; otherwise ministack is started on 127.0.0.1 at
# HOOKLINE_LOCAL_PORT (default 4566; another port lets two checkouts each run
# their own local cloud).
HOOKLINE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export HOOKLINE_ROOT
export HOOKLINE_LOCAL_PORT=${HOOKLINE_LOCAL_PORT:-4566}
if [ -z "${AWS_ENDPOINT_URL:-}" ]; then
  export AWS_ENDPOINT_URL=http://127.0.0.1:$HOOKLINE_LOCAL_PORT
  export HOOKLINE_OWN_CLOUD=1
fi
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test}
export AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
export AWS_REGION=${AWS_REGION:-us-east-1}
export AWS_DEFAULT_REGION=$AWS_REGION
export CDK_DEFAULT_ACCOUNT=${CDK_DEFAULT_ACCOUNT:-000000000000}
export CDK_DEFAULT_REGION=$AWS_REGION
# Pinned tool versions: bump them here, nowhere else.
MINISTACK_VERSION=1.5.33
CBOR2_VERSION=6.3.0
CFN_LINT_VERSION=1.58.0
# API fuzzing against docs/openapi.yaml (scripts/schemathesis.sh).
SCHEMATHESIS_VERSION=4.32.5
VENV="$HOOKLINE_ROOT/.venv"
STATE_DIR="$HOOKLINE_ROOT/.local"
mkdir -p "$STATE_DIR"
