# Sourced by scripts/*.sh: make sure ./.venv exists and holds EMBERBench
# (editable, with the test extra) at the current pyproject.toml.
VENV="${EMBERBENCH_VENV:-$PWD/.venv}"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: Python 3.11 or newer is needed (found $("$PY" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
    echo "creating virtual environment in $VENV" >&2
    "$PY" -m venv "$VENV"
fi
stamp="$VENV/.emberbench-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "installing emberbench and its dependencies into $VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    "$VENV/bin/python" -m pip install --quiet -e ".[test]" >&2
    touch "$stamp"
fi
export PATH="$VENV/bin:$PATH"
