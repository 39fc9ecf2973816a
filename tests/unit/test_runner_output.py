"""The run path applies the output policy to the artifact before it reads anything to resume."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from emberbench.errors import OutputPathError
from emberbench.results.manifest import build_manifest
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store


def _null_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))


def _zero_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # endless zeros: reading it never ends


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError("the run read its --out without end")


@pytest.mark.parametrize("with_store", [False, True], ids=["without store", "with store"])
@pytest.mark.parametrize("make", [os.mkfifo, _null_device, _zero_device, lambda p: p.symlink_to(p.parent / "x")],
                         ids=["fifo", "null device", "zero device", "link"])
def test_run_refuses_a_special_out_before_reading_it(tmp_path: Path, suite, make, with_store: bool) -> None:  # noqa: ANN001
    """Issue 12 (defect 2): `run --out` on a character device used to be read as an artifact to resume until
    the OOM killer ended it; every sink now refuses a FIFO, device or link as --out at once, and leaves it."""
    out = tmp_path / "out.json"
    make(out)
    before = os.lstat(out)
    manifest = build_manifest(suite, [0])
    store = open_store(tmp_path / "store") if with_store else None
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        with pytest.raises(OutputPathError, match="out.json is a"):
            run_evaluation(manifest, suite, "greedy", "g", out, store=store)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
