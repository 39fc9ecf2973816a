"""Shared by the documentation-site tests: the docs extra must be there, or the test skips (fails in CI)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def require_docs_tools() -> None:
    """Skip when the docs extra is not installed; in CI (``CI=true``) fail instead, so CI cannot pass without it."""
    missing = [name for name in TOOLS if not _importable(name)]
    if missing:
        reason = f"the documentation tools are not installed ({', '.join(missing)}); pip install -e '.[docs]'"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the docs build is required in CI but cannot run: {reason}")
        pytest.skip(reason)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``, in a subprocess, output captured."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, env=env, cwd=config.parent,
                          timeout=600)


def warnings_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The WARNING/ERROR lines of a build's output."""
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("WARNING", "ERROR"))]
