"""What the coordinator spends per episode: journal writes in batches, no store lookup per record from workers.

docs/cluster.md, "The coordinator's ceiling": one coordinator must take in
thousands of episodes per second, so nothing it does may cost a disk flush or
a store request per episode.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

import emberbench.evaluation.store_runner as store_runner
from emberbench.evaluation.runner import EpisodeOutcome, play_to_outcome, run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.policies.spec import resolve_policy
from emberbench.results.manifest import ManifestEntry
from emberbench.store import Store
from emberbench.store.local_journal import FileJournalWriter
from tests.run_support import small_manifest


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    return small_manifest(suite, seeds=tuple(range(16)))  # 32 short episodes


def test_a_local_store_run_writes_its_journal_in_batches(tmp_path, suite, manifest, monkeypatch) -> None:  # noqa: ANN001
    """Episode entries of a local-store run go to the journal in batches (one write and fsync each), not one
    write and fsync per episode; the artifact is the one written without a store."""
    monkeypatch.setattr(store_runner, "JOURNAL_SECONDS", 1e9)  # only the batch size and the end flush
    writes: list[int] = []
    real = FileJournalWriter._persist

    def counting(self, blob: bytes) -> None:  # noqa: ANN001
        writes.append(len(blob))
        real(self, blob)

    monkeypatch.setattr(FileJournalWriter, "_persist", counting)
    reference = tmp_path / "ref.json"
    run_evaluation(manifest, suite, "greedy", "m", reference)
    writes.clear()
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=open_store(tmp_path / "s"))
    assert out.read_bytes() == reference.read_bytes()
    episodes = len(manifest.episodes)
    assert episodes == 32
    # The header, the first episode (at once), one batch of the others (31 < JOURNAL_BATCH), the finish marker.
    assert len(writes) <= 4, writes


class _PutElsewhere:
    """An executor whose records were put into the store by 'another process', which reports their sizes."""

    def __init__(self, suite, store: Store) -> None:  # noqa: ANN001
        self.suite, self.store = suite, store
        self.factory = resolve_policy("greedy")

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]:
        for entry in tasks:
            outcome, record = play_to_outcome(self.suite, entry, self.factory)
            self.store.put(record, key=outcome.record_digest)
            yield EpisodeOutcome(outcome.index, outcome.record_digest, None, outcome.metrics_bytes,
                                 record_size=len(record))


def test_records_put_elsewhere_are_not_looked_up_per_episode(tmp_path, suite, manifest, monkeypatch) -> None:  # noqa: ANN001
    """An outcome that carries its record's size (a Ray worker put the record) costs the coordinator no store
    lookup of its own (`size` and `has` were a request each on S3); the artifact is unchanged. (The journal
    still checks that each key it references is stored: one `has` per record, answered without a request
    for records noted as stored, see the Ray executor.)"""
    reference = tmp_path / "ref.json"
    run_evaluation(manifest, suite, "greedy", "m", reference)
    store = open_store(tmp_path / "s")
    executor = _PutElsewhere(suite, open_store(tmp_path / "s"))
    asked: list[tuple[str, str]] = []
    for name in ("has", "size"):
        real = getattr(Store, name)

        def counting(self, key, *args, _real=real, _name=name, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            if self is store:
                asked.append((_name, key))
            return _real(self, key, *args, **kwargs)

        monkeypatch.setattr(Store, name, counting)
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, executor=executor, store=store)
    assert out.read_bytes() == reference.read_bytes()
    records = {e.data["digest"] for e in store.read_journal(store.journal_names()[0]).entries if "digest" in e.data}
    assert len(records) == len(manifest.episodes)
    about_records = [(name, key) for name, key in asked if key in records]
    assert not [key for name, key in about_records if name == "size"]
    # The journal's own check that each key it references is stored (a request on S3 unless noted as stored).
    assert len(about_records) == len(set(about_records)) == len(records)


def test_a_journal_batch_checks_its_keys_under_one_guard(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A batch of journal entries checks that the records it references are stored under one writer guard
    (on a local store a lock file opened and locked), not one per entry; a missing key is still refused."""
    from emberbench.store import ObjectNotFoundError

    store = open_store(tmp_path / "s")
    keys = [store.put(f"record {i}".encode()) for i in range(10)]
    guards: list[int] = []
    real = type(store.backend).writer_guard

    def counting(backend):  # noqa: ANN001, ANN202
        guards.append(1)
        return real(backend)

    with store.open_journal("run-batch") as journal:
        monkeypatch.setattr(type(store.backend), "writer_guard", counting)
        journal.append_many([({"index": i}, [key]) for i, key in enumerate(keys)])
        assert len(guards) == 1
        with pytest.raises(ObjectNotFoundError):
            journal.append_many([({"index": 10}, [keys[0]]), ({"index": 11}, ["0" * 64])])
        monkeypatch.undo()
    assert [e.data["index"] for e in store.read_journal("run-batch").entries] == list(range(10))
