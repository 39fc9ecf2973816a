"""A real crash: `emberbench run` killed with SIGKILL at several points, then resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emberbench.results.manifest import EvaluationManifest, ManifestEntry, write_manifest
from emberbench.sim.rng import SplitMix64
from emberbench.evaluation.runner import run_evaluation

pytestmark = pytest.mark.slow

IDS = ["v1-pub-01-single-exit-sparse", "v1-pub-04-dead-end-corridor", "v1-pub-10-route-invalidation",
       "v1-pub-12-smouldering-two-exits"]


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    entries = []
    for sid in IDS:
        for seed in range(5):
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from emberbench.cli.main import main; main()", *args]


def _state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _crash_loop(cmd: list[str], progress: Path, rng: SplitMix64, env: dict[str, str]) -> int:
    """Start cmd and SIGKILL it a random moment after it makes progress; repeat until it finishes.

    Progress is a change of ``progress`` (the artifact, rewritten after every
    episode without a store; the run journal with one).
    """
    kills = 0
    for attempt in range(60):
        before = _state(progress)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 30
        while _state(progress) == before and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        # The first two kills come as soon as progress shows, so that the run is
        # interrupted at least twice however fast this machine is.
        time.sleep(0 if attempt < 2 else rng.below(40) / 1000)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
        if proc.returncode == 0:
            return kills
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode() if proc.stderr else ""
        proc.stderr.close()
    raise AssertionError("the run never completed")


@pytest.mark.parametrize("mode", ["no-store", "store"])
def test_sigkill_at_several_points_then_resume_is_byte_identical(tmp_path, suite, manifest, mode) -> None:  # noqa: ANN001
    """Killed runs resume to the byte-identical artifact; only stray .tmp files may remain."""
    reference = tmp_path / "reference.json"
    run_evaluation(manifest, suite, "greedy", "crashy", reference)
    mpath = tmp_path / "m.json"
    write_manifest(manifest, mpath)
    out = tmp_path / "out" / "result.json"
    out.parent.mkdir()
    args = ["run", "--manifest", str(mpath), "--policy", "greedy", "--model-id", "crashy", "--out", str(out),
            "--executor", "local"]
    args += ["--no-store"] if mode == "no-store" else ["--store", str(tmp_path / "store")]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    if mode == "store":
        from emberbench.store import journal_name

        progress = tmp_path / "store" / "journals" / f"{journal_name(manifest.hash, 'crashy')}.journal"
    else:
        progress = out
    kills = _crash_loop(_cli(*args), progress, SplitMix64(11 if mode == "store" else 7), env)
    assert kills >= 2, "the test must interrupt the run at least twice"
    assert out.read_bytes() == reference.read_bytes()
    assert (out.parent / "result.json.run").is_file()  # the run sidecar, written once before the artifact
    leftovers = [p.name for p in out.parent.iterdir() if p.name not in ("result.json", "result.json.run")]
    assert all(name.startswith(".result.json.") and name.endswith(".tmp") for name in leftovers), leftovers
    if mode == "store":
        from emberbench.store import Store, fsck

        report = fsck(Store.open(tmp_path / "store"), verify_data=True, connectivity=True, quarantine=False)
        assert report.ok
