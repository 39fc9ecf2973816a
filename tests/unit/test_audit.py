"""store audit: one verdict per run (ok, partial, damaged), past any damage, and its exit status."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from emberbench.runs.audit import DAMAGED, OK, PARTIAL, audit_store
from emberbench.io.canonical import canonical_bytes
from emberbench.cli.main import app
from emberbench.cli.store_cmd import PARTIAL_EXIT
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.policies.baselines import GreedyPolicy
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import journal_name
from emberbench.evaluation.store_runner import open_store

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]


def _manifest(suite, seeds) -> EvaluationManifest:  # noqa: ANN001
    entries = []
    for seed in seeds:
        for sid in SMALL:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


class StopsAfter:
    """A greedy policy factory whose third episode raises (the run stops there, unfinished)."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self):  # noqa: ANN204
        self.made += 1
        if self.made == 3:
            def boom(obs):  # noqa: ANN001, ANN202
                raise RuntimeError("stop here")
            return boom
        return GreedyPolicy()


@pytest.fixture(scope="module")
def runs(tmp_path_factory, suite):  # noqa: ANN001
    """A pristine store holding one complete run ('good'), one more ('other') and one unfinished ('cut')."""
    folder = tmp_path_factory.mktemp("audit")
    store = open_store(folder / "store")
    manifest = _manifest(suite, [0, 1])
    run_evaluation(manifest, suite, "greedy", "good", folder / "good.json", store=store)
    run_evaluation(manifest, suite, "stay", "other", folder / "other.json", store=store)
    with pytest.raises(RuntimeError, match="stop here"):
        run_evaluation(manifest, suite, StopsAfter(), "cut", folder / "cut.json", store=store)
    names = {m: journal_name(manifest.hash, m) for m in ("good", "other", "cut")}
    return folder, names


@pytest.fixture
def store_copy(runs, tmp_path):  # noqa: ANN001
    """A copy of the pristine store to damage, and the run names."""
    folder, names = runs
    shutil.copytree(folder / "store", tmp_path / "store")
    return open_store(tmp_path / "store"), names


def _by_run(verdicts) -> dict:  # noqa: ANN001
    return {v.run: v for v in verdicts}


def test_pristine_store_gives_ok_and_partial(store_copy, suite) -> None:  # noqa: ANN001
    """Complete runs are ok with their counts; the run that stopped is partial (its records all stored)."""
    store, names = store_copy
    verdicts = _by_run(audit_store(store, suite))
    assert [v.run for v in audit_store(store, suite)] == sorted(names.values())
    assert verdicts[names["good"]].state == OK and "4/4 episodes authenticated" in verdicts[names["good"]].message
    assert verdicts[names["other"]].ok
    cut = verdicts[names["cut"]]
    assert cut.state == PARTIAL and cut.message == "unfinished: 2 episodes journaled, no stored result"


def _damage(store, names, how: str) -> str:  # noqa: ANN001
    """Damage run 'good' (or 'cut') one way; return the run to look at."""
    good, cut = names["good"], names["cut"]
    ref = f"results/{good}"
    key = store.refs.get(ref)
    if how == "corrupt object":
        path = store.layout.object_path(key)
        data = bytearray(path.read_bytes())
        data[-5] ^= 0x01
        path.write_bytes(bytes(data))
    elif how == "tampered result":
        artifact = json.loads(store.get(key))
        artifact["episodes"][1]["metrics"]["counts"]["steps"] += 1
        store.refs.set(ref, store.put(canonical_bytes(artifact) + b"\n"))
    elif how == "result of another run":
        store.refs.set(ref, store.refs.get(f"results/{names['other']}"))
    elif how == "ref deleted":
        store.refs.delete(ref)
    elif how == "record of an unfinished run missing":
        entry = next(e for e in store.read_journal(cut).entries if "index" in e.data)
        store.layout.object_path(entry.data["digest"]).unlink()
        return cut
    return good


@pytest.mark.parametrize(("how", "message"), [
    ("corrupt object", ""),
    ("tampered result", "stored metrics differ from the metrics recomputed"),
    ("result of another run", "finished with result"),
    ("ref deleted", "it is missing, but journal"),
    ("record of an unfinished run missing", "objects it references are lost"),
])
def test_each_damage_is_reported_for_its_run_and_the_audit_goes_on(store_copy, suite, how, message) -> None:  # noqa: ANN001
    """A damaged run gets a damaged verdict naming the cause; every other run keeps its own verdict."""
    store, names = store_copy
    damaged = _damage(store, names, how)
    verdicts = _by_run(audit_store(store, suite))
    assert set(verdicts) == set(names.values())
    assert verdicts[damaged].state == DAMAGED and message in verdicts[damaged].message
    # Runs 'cut' and 'good' played the same first episodes: the record deleted from 'cut' is 'good''s as well.
    sharing = {names["good"]} if how == "record of an unfinished run missing" else set()
    for run in set(names.values()) - {damaged} - sharing:
        assert verdicts[run].state in (OK, PARTIAL), verdicts[run]
    for run in sharing:
        assert verdicts[run].state == DAMAGED and "objects it references are lost" in verdicts[run].message


def test_cli_exit_status_and_one_line_per_run(store_copy, suite, tmp_path) -> None:  # noqa: ANN001
    """Exit 0 when every run is ok, 3 with a partial one (0 with --allow-partial), 1 with a damaged one."""
    store, names = store_copy
    runner = CliRunner()

    def audit(*extra: str):  # noqa: ANN202
        return runner.invoke(app, ["store", "audit", "--store", str(store.root), *extra])

    partial = audit()
    assert partial.exit_code == PARTIAL_EXIT, partial.output
    lines = partial.output.splitlines()
    assert len(lines) == 4 and lines[-1] == "3 runs audited: 2 ok, 1 partial, 0 damaged"
    assert all(len(line) <= 120 for line in lines)
    assert audit("--allow-partial").exit_code == 0
    _damage(store, names, "tampered result")
    damaged = audit("--allow-partial")
    assert damaged.exit_code == 1 and "1 damaged" in damaged.output


def test_journal_digests_ending_in_a_zero_byte_are_kept_whole() -> None:
    """A record digest whose last byte is 00 is compared whole (a numpy bytes column would drop it)."""
    from types import SimpleNamespace

    from emberbench.runs.audit import _Journal

    digests = ["ab" * 31 + "00", "00" * 32, "cd" * 32]
    state = SimpleNamespace(entries=[SimpleNamespace(data={"index": i, "digest": d})
                                     for i, d in reversed(list(enumerate(digests)))], finish=None)
    journal = _Journal.read(SimpleNamespace(read_journal=lambda run: state), "run-x")
    assert journal.indices.tolist() == [0, 1, 2]
    assert [journal.digest(row) for row in range(3)] == digests
