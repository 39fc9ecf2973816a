"""The store is generic: importing it pulls in nothing from emberbench (nor ray)."""

from __future__ import annotations

import subprocess
import sys


def test_store_imports_no_emberbench() -> None:
    """A fresh interpreter that imports store (and runs fsck/gc) never loads emberbench or ray."""
    code = (
        "import sys, store, store.fsck, store.gc\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('emberbench', 'ray'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_store_cmd_imports_store_lazily() -> None:
    """Importing the CLI module does not import the store package (commands import it when run)."""
    code = "import sys, emberbench.cli.store_cmd\nprint('store' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
