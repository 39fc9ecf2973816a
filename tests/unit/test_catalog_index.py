"""The catalog index: `runs ls` from a few reads, checked against the ref log, never trusted blindly; tags and filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emberbench.errors import RunInfoError, StoreUsageError
from emberbench.evaluation.run_info import RunInfo, normalize_tags, run_info_ref, write_run_info
from emberbench.evaluation.store_runner import open_store
from emberbench.runs import index as index_module
from emberbench.runs.catalog import Query, select
from emberbench.runs.index import INDEX_REF, check_index, parse_index, query_index, refresh_index, reindex
from emberbench.store import journal_name
from tests.run_support import invoke

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def make_info(i: int, **changes) -> RunInfo:  # noqa: ANN003
    """A synthetic run-info: model m{i%3}, policy greedy/random, user u{i%2}, started on day 1+i%28 of 2026-01."""
    model = f"m{i}-" + "x" * (i % 3)
    info = RunInfo(run=journal_name("ab" * 32, model), model_id=model, policy=("greedy", "random")[i % 2],
                   manifest_hash="ab" * 32, suite_id=("emberbench-v1-public", "other")[i % 5 == 0],
                   suite_version="1.0.0", suite_hash="cd" * 32, emberbench_version="0.2.0", python_version="3.11.7",
                   ray_version=None, host="h", user=f"u{i % 2}", started=f"2026-01-{1 + i % 28:02d}T12:00:00Z",
                   ended=None, episodes_done=i % 5, episodes_scheduled=4 + i % 5,
                   state=("running", "complete")[i % 2], tags=normalize_tags(["t-all", f"t{i % 4}"]))
    return info.replace(**changes)


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):  # noqa: ANN001
    """An empty store (an EMBERBench run store) on each backend."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    st = open_store(locator)
    yield st
    st.close()


def _fill(st, n: int) -> list[RunInfo]:  # noqa: ANN001
    infos = [make_info(i) for i in range(n)]
    for info in infos:
        write_run_info(st, info)
    return infos


def test_no_index_lists_by_reading_every_run_then_saves_one(store) -> None:  # noqa: ANN001
    """Without an index `runs ls` lists every run and saves an index (read-only: says it saved none)."""
    infos = _fill(store, 5)
    assert query_index(store).reason == "there is no catalog index yet"
    read_only = invoke("runs", "ls", "--store", store.locator, "--read-only")
    assert read_only.exit_code == 0, read_only.output
    assert ("note: there is no catalog index yet: listed by reading every run; none was saved (read-only)"
            in read_only.output)
    assert query_index(store).reason == "there is no catalog index yet"
    first = invoke("runs", "ls", "--store", store.locator)
    assert first.exit_code == 0 and "note:" not in first.output, first.output
    assert sum(info.model_id[:8] in first.output for info in infos) == 5
    answer = query_index(store)
    assert answer.rows is not None and answer.reason is None and len(answer.rows) == 5
    second = invoke("runs", "ls", "--store", store.locator)
    assert second.exit_code == 0 and "note:" not in second.output
    assert second.output == first.output


def test_changes_after_the_index_are_applied_from_the_ref_log(store) -> None:  # noqa: ANN001
    """A run-info written after the index (a new run, a progress update) is seen through the log's tail."""
    _fill(store, 3)
    reindex(store)
    new = make_info(7)
    write_run_info(store, new)
    moved = make_info(0, episodes_done=3, state="complete")
    write_run_info(store, moved)
    answer = query_index(store)
    assert answer.applied == 3 and answer.reason is None  # the index's own ref change, then the two
    by_run = {row.run: row.info for row in answer.rows}
    assert by_run[new.run] == new and by_run[moved.run].episodes_done == 3
    assert check_index(store) == []
    last = store.refs.log.last_seq()
    key, index, rebuilt = refresh_index(store)
    assert not rebuilt and index.position == last and store.refs.get(INDEX_REF) == key
    assert query_index(store).applied == 1  # only the index's own ref change is after its position


def test_a_damaged_or_replaced_index_is_not_used(store) -> None:  # noqa: ANN001
    """An index object that is not an index, of another version, or built on another log: not used, and why."""
    _fill(store, 2)
    reindex(store)
    junk = store.put(b'{"catalog_index_version":"9.9"}')
    store.refs.set(INDEX_REF, junk)
    assert "catalog_index_version '9.9' is not supported" in query_index(store).reason
    listing = invoke("runs", "ls", "--store", store.locator)
    assert listing.exit_code == 0 and "the catalog index is damaged" in listing.output
    reindex(store)
    # The log entry the index was built at, replaced: the index's position means nothing any more.
    from emberbench.store.reflog import encode_entry

    seq = parse_index(store.get(store.refs.get(INDEX_REF))).position
    entry = store.refs.log.read(seq)
    _write_raw(store, f"reflog/{seq:012d}", encode_entry(entry.__class__(
        seq, entry.ref, entry.old, entry.new, entry.time, "mallory@x", entry.run, entry.prev, None)))
    assert "is not the one the index was built at" in query_index(store).reason


