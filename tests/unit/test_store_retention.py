"""Retention (issue 25): `store gc --keep` removes the runs no rule keeps, then collects their objects.

Rules: the last N runs per model, runs younger than D, tagged runs (a
run-info's `tags` list, when the run-info has one). Running runs and runs
that cannot be judged are always kept; a dry run (the default) changes nothing.
"""

from __future__ import annotations

import time

import pytest

from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.runs.audit import OK, audit_store
from emberbench.runs.retention import KeepRules, parse_keep, plan_retention
from tests.run_support import invoke, small_manifest


def _stamp(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def _age(store, run: str, days: float) -> None:  # noqa: ANN001
    """Make ``run`` look started and ended ``days`` ago (its run-info rewritten)."""
    info = read_run_info(store, run)
    when = _stamp(days * 86400)
    store.refs.set(run_info_ref(run), store.put(info.replace(started=when, ended=when, heartbeat=when).to_bytes()))


@pytest.fixture(params=["local", "s3"])
def runs(request, tmp_path, suite):  # noqa: ANN001
    """Three runs of model a (30, 20 and 10 days old) and one of model b (40 days), each on its own seeds:
    (store, locator, {label: run})."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    made = {}
    for label, model, seed, days in (("a-old", "a", 5, 30), ("a-mid", "a", 6, 20), ("a-new", "a", 7, 10),
                                     ("b-old", "b", 8, 40)):
        manifest = small_manifest(suite, seeds=(seed,))
        before = set(store.journal_names())
        run_evaluation(manifest, suite, "greedy", model, tmp_path / f"{label}.json", store=store)
        (made[label],) = set(store.journal_names()) - before
        _age(store, made[label], days)
    store.close()
    yield store, locator, made


def test_keep_last_per_model_is_a_dry_run_by_default_then_applies(runs, suite) -> None:  # noqa: ANN001
    """--keep last=1: the newest run of each model stays; the dry run changes nothing and says what gc would
    free; --apply removes the other runs and collects their objects; what stays is sound."""
    store, locator, made = runs
    before = sorted(store)
    dry = invoke("store", "gc", "--store", locator, "--grace", "0", "--keep", "last=1")
    assert dry.exit_code == 0, dry.output
    assert f"remove   {made['a-old']}" in dry.output and f"remove   {made['a-mid']}" in dry.output
    assert f"keep     {made['a-new']}" in dry.output and f"keep     {made['b-old']}" in dry.output
    assert "2 run(s) kept, 2 to remove" in dry.output and "dry run: nothing deleted" in dry.output
    assert sorted(store) == before and len(store.journal_names()) == 4
    would = int(dry.output.split("would delete ")[1].split()[0])
    assert would > 0
    done = invoke("store", "gc", "--store", locator, "--grace", "0", "--keep", "last=1", "--apply")
    assert done.exit_code == 0, done.output
    assert f"removed  {made['a-old']}" in done.output
    assert sorted(store.journal_names()) == sorted([made["a-new"], made["b-old"]])
    assert not store.refs.exists(f"results/{made['a-old']}") and not store.refs.exists(run_info_ref(made["a-mid"]))
    assert len(before) - len(list(store)) >= would
    assert invoke("store", "fsck", "--store", locator, "--connectivity").exit_code == 0
    assert [v.state for v in audit_store(store, suite)] == [OK, OK]


def test_keep_younger_and_rules_combine(runs) -> None:  # noqa: ANN001
    """--keep younger=15d keeps the 10-day-old run; with last=1 too, a run kept by either rule stays."""
    store, locator, made = runs
    decisions = {d.run: d for d in plan_retention(store, parse_keep(["younger=15d"]))}
    assert [label for label, run in made.items() if decisions[run].kept] == ["a-new"]
    both = {d.run: d for d in plan_retention(store, parse_keep(["younger=25d", "last=1"]))}
    assert sorted(label for label, run in made.items() if both[run].kept) == ["a-mid", "a-new", "b-old"]
    assert "younger than" in both[made["a-mid"]].reason and "among the last 1" in both[made["b-old"]].reason


def test_running_and_unjudgeable_runs_are_always_kept(runs) -> None:  # noqa: ANN001
    """A run whose heartbeat is fresh, or whose run-info cannot be read, is kept whatever the rules say; a dead
    one (stale heartbeat) is judged like any other."""
    store, _, made = runs
    info = read_run_info(store, made["a-old"])
    alive = info.replace(state="running", ended=None, result=None, heartbeat=_stamp(5))
    store.refs.set(run_info_ref(made["a-old"]), store.put(alive.to_bytes()))
    store.refs.set(run_info_ref(made["a-mid"]), store.put(b"not a run-info"))
    decisions = {d.run: d for d in plan_retention(store, parse_keep(["last=1"]))}
    assert decisions[made["a-old"]].kept and "it is running" in decisions[made["a-old"]].reason
    assert decisions[made["a-mid"]].kept and "cannot be judged" in decisions[made["a-mid"]].reason
    store.refs.set(run_info_ref(made["a-old"]), store.put(alive.replace(heartbeat=_stamp(3600)).to_bytes()))
    assert not {d.run: d for d in plan_retention(store, parse_keep(["last=1"]))}[made["a-old"]].kept


def test_tagged_runs_are_kept(runs) -> None:  # noqa: ANN001
    """`tagged` keeps runs whose run-info has any tag, `tag=NAME` those tagged NAME (`run --tag` records them)."""
    store, _, made = runs
    for run, tags in ((made["a-old"], ("baseline",)), (made["b-old"], ("paper", "v2"))):
        info = read_run_info(store, run)
        store.refs.set(run_info_ref(run), store.put(info.replace(tags=tags).to_bytes()))
    any_tag = {d.run for d in plan_retention(store, KeepRules(tagged=True)) if d.kept}
    assert any_tag == {made["a-old"], made["b-old"]}
    paper = {d.run for d in plan_retention(store, parse_keep(["tag=paper"])) if d.kept}
    assert paper == {made["b-old"]}


@pytest.mark.parametrize("rule", ["last=0", "last=x", "younger=10", "younger=-1d", "tag=", "everything", "last="])
def test_a_malformed_rule_is_a_usage_error(rule: str, tmp_path) -> None:  # noqa: ANN001
    """A --keep rule that is not one of the forms is refused in one line (exit 2), before the store is read."""
    result = invoke("store", "gc", "--store", tmp_path / "nothing", "--keep", rule)
    assert result.exit_code == 2 and "--keep" in result.output
    twice = invoke("store", "gc", "--store", tmp_path / "nothing", "--keep", "last=1", "--keep", "last=2")
    assert twice.exit_code == 2
