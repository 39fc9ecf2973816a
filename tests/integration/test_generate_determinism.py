"""Generated suites are byte-identical across processes and hash seeds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _generate(out: Path, hash_seed: str, recipe: str, count: int) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "emberbench.cli.main", "suite", "generate", "--recipe", recipe,
                    "--count", str(count), "--seed", "20251130", "--out", str(out)],
                   check=True, capture_output=True, env=env)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize(("recipe", "count"), [("dev", 20), ("standard", 8)])
def test_generation_is_byte_identical_across_processes_and_hash_seeds(tmp_path: Path, recipe: str,
                                                                       count: int) -> None:
    """Two processes with different PYTHONHASHSEED write the same files with the same bytes."""
    a = _generate(tmp_path / "a", "0", recipe, count)
    b = _generate(tmp_path / "b", "3141592653", recipe, count)
    assert len(a) == count + 2 and sorted(a) == sorted(b)
    for name, data in a.items():
        assert b[name] == data, name
