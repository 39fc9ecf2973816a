"""Adopting the artifact at --out on a store-backed resume: nothing reaches the store before it verifies."""

from __future__ import annotations


import os
from pathlib import Path

import pytest

from emberbench.errors import ResultError
from emberbench.records.replay import InProcessReplayer
from emberbench.evaluation.runner import InProcessExecutor, run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.heap import collect_dropped
from tests.run_support import small_manifest


class _OneAtATime(InProcessExecutor):
    """The in-process executor, replaying an artifact's records one at a time as they are read.

    (Its list-form authenticator replays them in batches of 256, so a few
    episodes would all fail together before any reached adoption.)
    """

    authenticate_records = InProcessReplayer()


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every folder (``None``) and regular file (its bytes) under ``root``, by relative path.

    Stores dropped by earlier in-process calls are collected first: each holds a writer lease file until then.
    """
    collect_dropped()
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), root)] = None
        for name in files:
            path = Path(folder, name)
            found[os.path.relpath(path, root)] = path.read_bytes()
    return found


def _loosen_last_metric(path: Path) -> None:
    """Put a space after the last episode's ``"steps":`` key: same values, but no longer canonical.

    Every episode replays and reaches adoption; only the end of the walk finds
    the file is not in canonical form.
    """
    data = path.read_bytes()
    key = b'"steps":'
    at = data.rindex(key, 0, data.rindex(b'"record":')) + len(key)
    path.write_bytes(data[:at] + b" " + data[at:])


def test_refused_artifact_leaves_the_store_exactly_as_it_was(tmp_path, suite) -> None:  # noqa: ANN001
    """A tampered artifact at --out is refused on resume, and the store's objects, refs and journals are unchanged.

    The store has lost every object (adoption puts missing records back from the
    artifact, a start puts the manifest), and the file fails only after every episode has
    replayed, so a write made while it is still being verified would show in
    the store's tree.
    """
    manifest = small_manifest(suite)
    store_dir, out = tmp_path / "s", tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=open_store(store_dir))
    for stored in (store_dir / "objects").glob("*/*"):
        stored.unlink()  # records, manifest, artifact, run info: any put would show
    _loosen_last_metric(out)
    tampered, before = out.read_bytes(), _tree(store_dir)
    assert any(path.startswith("journals/") for path in before)
    assert not any(path.count("/") == 2 and path.startswith("objects/") for path in before)
    assert any(path.startswith("refs/") for path in before)

    with pytest.raises(ResultError, match="not in canonical form"):
        store = open_store(store_dir)
        run_evaluation(manifest, suite, "greedy", "m", out, store=store,
                       executor=_OneAtATime(suite, "greedy", store=store))

    after = _tree(store_dir)
    assert sorted(set(after) ^ set(before)) == []
    assert [path for path in before if after[path] != before[path]] == []
    assert out.read_bytes() == tampered


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_refused_artifact_leaves_no_journal_in_a_fresh_store(tmp_path, request, suite, backend) -> None:  # noqa: ANN001
    """A tampered artifact at --out refused on resume into a new store leaves no empty run journal behind.

    (The run opens its journal first, as its lock; a journal that stayed empty
    is taken away again when the start fails, so ``store ls`` shows no run.)
    """
    manifest = small_manifest(suite)
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out)
    _loosen_last_metric(out)
    locator = tmp_path / "s" if backend == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    with pytest.raises(ResultError, match="not in canonical form"):
        run_evaluation(manifest, suite, "greedy", "m", out, store=store,
                       executor=_OneAtATime(suite, "greedy", store=store))
    assert store.journal_names() == []
    if backend == "local":
        assert list((tmp_path / "s" / "journals").iterdir()) == []
    store.close()