def test_an_index_far_behind_is_not_used(store, monkeypatch) -> None:  # noqa: ANN001
    """More changes after the index than the tail limit: `runs ls` lists by reading every run, and says so."""
    monkeypatch.setattr(index_module, "TAIL_LIMIT", 3)
    _fill(store, 2)
    reindex(store)
    _fill(store, 6)
    assert "more than 3 changes behind" in query_index(store).reason


def test_a_run_info_changed_around_the_store_is_reported(store) -> None:  # noqa: ANN001
    """A runs/ ref rewritten without the store (no log entry): fsck and audit report the ref and the index."""
    infos = _fill(store, 3)
    reindex(store)
    forged = store.put(make_info(0, user="mallory").to_bytes())
    _write_raw(store, f"refs/{run_info_ref(infos[0].run)}", (forged + "\n").encode())
    problems = check_index(store)
    assert len(problems) == 1 and "changed without a ref log entry" in problems[0], problems
    fsck = invoke("store", "fsck", "--store", store.locator)
    assert fsck.exit_code == 1
    assert "damaged  catalog/index: run" in fsck.output and "changed without a log entry" in fsck.output


def _write_raw(st, rel: str, data: bytes) -> None:  # noqa: ANN001
    import os

    if st.locator.startswith("s3://"):
        st.backend.client.put_object(Bucket=st.backend.bucket, Key=st.backend.prefix + rel, Body=data)
        return
    path = st.root / rel
    if path.exists():
        os.chmod(path, 0o644)
    path.write_bytes(data)


def test_filters_sorting_and_limit() -> None:
    """Every filter narrows; sort and reverse order; limit cuts; damaged rows always stay."""
    from emberbench.runs.catalog import CatalogRow

    rows = [CatalogRow(make_info(i).run, make_info(i), None) for i in range(20)]
    rows.append(CatalogRow("run-" + "0" * 64, None, "no run-info"))
    pick = lambda **q: [r.info.model_id for r in select(rows, Query(**q)) if r.info is not None]  # noqa: E731
    assert len(pick()) == 20
    assert pick(model="m4-x") == ["m4-x"]
    assert len(pick(suite="other")) == 4 and len(pick(policy="random")) == 10 and len(pick(user="u0")) == 10
    assert len(pick(state="complete")) == 10 and len(pick(tags=("t1",))) == 5 and len(pick(tags=("t1", "t2"))) == 0
    assert len(pick(since="2026-01-10", until="2026-01-12")) == 3
    assert len(pick(since="2026-01-10T12:00:01Z")) == 10
    assert pick(sort="started", limit=2) == ["m0-", "m1-x"]
    assert pick(sort="started", reverse=True, limit=1) == ["m19-x"]
    assert [r.damage for r in select(rows, Query(model="nobody"))] == ["no run-info"]
    for bad in ({"sort": "colour"}, {"limit": 0}, {"since": "yesterday"}, {"state": "gone"}):
        with pytest.raises(StoreUsageError):
            Query(**bad)


def test_tags_are_checked_and_kept_sorted() -> None:
    """Tags are 1-64 safe characters, at most 32, kept sorted and unique."""
    assert normalize_tags(["b", "a", "b"]) == ("a", "b")
    for bad in (["-x"], ["a b"], ["x" * 65], [f"t{i}" for i in range(33)], "abc"):
        with pytest.raises(RunInfoError):
            normalize_tags(bad)
    with pytest.raises(RunInfoError, match="sorted"):
        make_info(1, tags=("b", "a"))


def test_run_info_1_0_and_1_1_are_still_read_and_1_2_round_trips() -> None:
    """A 1.0 or 1.1 run-info (no tags) reads with no tags; the 1.2 golden sample round-trips byte for byte."""
    old = RunInfo.from_dict(json.loads((GOLDEN / "run-info-1.0.json").read_text()))
    assert old.tags == ()
    assert RunInfo.from_dict(json.loads((GOLDEN / "run-info-1.1.json").read_text())).tags == ()
    new_bytes = (GOLDEN / "run-info-1.2.json").read_bytes()
    info = RunInfo.from_dict(json.loads(new_bytes))
    assert info.tags == ("baseline", "paper:v2") and info.to_bytes() + b"\n" == new_bytes
    assert old.replace(tags=info.tags, model_usage=info.model_usage, nodes=info.nodes, heartbeat=info.heartbeat) == info
    with pytest.raises(RunInfoError, match="missing key"):
        RunInfo.from_dict({k: v for k, v in json.loads(new_bytes).items() if k != "tags"})
    with pytest.raises(RunInfoError, match="unknown key"):
        RunInfo.from_dict(dict(json.loads((GOLDEN / "run-info-1.1.json").read_text()), tags=[]))
    with pytest.raises(RunInfoError, match="unknown key"):
        RunInfo.from_dict(dict(json.loads((GOLDEN / "run-info-1.0.json").read_text()), tags=[]))


