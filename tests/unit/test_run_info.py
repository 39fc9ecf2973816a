"""Run identity: the run-info format (golden sample, future version refused, validation) and the journal header."""

from __future__ import annotations

import json
import os

import pytest

from emberbench.errors import RunInfoError
from emberbench.evaluation.run_info import JournalHeader, RunInfo, node_counts, read_run_info, run_info_ref, write_run_info
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.conftest import ROOT
from tests.run_support import small_manifest

GOLDEN = ROOT / "tests" / "golden"


def golden(version: str = "1.2") -> dict:
    return json.loads((GOLDEN / f"run-info-{version}.json").read_text())


def test_golden_run_info_round_trips() -> None:
    """The golden sample parses and serializes back to its exact bytes; a 1.0 sample is read and written as 1.2."""
    info = RunInfo.from_dict(golden())
    assert info.state == "complete" and info.verification is not None and info.verification.verdict == "ok"
    assert info.model_usage is not None and info.model_usage.requests == 302
    assert info.nodes == (("eval-node-1", 20), ("eval-node-2", 16))
    assert info.tags == ("baseline", "paper:v2")
    assert info.heartbeat == "2025-01-31T12:01:00Z"
    assert info.to_bytes() + b"\n" == (GOLDEN / "run-info-1.2.json").read_bytes()


def test_a_version_1_0_run_info_is_still_read() -> None:
    """A run-info written before execution accounting (1.0, no model_usage) reads, with no usage; written
    again it is the current version with model_usage and nodes null. A 1.0 run-info that carries
    model_usage is refused."""
    old = json.loads((GOLDEN / "run-info-1.0.json").read_text())
    info = RunInfo.from_dict(old)
    assert info.model_usage is None and info.nodes is None and info.tags == () and info.heartbeat is None
    assert info.to_dict() == {**old, "run_info_version": "1.2", "model_usage": None, "nodes": None, "tags": [],
                              "heartbeat": None}
    with pytest.raises(RunInfoError, match="unknown key"):
        RunInfo.from_dict({**old, "model_usage": None})
    with pytest.raises(RunInfoError, match="unknown key"):
        RunInfo.from_dict({**old, "heartbeat": None})
    with pytest.raises(RunInfoError, match="missing key"):
        RunInfo.from_dict({**old, "run_info_version": "1.1"})


def test_a_version_1_1_run_info_is_still_read_and_rewritten_as_the_current_version() -> None:
    """Version 1.1 (no ``nodes``, no ``tags``) reads as nodes None and no tags; written again it is 1.2 with
    ``nodes`` null and ``tags`` empty, all else equal."""
    old = golden("1.1")
    info = RunInfo.from_dict(old)
    assert info.nodes is None and info.model_usage is not None
    again = info.to_dict()
    assert again.pop("run_info_version") == "1.2" and again.pop("nodes") is None and again.pop("tags") == []
    assert again.pop("heartbeat") is None
    assert again == {k: v for k, v in old.items() if k != "run_info_version"}
    with pytest.raises(RunInfoError, match=r"unknown key\(s\) \['nodes'\]"):
        RunInfo.from_dict({**old, "nodes": {"a": 1}})  # 1.1 has no nodes
    current = golden()
    del current["nodes"]
    with pytest.raises(RunInfoError, match=r"missing key\(s\) \['nodes'\]"):
        RunInfo.from_dict(current)  # 1.2 always has them, null or not
    newer = golden()
    del newer["heartbeat"]
    with pytest.raises(RunInfoError, match="missing key"):
        RunInfo.from_dict(newer)


def test_future_run_info_is_refused() -> None:
    """A run-info of a newer version is refused, naming the version."""
    with pytest.raises(RunInfoError, match="run_info_version '2.0' is not supported .this code reads '1.0', '1.1' "
                                           "and '1.2'"):
        RunInfo.from_dict(json.loads((GOLDEN / "run-info-future.json").read_text()))


@pytest.mark.parametrize(("nodes", "message"), [
    ([["a", 1]], "nodes must be a JSON object or null"),
    ({"a": 0}, r"nodes\['a'\] must be a positive integer"),
    ({"a": True}, "must be a positive integer"),
    ({"a": 1.5}, "must be a positive integer"),
    ({"": 1}, "nodes .a host name. must be 1-128 printable"),
    ({"x" * 129: 1}, "must be 1-128 printable"),
    ({"a\tb": 1}, "must be 1-128 printable"),
    ({"a": 30, "b": 7}, "nodes count more episodes than the 36 scheduled"),
    ({f"h{i}": 1 for i in range(257)}, "nodes must map at most 256 host names"),
])
def test_nodes_validation(nodes, message) -> None:  # noqa: ANN001
    """Each malformed ``nodes`` value is refused with a message naming it."""
    with pytest.raises(RunInfoError, match=message):
        RunInfo.from_dict({**golden(), "nodes": nodes})


