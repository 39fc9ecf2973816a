#!/usr/bin/env bash
# Install EMBERBench with its test extra into ./.venv (if needed) and run the tests.
# Usage: scripts/test.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
# The browser tests drive Debian's Chromium and ChromeDriver. Install them when
# missing and possible (root with apt-get); elsewhere those tests skip and say why.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing chromium and chromium-driver for the browser tests" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } >&2 \
            || echo "warning: could not install chromium; the browser tests cannot run" >&2
    else
        echo "note: chromium/chromedriver are missing and cannot be installed here; the browser tests will skip" >&2
    fi
fi
# In CI the browser tests must run: a missing browser fails them instead of skipping.
if [ "${CI:-}" = "true" ]; then
    export EMBERBENCH_REQUIRE_BROWSER=1
fi
set +e
"$VENV/bin/python" -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
