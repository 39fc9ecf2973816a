#!/usr/bin/env bash
# Install EMBERBench with its test extra into ./.venv (if needed) and run the tests.
# Usage: scripts/test.sh [--quick] [pytest arguments...]
#   --quick   only the unit and property tests that start nothing outside the process:
#             deselects the markers in tests/markers.py (QUICK_EXCLUDES): integration,
#             ray, s3, served_server, browser, docs, multihost and slow.
# The tests run on every core with pytest-xdist (`-n auto`; the quick loop one worker more);
# EMBERBENCH_TEST_WORKERS=N sets the number of workers (0: no xdist), and an -n of your own wins.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
args=()
for arg in "$@"; do
    if [ "$arg" = "--quick" ]; then quick=1; else args+=("$arg"); fi
done
. scripts/_venv.sh
if [ "$quick" = 1 ]; then
    args=(-m "$("$VENV/bin/python" -c 'from tests.markers import quick_expression; print(quick_expression())')" "${args[@]}")
fi
# Keep compiled bytecode between runs, in the venv rather than in __pycache__ folders of
# the tree, even where the environment says not to write it: otherwise every xdist
# worker rewrites the asserts of every test module (about 10 s of CPU for this suite)
# and every Python subprocess of a test compiles the project again.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$VENV/pycache}"
# The quick loop runs one worker more than there are CPUs: about a sixth of its tests' time is spent waiting
# (for child processes, timeouts, sleeping policies), and a spare worker fills those gaps (docs/testing.md:
# 141 s and 161 s against 167 s with one worker per CPU on an idle 2-core machine). The full suite keeps one per CPU,
# so that its Ray and multi-host tests do not compete with more than the machine has.
if [ "$quick" = 1 ]; then
    default_workers=$(( $(nproc) + 1 ))
else
    default_workers=auto
fi
workers="${EMBERBENCH_TEST_WORKERS:-$default_workers}"
case " ${args[*]} " in
    *" -n"* | *" --numprocesses"*) workers="" ;;
esac
if [ -n "$workers" ] && [ "$workers" != 0 ]; then
    args=(-n "$workers" "${args[@]}")
fi
# The browser tests drive Debian's Chromium and ChromeDriver. Install them when
# missing and possible (root with apt-get); elsewhere those tests skip and say why.
# Headless Chromium needs only what the packages depend on: without their
# recommendations apt adds 26 packages instead of 116 to this project's machine
# image (no udev, avahi, upower, printing tools, Perl libraries or Liberation
# fonts), in about half the time (docs/testing.md). fonts-dejavu-core is named so
# that a base system without fonts still renders text.
# The quick loop runs no browser test, so it installs nothing.
if [ "$quick" = 0 ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing chromium and chromium-driver for the browser tests" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core; } >&2 \
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
"$VENV/bin/python" -m pytest "${args[@]}"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
