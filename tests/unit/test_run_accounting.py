"""Execution accounting: the usage policies report is summed into the run-info and the summary, never a record."""

from __future__ import annotations

import pytest

from emberbench.evaluation.drive import DriveOptions
from emberbench.evaluation.run_info import read_run_info
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.policies.served.usage import ModelUsage
from tests import drive_policies as dp
from tests.unit.test_drive import SHORT, manifest_of


def _steps(path) -> int:  # noqa: ANN001
    import json

    return sum(len(e["record"]["actions"]) for e in json.loads(path.read_bytes())["episodes"])


@pytest.mark.parametrize("drive", [DriveOptions(), DriveOptions(concurrency=8)])
def test_usage_is_summed_into_the_run_info_not_the_records(tmp_path, suite, drive) -> None:  # noqa: ANN001
    """Each episode's policy reports one request and 12 tokens per step: the run-info and the summary hold the
    sums over every episode, and the artifact is greedy's byte for byte (no usage in any record)."""
    store = open_store(tmp_path / "s")
    manifest = manifest_of(suite, SHORT)
    summary = run_evaluation(manifest, suite, dp.CountingGreedy, "m", tmp_path / "r.json", store=store, drive=drive)
    steps = _steps(tmp_path / "r.json")
    expected = ModelUsage(steps=steps, requests=steps, prompt_tokens=10 * steps, completion_tokens=2 * steps,
                          latency_ms=steps, max_latency_ms=1)
    assert summary.usage == expected
    (name,) = store.journal_names()
    assert read_run_info(store, name).model_usage == expected
    run_evaluation(manifest, suite, "greedy", "g", tmp_path / "g.json")
    assert (tmp_path / "r.json").read_bytes() == (tmp_path / "g.json").read_bytes().replace(b'"g"', b'"m"')


def test_usage_adds_up_over_the_starts_of_a_run(tmp_path, suite) -> None:  # noqa: ANN001
    """A run stopped half way and resumed records the usage of both starts; policies that report nothing
    leave model_usage null."""
    store = open_store(tmp_path / "s")
    manifest = manifest_of(suite, SHORT)
    calls = [0]

    def stopping():  # noqa: ANN202
        calls[0] += 1
        if calls[0] == 4:
            raise RuntimeError("stop")
        return dp.CountingGreedy()

    with pytest.raises(RuntimeError):
        run_evaluation(manifest, suite, stopping, "m", tmp_path / "r.json", store=store, policy_spec="x:y")
    (name,) = store.journal_names()
    first = read_run_info(store, name).model_usage
    assert first is not None and first.steps > 0
    resumed = run_evaluation(manifest, suite, dp.CountingGreedy, "m", tmp_path / "r.json", store=store,
                             policy_spec="x:y")
    total = read_run_info(store, name).model_usage
    assert total == first + resumed.usage and total.steps == _steps(tmp_path / "r.json")
    run_evaluation(manifest, suite, "greedy", "plain", tmp_path / "p.json", store=store)
    plain = [n for n in store.journal_names() if n != name]
    assert read_run_info(store, plain[0]).model_usage is None


def test_runs_show_and_run_print_the_usage(tmp_path, suite) -> None:  # noqa: ANN001
    """``runs show`` lists the run's model usage; ``run`` prints what the episodes played now cost."""
    from emberbench.results.manifest import write_manifest
    from tests.run_support import invoke

    write_manifest(manifest_of(suite, SHORT), tmp_path / "m.json")
    result = invoke("run", "--manifest", tmp_path / "m.json", "--policy", "tests.drive_policies:CountingGreedy",
                    "--model-id", "c", "--out", tmp_path / "o.json", "--store", tmp_path / "s")
    assert result.exit_code == 0, result.output
    assert "model usage of the episodes played now: " in result.output and " requests (0 retries)" in result.output
    from emberbench.evaluation.store_runner import open_store

    (name,) = open_store(tmp_path / "s").journal_names()
    shown = invoke("runs", "show", name[4:12], "--store", tmp_path / "s")
    assert shown.exit_code == 0, shown.output
    assert "model usage: " in shown.output


def test_a_served_model_s_usage_and_cache_hits_reach_the_run_info(model_server, tmp_path, suite,
                                                                  monkeypatch) -> None:  # noqa: ANN001
    """``openai:`` against the test server, 8 episodes in flight: the run-info counts every step, its requests
    and tokens; a second run (another model id, same store) answers every step from the cache: no request,
    all cache hits, and the same records as greedy."""
    import hashlib

    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url)
    monkeypatch.setenv("EMBERBENCH_MODEL_BACKOFF", "0.01")
    model = "greedy+tag" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:8]
    store = open_store(tmp_path / "s")
    manifest = manifest_of(suite, SHORT)
    first = run_evaluation(manifest, suite, f"openai:{model}", "a", tmp_path / "a.json", store=store,
                           drive=DriveOptions(concurrency=8))
    steps = _steps(tmp_path / "a.json")
    sent = len(model_server.log(model))
    run_a = [n for n in store.journal_names()]
    usage = read_run_info(store, run_a[0]).model_usage
    assert usage == first.usage and usage.steps == steps
    assert usage.requests == sent == steps - usage.cache_hits and usage.prompt_tokens > 0
    second = run_evaluation(manifest, suite, f"openai:{model}", "b", tmp_path / "b.json", store=store,
                            drive=DriveOptions(concurrency=8))
    assert len(model_server.log(model)) == sent
    assert second.usage.requests == 0 and second.usage.cache_hits == steps and second.usage.prompt_tokens == 0
    run_evaluation(manifest, suite, "greedy", "a", tmp_path / "g.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "g.json").read_bytes()


def test_the_report_shows_execution_accounting_from_the_store(tmp_path, suite) -> None:  # noqa: ANN001
    """``report --store``: a result whose run recorded usage gets a row in the Execution accounting section
    (HTML and Markdown); a result whose run recorded none, and any report without --store, get none."""
    from tests.run_support import invoke

    store = open_store(tmp_path / "s")
    manifest = manifest_of(suite, SHORT)
    summary = run_evaluation(manifest, suite, dp.CountingGreedy, "counted", tmp_path / "c.json", store=store)
    run_evaluation(manifest, suite, "greedy", "plain", tmp_path / "g.json", store=store)
    args = ["report", tmp_path / "c.json", tmp_path / "g.json", "--resamples", "100"]
    with_store = invoke(*args, "--out", tmp_path / "r1", "--store", tmp_path / "s")
    assert with_store.exit_code == 0, with_store.output
    markdown = (tmp_path / "r1" / "report.md").read_text()
    section = markdown.split("## Execution accounting", 1)[1]
    assert f"| counted | {summary.usage.steps} | 0 | {summary.usage.requests} |" in section
    assert "| plain |" not in section
    assert 'id="accounting"' in (tmp_path / "r1" / "index.html").read_text()
    without = invoke(*args, "--out", tmp_path / "r2")
    assert without.exit_code == 0, without.output
    assert "Execution accounting" not in (tmp_path / "r2" / "report.md").read_text()
    assert 'id="accounting"' not in (tmp_path / "r2" / "index.html").read_text()
