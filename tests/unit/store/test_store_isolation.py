"""The store is generic: importing it pulls in nothing else from emberbench (nor ray)."""

from __future__ import annotations

import subprocess
import sys


def test_store_imports_no_emberbench() -> None:
    """A fresh interpreter that imports the store (and runs fsck/gc) loads only the package root besides it."""
    code = (
        "import sys, emberbench.store, emberbench.store.fsck, emberbench.store.gc\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'ray' or (m.startswith('emberbench.')"
        " and not m.startswith('emberbench.store')))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_store_cmd_imports_store_lazily() -> None:
    """Importing the CLI module does not import the store package (commands import it when run)."""
    code = "import sys, emberbench.cli.store_cmd\nprint('emberbench.store' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
