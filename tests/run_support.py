"""Shared helpers of the run-path tests: small manifests, tampering, the CLI."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from emberbench.manifest import EvaluationManifest, ManifestEntry

SMALL_IDS = ("v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation")


def small_manifest(suite, seeds=(3, 11), ids=SMALL_IDS) -> EvaluationManifest:  # noqa: ANN001
    """The given scenarios (small and fast) under ``seeds``: len(ids) * len(seeds) episodes."""
    entries = []
    for sid in ids:
        for seed in seeds:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def flip_byte(path: Path, offset: int) -> None:
    """Change one byte of ``path`` in place (read-only store objects are made writable first)."""
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= 0x01
    path.write_bytes(bytes(data))


def tamper_metric(path: Path) -> None:
    """Change the first stored ``"steps":`` count of an artifact (verify then rejects it)."""
    data = path.read_bytes()
    at = data.index(b'"steps":', data.index(b'"metrics":')) + len(b'"steps":')
    digit = data[at:at + 1]
    path.write_bytes(data[:at] + (b"8" if digit == b"9" else b"9") + data[at + 1:])


def object_file(store, key: str) -> Path:  # noqa: ANN001
    """The file that holds ``key`` in a local store."""
    return store.layout.object_path(key)


_RUNNER = CliRunner()


def invoke(*args: str):  # noqa: ANN201
    """Run the CLI in process and return the click result (stdout and stderr mixed)."""
    from emberbench.cli.main import app

    return _RUNNER.invoke(app, [str(a) for a in args])


def error_line(result) -> str:  # noqa: ANN001
    """The single ``error:`` line of a failed command (asserting it is exactly one line)."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]
