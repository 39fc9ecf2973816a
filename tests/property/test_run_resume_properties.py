"""Property: a store-backed run killed anywhere, then damaged in one place, never resumes into a wrong artifact.

At a random kill point (after k episodes, with random checkpoint spacing) the
run's folder is frozen as a SIGKILL would leave it; one byte of the artifact
or of one stored record is flipped, or one record is deleted, or the
journal's last append is torn. Resuming must then either be refused without
changing the artifact or the journal, or end byte-identical to an
uninterrupted run (a lost record played again to its journaled digest).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emberbench.errors import EmberError
from emberbench.policies import GreedyPolicy
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.hypothesis_profiles import examples
from tests.run_support import TAMPERS, freeze, journaled_keys, small_manifest, tamper

EPISODES = 6
_FROZEN: dict[tuple[int, int], Path] = {}


@pytest.fixture(scope="module")
def world(tmp_path_factory, suite):  # noqa: ANN001
    """The manifest, the uninterrupted artifact's bytes, and a folder for frozen runs.

    fsync is a no-op here: durability is not what this test checks (a frozen
    copy stands for the crash), and it would make each example ten times slower.
    Every journal entry is written at once, so that the journal runs ahead of
    the checkpointed artifact at kill points (a run's batches do that only
    after a time flush).
    """
    manifest = small_manifest(suite, seeds=(3, 11, 12))
    assert len(manifest.episodes) == EPISODES
    base = tmp_path_factory.mktemp("resume-props")
    run_evaluation(manifest, suite, "greedy", "m", base / "reference.json")
    _FROZEN.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("os.fsync", lambda fd: None)
        patch.setattr("emberbench.evaluation.store_runner.JOURNAL_BATCH", 1)
        yield manifest, (base / "reference.json").read_bytes(), base


def frozen_run(world, suite, kill: int, every: int) -> Path:  # noqa: ANN001
    """The folder of a run killed after ``kill`` episodes (``EPISODES``: after it finished), cached."""
    manifest, _, base = world
    if (kill, every) not in _FROZEN:
        live, frozen = base / f"live-{kill}-{every}", base / f"frozen-{kill}-{every}"
        live.mkdir()
        calls = [0]

        def factory():  # noqa: ANN202 - freezes the run as it is before the episode number `kill` starts
            if calls[0] == kill:
                freeze(live, frozen)
            calls[0] += 1
            return GreedyPolicy()

        run_evaluation(manifest, suite, factory, "m", live / "r.json", store=open_store(live / "store"),
                       checkpoint_every=every, policy_spec="greedy")
        if kill == EPISODES:
            freeze(live, frozen)
        _FROZEN[kill, every] = frozen
    return _FROZEN[kill, every]


@settings(max_examples=examples(16))
@example(kill=3, every=2, kind="artifact-byte", pick=0, offset=77)
@example(kill=4, every=1, kind="record-byte", pick=1, offset=5)
@example(kill=2, every=0, kind="record-delete", pick=0, offset=0)
@example(kill=5, every=0, kind="journal-torn", pick=0, offset=3)
@example(kill=EPISODES, every=0, kind="record-delete", pick=2, offset=0)
@given(kill=st.integers(0, EPISODES), every=st.sampled_from([0, 1, 2]), kind=st.sampled_from(TAMPERS),
       pick=st.integers(0, 50), offset=st.integers(0, 10**6))
def test_killed_and_damaged_runs_resume_safely(world, suite, tmp_path_factory, kill, every, kind, pick, offset):  # noqa: ANN001
    """Refused without a change, or byte-identical to the uninterrupted run with every record intact."""
    manifest, reference, _ = world
    folder = tmp_path_factory.mktemp("case") / "run"
    freeze(frozen_run(world, suite, kill, every), folder)
    store = open_store(folder / "store")
    done = tamper(folder, store, kind, pick, offset)
    out = folder / "r.json"
    before = out.read_bytes() if out.exists() else None
    journals = {p.name: p.read_bytes() for p in (folder / "store" / "journals").iterdir()}
    try:
        run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    except EmberError:
        assert done == "artifact-byte", f"refused after {done}"
        assert (out.read_bytes() if out.exists() else None) == before
        assert {p.name: p.read_bytes() for p in (folder / "store" / "journals").iterdir()} == journals
        return
    assert done != "artifact-byte", "a damaged artifact was accepted"
    assert out.read_bytes() == reference
    assert all(store.get(k, verify_data=True) for k in journaled_keys(store))