def test_catalog_index_golden_and_future() -> None:
    """The index golden sample parses; a future version is refused."""
    index = parse_index((GOLDEN / "catalog-index-1.0.json").read_bytes())
    assert index.position == 41 and len(index.runs) == 2
    assert index.to_bytes() + b"\n" == (GOLDEN / "catalog-index-1.0.json").read_bytes()
    with pytest.raises(index_module.IndexUnusable, match="'2.0' is not supported"):
        parse_index((GOLDEN / "catalog-index-future.json").read_bytes())


def test_run_tag_reaches_the_catalog_and_show_tells_how_to_reproduce(tmp_path, suite) -> None:  # noqa: ANN001
    """`run --tag` labels the run; `runs ls --tag` finds it; `runs show` prints tags and what reproduces it."""
    from tests.run_support import small_manifest

    locator = str(tmp_path / "s")
    manifest = tmp_path / "m.json"
    manifest.write_bytes(small_manifest(suite, seeds=(3,), ids=small_manifest.__defaults__[1][:1]).canonical_bytes())
    ran = invoke("run", "--manifest", manifest, "--policy", "greedy", "--model-id", "alpha", "--out",
                 tmp_path / "a.json", "--store", locator, "--tag", "paper:v2", "--tag", "baseline",
                 "--executor", "local")
    assert ran.exit_code == 0, ran.output
    bad = invoke("run", "--manifest", manifest, "--policy", "greedy", "--model-id", "b", "--out", tmp_path / "b.json",
                 "--store", locator, "--tag", "no spaces")
    assert bad.exit_code == 2 and "a tag is" in bad.output
    listing = invoke("runs", "ls", "--store", locator, "--tag", "baseline")
    assert listing.exit_code == 0 and "alpha" in listing.output and "note:" not in listing.output
    assert "alpha" not in invoke("runs", "ls", "--store", locator, "--tag", "other").output
    st = open_store(locator)
    run = st.journal_names()[0]
    shown = invoke("runs", "show", run[4:12], "--store", locator)
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "tags: baseline, paper:v2" in text and f"store: {st.locator}" in text
    assert "reproduce: emberbench run --manifest manifest.json --policy greedy --model-id alpha" in text
    assert "--tag baseline --tag paper:v2" in text and "emberbench store cat" in text
    assert "signer: none (unsigned)" in text and "versions: emberbench" in text


def test_an_index_ref_moved_around_the_store_is_not_used(store) -> None:  # noqa: ANN001
    """An index object put and named by a ref written without the store (no log entry) is nobody's word: not used."""
    _fill(store, 2)
    reindex(store)
    forged = parse_index(store.get(store.refs.get(INDEX_REF)))
    forged.runs.pop(sorted(forged.runs)[0])
    key = store.put(forged.to_bytes())
    _write_raw(store, f"refs/{INDEX_REF}", (key + "\n").encode())
    assert query_index(store).reason == "the catalog index ref was changed without a ref log entry"
    assert any("changed without a ref log entry" in p for p in check_index(store))


def test_the_index_is_read_in_one_request_and_capped_from_its_header(store, monkeypatch) -> None:  # noqa: ANN001
    """Loading the index opens its object once (a size read, then the read, took two requests on S3); an index
    over the cap is refused by its header's length, and `runs ls` lists by reading every run instead."""
    _fill(store, 3)
    reindex(store)
    reader = open_store(store.locator)  # another process's view: it put nothing, so it knows no sizes
    opened = []
    original = reader.backend.open_object
    monkeypatch.setattr(reader.backend, "open_object", lambda key: opened.append(key) or original(key))
    key, index, reason = index_module.load_index(reader)
    assert reason is None and len(index.runs) == 3 and opened == [key]
    monkeypatch.setattr(index_module, "MAX_INDEX_BYTES", len(index.to_bytes()) - 1)
    assert query_index(reader).reason == f"the catalog index is larger than {len(index.to_bytes()) - 1} bytes"
    reader.close()


def test_parsing_a_large_index_runs_no_garbage_collection() -> None:
    """Parsing 2,000 runs triggers no collection on the way (everything it builds stays alive; in `runs ls` the
    collections were a third of the parse, 19 of them here), and the collector is on again afterwards, after a
    damaged index too."""
    import gc

    from emberbench.runs.catalog import CatalogRow
    from emberbench.runs.index import CatalogIndex, IndexedRun, IndexUnusable

    infos = [make_info(i) for i in range(2000)]
    data = CatalogIndex(-1, None, {i.run: IndexedRun("ab" * 32, CatalogRow(i.run, i, None)) for i in infos}).to_bytes()
    collections = []

    def count(phase: str, info: dict) -> None:  # noqa: ARG001
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()  # the young generation's count starts at 0: nothing is due as the parse begins
    gc.callbacks.append(count)
    try:
        assert len(parse_index(data).runs) == 2000
        assert len(collections) <= 1 and gc.isenabled()  # at most the one put off, as the collector comes back
        with pytest.raises(IndexUnusable):
            parse_index(data.replace(b'"damage":null', b'"damage":7', 1))
        assert gc.isenabled()
        gc.disable()
        parse_index(data)
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()
        gc.callbacks.remove(count)
