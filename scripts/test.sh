#!/usr/bin/env bash
# Install EMBERBench with its test extra into ./.venv (if needed) and run the tests.
# Usage: scripts/test.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
set +e
"$VENV/bin/python" -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