def test_node_counts_stay_within_the_run_info_limits() -> None:
    """Names are cut to 128 characters (coinciding ones added up); past 256 nodes the smallest are folded."""
    assert node_counts({"b": 2, "a": 1, "z": 0}) == (("a", 1), ("b", 2))
    assert node_counts({"x" * 130: 1, "x" * 129: 2}) == (("x" * 128, 3),)
    many = node_counts({f"h{i:03}": 1 + (i % 2) for i in range(300)})
    assert len(many) == 256 and sum(c for _, c in many) == 450
    assert dict(many)["(other nodes)"] == 300 - 256 + 1  # the 45 smallest counts (1 each), ties by name
    assert RunInfo.from_dict({**golden(), "episodes_scheduled": 450, "episodes_done": 450,
                              "nodes": dict(many)}).nodes == many


@pytest.mark.parametrize(("change", "message"), [
    ({"extra": 1}, "unknown key"),
    ({"model_id": None}, "model_id must be"),
    ({"model_id": " m"}, "whitespace"),
    ({"run": "../x"}, "run must be a journal name"),
    ({"state": "done"}, "state must be one of"),
    ({"episodes_done": 37}, "exceeds episodes_scheduled"),
    ({"episodes_done": True}, "episodes_done must be"),
    ({"started": "yesterday"}, "started must be an ISO 8601"),
    ({"result": "XYZ"}, "result must be a lowercase SHA-256"),
    ({"policy": "cmd:a\nb"}, "policy must be"),
    ({"tags": "baseline"}, "tags must be"),
    ({"tags": ["b", "a"]}, "tags must be a sorted list"),
    ({"tags": ["a b"]}, "a tag is"),
    ({"verification": {"at": "2025-01-01T00:00:00Z", "by": "x", "verdict": "fine", "detail": ""}},
     "verdict must be one of"),
    ({"model_usage": {"steps": 1}}, "model_usage: model usage must be an object with exactly the keys"),
    ({"model_usage": [1]}, "model_usage: model usage must be"),
    ({"model_usage": {**dict.fromkeys(["steps", "cache_hits", "requests", "retries", "prompt_tokens",
                                       "completion_tokens", "latency_ms", "max_latency_ms"], 0), "requests": -1}},
     "model_usage: requests must be a non-negative integer"),
])
def test_run_info_validation(change, message) -> None:  # noqa: ANN001
    """Each malformed field is refused with a message naming it."""
    data = {**golden(), **change}
    with pytest.raises(RunInfoError, match=message):
        RunInfo.from_dict(data)
    missing = golden()
    del missing["host"]
    with pytest.raises(RunInfoError, match="missing key"):
        RunInfo.from_dict(missing)


def test_journal_header_versions() -> None:
    """The journal header round-trips; another header version is refused."""
    header = JournalHeader("greedy", "0.2.0", "2025-01-31T12:00:00Z")
    assert JournalHeader.from_dict(header.to_dict()) == header
    with pytest.raises(RunInfoError, match="header version 2 is not supported"):
        JournalHeader.from_dict({**header.to_dict(), "run_header": 2})


def test_a_run_records_its_provenance_and_nothing_secret(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """A finished run's run-info names policy, manifest, suite, versions and result; no environment value."""
    monkeypatch.setenv("EMBERBENCH_TEST_SECRET", "s3cr3t-t0ken-value")
    store = open_store(tmp_path / "s")
    manifest = small_manifest(suite)
    summary = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "r.json", store=store)
    (name,) = store.journal_names()
    info = read_run_info(store, name)
    assert info is not None and info.run == name and info.policy == "greedy" and info.model_id == "m"
    assert info.manifest_hash == manifest.hash and info.suite_hash == suite.hash
    assert info.state == "complete" and info.episodes_done == info.episodes_scheduled == len(manifest.episodes)
    assert info.result == summary.result_digest and info.started == summary.journal_started and info.ended
    raw = store.get(store.refs.get(run_info_ref(name)))
    assert b"s3cr3t" not in raw and str(tmp_path).encode() not in raw
    assert all(value.encode() not in raw for key, value in os.environ.items() if len(value) > 12 and "PATH" not in key)


def test_a_failed_run_is_recorded_as_failed(tmp_path, suite) -> None:  # noqa: ANN001
    """A run stopped by its policy leaves a run-info in state failed with the episodes done so far."""
    store = open_store(tmp_path / "s")
    calls = [0]

    def factory():  # noqa: ANN202
        from emberbench.policies import GreedyPolicy

        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("stop")
        return GreedyPolicy()

    with pytest.raises(RuntimeError):
        run_evaluation(small_manifest(suite), suite, factory, "m", tmp_path / "r.json", store=store)
    info = read_run_info(store, store.journal_names()[0])
    assert info is not None and info.state == "failed" and info.episodes_done == 2


def test_write_run_info_is_the_one_writer(tmp_path) -> None:  # noqa: ANN001
    """write_run_info stores the canonical bytes and points runs/<run> at them; read_run_info reads them back."""
    store = open_store(tmp_path / "s")
    info = RunInfo.from_dict(golden())
    key = write_run_info(store, info)
    assert store.refs.get(run_info_ref(info.run)) == key
    assert read_run_info(store, info.run) == info
    assert read_run_info(store, "run-" + "0" * 64) is None


