"""Shared helpers of the run-path tests: small manifests, tampering, the CLI."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from emberbench.results.manifest import EvaluationManifest, ManifestEntry

SMALL_IDS = ("v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation")


def small_manifest(suite, seeds=(3, 11), ids=SMALL_IDS) -> EvaluationManifest:  # noqa: ANN001
    """The given scenarios (small and fast) under ``seeds``: len(ids) * len(seeds) episodes."""
    entries = []
    for sid in ids:
        for seed in seeds:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def flip_byte(path: Path, offset: int) -> None:
    """Replace ``path`` by a copy with one bit changed (a new file: hard links to the old one keep it)."""
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= 0x01
    mode = path.stat().st_mode
    tmp = path.with_name(path.name + ".flip")
    tmp.write_bytes(bytes(data))
    os.chmod(tmp, mode)
    os.replace(tmp, path)


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


# -- kill points and tampering (the resume property tests, in process and on Ray) ----------

TAMPERS = ("none", "artifact-byte", "record-byte", "record-delete", "journal-torn")


def freeze(live: Path, frozen: Path) -> None:
    """Copy a run folder (its artifact and store) as a SIGKILL at this moment would leave it.

    Every write of a run is atomic or an fsynced append, so the files on disk
    at any instant are exactly what a killed run leaves behind; the copy has
    no lock held, like the files of a dead process.
    """
    import shutil

    def copy(src: str, dst: str) -> None:
        # Objects and artifacts are only ever replaced, never changed in place: a hard link is a copy.
        if "/objects/" in src or src.endswith(".json"):
            os.link(src, dst)
        else:
            shutil.copyfile(src, dst)

    shutil.copytree(live, frozen, symlinks=True, copy_function=copy)


def journaled_keys(store) -> list[str]:  # noqa: ANN001
    """The record keys of a store's single run journal, in journal order (empty if there is none)."""
    names = store.journal_names()
    if not names:
        return []
    return [e.data["digest"] for e in store.read_journal(names[0]).entries if "digest" in e.data]


def tamper(folder: Path, store, kind: str, pick: int, offset: int) -> str:  # noqa: ANN001
    """Damage a frozen run folder in one way; returns what was actually done (``none`` if nothing applied)."""
    out = folder / "r.json"
    keys = journaled_keys(store)
    if kind == "artifact-byte" and out.exists():
        flip_byte(out, offset)
        return kind
    if kind in ("record-byte", "record-delete") and keys:
        path = store.layout.object_path(keys[pick % len(keys)])
        if kind == "record-byte":
            flip_byte(path, offset)
        else:
            path.unlink()
        return kind
    if kind == "journal-torn" and store.journal_names():
        path = store.layout.journal_path(store.journal_names()[0])
        size = path.stat().st_size
        if size > 40:
            with open(path, "r+b") as handle:  # cut into the last entry: a torn append
                handle.truncate(size - 1 - offset % 20)
            return kind
    return "none"
