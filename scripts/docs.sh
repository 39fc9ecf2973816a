#!/usr/bin/env bash
# Build the documentation site (mkdocs.yml: MkDocs, Material theme, the API
# reference from docstrings, llms.txt) into ./site, installing the docs extra
# into ./.venv first if needed. The build is strict: a broken link or anchor,
# a page missing from the navigation or a docstring problem fails it.
# Usage: scripts/docs.sh [build|serve] [mkdocs options...]
#   scripts/docs.sh                      build into ./site
#   scripts/docs.sh build -d /tmp/site   build elsewhere
#   scripts/docs.sh serve                preview on http://127.0.0.1:8000 while editing
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
stamp="$VENV/.emberbench-docs-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "installing the documentation tools (emberbench[docs]) into $VENV" >&2
    "$VENV/bin/python" -m pip install --quiet -e ".[test,docs]" >&2
    touch "$stamp"
fi
# Material prints a banner about MkDocs 2.0 on every run; the extra pins MkDocs 1.x.
export NO_MKDOCS_2_WARNING=1
command=build
case "${1:-}" in
    build|serve) command=$1; shift ;;
esac
exec "$VENV/bin/python" -m mkdocs "$command" --strict "$@"