def test_a_run_info_is_read_in_one_object_read_and_capped_from_its_header(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Reading a run-info opens its object once (a size read first made it two requests on S3: runs ls reads one per
    run its ref log tail touched); one over the cap is refused with the same message as before."""
    from emberbench.evaluation.run_info import MAX_RUN_INFO_BYTES

    info = RunInfo.from_dict(golden())
    write_run_info(open_store(tmp_path / "s"), info)
    store = open_store(tmp_path / "s")  # knows no sizes of its own puts
    opened = []
    original = store.backend.open_object
    monkeypatch.setattr(store.backend, "open_object", lambda key: opened.append(key) or original(key))
    assert read_run_info(store, info.run) == info
    assert opened == [store.refs.get(run_info_ref(info.run))]
    big = store.put(b" " * (MAX_RUN_INFO_BYTES + 1))
    store.refs.set(run_info_ref(info.run), big)
    with pytest.raises(RunInfoError, match=f"run-info object {big} is larger than {MAX_RUN_INFO_BYTES} bytes"):
        read_run_info(store, info.run)


def test_what_a_run_stores_meets_the_schemas(tmp_path, suite) -> None:  # noqa: ANN001
    """The run-info and the journal header a real run stores, and a live lock file, meet their JSON Schemas."""
    from emberbench.evaluation.output_lock import OutputLock, lock_path_of
    from tests.schema_check import schema_errors

    store = open_store(tmp_path / "s")
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "r.json", store=store)
    (name,) = store.journal_names()
    info = json.loads(store.get(store.refs.get(run_info_ref(name))))
    header = dict(store.read_journal(name).entries[0].data)
    assert schema_errors(info, "run-info", shipped=True) == []
    assert schema_errors(header, "run-header", shipped=True) == []
    with OutputLock(tmp_path / "r.json"):
        lock = json.loads(lock_path_of(tmp_path / "r.json").read_text())
    assert schema_errors(lock, "output-lock", shipped=True) == []
    assert schema_errors({**info, "state": "done"}, "run-info", shipped=True)


def test_a_recorded_verification_survives_the_runs_own_updates(tmp_path) -> None:  # noqa: ANN001
    """record_verification changes only the verdict; a later progress update keeps it (compare-and-swap)."""
    from emberbench.evaluation.run_info import Verification, record_verification

    store = open_store(tmp_path / "s")
    info = RunInfo.from_dict({**golden(), "verification": None, "state": "running", "ended": None})
    write_run_info(store, info)
    verdict = Verification(at="2025-03-01T00:00:00Z", by="auditor@host", verdict="ok", detail="36/36")
    assert record_verification(store, info.run, verdict).verification == verdict
    write_run_info(store, info.replace(state="complete", ended="2025-03-01T00:01:00Z"))
    after = read_run_info(store, info.run)
    assert after is not None and after.state == "complete" and after.verification == verdict
    with pytest.raises(RunInfoError, match="no readable run-info"):
        record_verification(store, "run-" + "1" * 64, verdict)


def test_a_run_records_where_its_episodes_were_played(tmp_path, suite) -> None:  # noqa: ANN001
    """The run-info and the summary count the episodes played per machine; an invocation that plays nothing
    keeps the nodes of the latest one that did; one that plays some records only its own."""
    from emberbench.evaluation.run_info import this_host
    from emberbench.evaluation.runner import EpisodeOutcome, InProcessExecutor

    store = open_store(tmp_path / "s")
    manifest = small_manifest(suite)
    n = len(manifest.episodes)

    class Elsewhere(InProcessExecutor):
        """Plays in this process but reports the episodes as played on machines ``w1`` and ``w2``."""

        def run(self, tasks):  # noqa: ANN001, ANN202
            for outcome in super().run(tasks):
                o = outcome
                yield EpisodeOutcome(o.index, o.record_digest, o.record_bytes, o.metrics_bytes, o.stored_record,
                                     node=f"w{1 + o.index % 2}")

    first = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "r.json", store=store,
                           executor=Elsewhere(suite, "greedy", store=store))
    (name,) = store.journal_names()
    expected = (("w1", (n + 1) // 2), ("w2", n // 2))
    assert first.nodes == expected and read_run_info(store, name).nodes == expected
    assert first.describe_nodes() == f"nodes: w1 {(n + 1) // 2} episodes, w2 {n // 2} episodes"
    again = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "r.json", store=store)
    assert again.nodes == () and again.describe_nodes() == "nodes: no episode played now"
    assert read_run_info(store, name).nodes == expected  # kept: nothing was played now
    (tmp_path / "r.json").unlink()
    store2 = open_store(tmp_path / "s2")
    local = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "r.json", store=store2, resume=False)
    assert local.nodes == ((this_host(), n),) and read_run_info(store2, name).nodes == ((this_host(), n),)
