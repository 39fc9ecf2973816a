"""The evaluation runner: isolation of policies, fresh policy per episode, atomic saves, resume."""

from __future__ import annotations

import json

import pytest

from emberbench.errors import ResultError, ResumeError
from emberbench.results.manifest import build_manifest
from emberbench.sim.observation import OBSERVATION_TYPES, Observation
from emberbench.policies import GreedyPolicy
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation"]


@pytest.fixture(scope="module")
def small_manifest(suite):  # noqa: ANN001
    """The public suite's first two small scenarios under seeds 3 and 11 (a hand-built subset)."""
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry

    full = build_manifest(suite, [3, 11])
    chosen = [e for e in full.episodes if e.scenario_id in SMALL]
    entries = tuple(ManifestEntry(i, e.scenario_id, e.scenario_hash, e.seed) for i, e in enumerate(chosen))
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)


def _walk(value, seen):  # noqa: ANN001
    seen.append(value)
    if isinstance(value, Observation):
        for name in value.__slots__:
            _walk(getattr(value, name), seen)
    elif isinstance(value, tuple):
        for item in value:
            _walk(item, seen)


SEEDS_64 = (0xC0FFEE5E_ED129ABC, 0x8BADF00D_00000003)


def seed_renderings(seed: int) -> set[bytes]:
    """Every rendering of ``seed`` a leak could take: decimal, hex (any case, padded or not), raw bytes."""
    import base64

    raw = {seed.to_bytes(8, order) for order in ("big", "little")}
    text = {str(seed), format(seed, "x"), format(seed, "X"), format(seed, "016x"), format(seed, "016X")}
    text |= {base64.b64encode(b).decode() for b in raw} | {b.hex() for b in raw}
    return {t.encode() for t in text} | raw


def leaked_renderings(observation: Observation, seed: int) -> list[str]:
    """The renderings of ``seed`` found anywhere in ``observation``: its JSON, every string, every integer."""
    seen: list = []
    _walk(observation, seen)
    haystacks = [observation.to_json().encode()]
    haystacks += [v.encode("utf-8", "surrogatepass") for v in seen if isinstance(v, str)]
    haystacks += [v.encode("latin-1", "replace") for v in seen if isinstance(v, str)]
    found = [repr(v) for v in seen if isinstance(v, int) and not isinstance(v, bool) and v == seed]
    for needle in seed_renderings(seed):
        found += [repr(needle) for hay in haystacks if needle in hay]
    return found


@pytest.mark.parametrize("rendering", sorted(seed_renderings(SEEDS_64[0]), key=repr))
def test_leak_detector_catches_every_rendering(rendering) -> None:  # noqa: ANN001
    """Issue 11 defect 8: the privacy check finds the seed in any rendering, inside any string."""
    from emberbench.sim.observation import ExitView

    obs = Observation(step=0, max_steps=1, height=1, width=1, grid=("E",), exits=(ExitView("x", 0, 0),), people=())
    text = rendering.decode("latin-1")
    leaky = Observation(step=0, max_steps=1, height=1, width=1, grid=("E",),
                        exits=(ExitView("x" + text + "y", 0, 0),), people=())
    assert leaked_renderings(leaky, SEEDS_64[0])
    assert not leaked_renderings(obs, SEEDS_64[0])


def test_policy_receives_only_observations(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 11 defect 8: the factory gets (); each call gets one Observation; no 64-bit seed in any form."""
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry

    entries = []
    for sid in SMALL:
        for seed in SEEDS_64:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))
    factory_calls: list[tuple] = []
    policy_calls: list[tuple] = []

    class Recorder:
        def __init__(self) -> None:
            self.inner = GreedyPolicy()

        def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003
            policy_calls.append((args, kwargs))
            return self.inner(*args)

    def factory(*args, **kwargs):  # noqa: ANN002, ANN003
        factory_calls.append((args, kwargs))
        return Recorder()

    run_evaluation(manifest, suite, factory, "recorder", tmp_path / "r.json")
    assert factory_calls == [((), {})] * len(manifest.episodes)
    assert policy_calls
    secrets = {manifest.hash, suite.hash}
    for e in manifest.episodes:
        secrets |= {e.scenario_hash, e.scenario_id}
    for args, kwargs in policy_calls:
        assert kwargs == {} and len(args) == 1 and isinstance(args[0], Observation)
        seen: list = []
        _walk(args[0], seen)
        assert all(isinstance(v, OBSERVATION_TYPES) for v in seen)
        for seed in SEEDS_64:
            assert not leaked_renderings(args[0], seed)
        text = args[0].to_json()
        assert not any(secret in text for secret in secrets)
        assert '"seed"' not in text and "scenario" not in text


def test_factory_returning_an_earlier_policy_is_refused(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """Issue 11 defect 8: a factory that hands out the same object twice in a run is refused."""
    from emberbench.errors import PolicyError

    shared = GreedyPolicy()
    with pytest.raises(PolicyError, match="already returned"):
        run_evaluation(small_manifest, suite, lambda: shared, "m", tmp_path / "r.json")
    assert [e.index for e in load_result(tmp_path / "r.json", suite).episodes] == [0]


def test_large_seed_does_not_leak_into_observations(tmp_path, suite) -> None:  # noqa: ANN001
    """With a large 64-bit seed, neither its decimal nor its hex form occurs in any observation."""
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry

    seed = 0xDEADBEEF12345678
    sc = suite.scenario(SMALL[1])
    m = EvaluationManifest(suite.id, suite.version, suite.hash, (ManifestEntry(0, sc.id, sc.content_hash, seed),))
    texts: list[str] = []
    inner = GreedyPolicy()

    def policy(obs):  # noqa: ANN001
        texts.append(obs.to_json())
        return inner(obs)

    run_evaluation(m, suite, lambda: policy, "leak", tmp_path / "r.json")
    joined = "\n".join(texts).lower()
    for secret in (str(seed), format(seed, "x"), format(seed, "016x"), m.hash, suite.hash, sc.content_hash):
        assert secret not in joined


def test_fresh_policy_per_episode(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """One distinct policy per episode; each sees exactly one episode, starting at step 0."""
    instances: list = []

    class Tracker:
        def __init__(self) -> None:
            self.steps: list[int] = []
            self.inner = GreedyPolicy()
            instances.append(self)

        def __call__(self, obs):  # noqa: ANN001
            self.steps.append(obs.step)
            return self.inner(obs)

    run_evaluation(small_manifest, suite, Tracker, "tracker", tmp_path / "r.json")
    assert len(instances) == len(small_manifest.episodes)
    assert len({id(i) for i in instances}) == len(instances)
    for t in instances:
        assert t.steps == list(range(len(t.steps))) and t.steps[0] == 0


class Crash(Exception):
    pass


def test_interrupted_run_resumes_without_rerunning(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """An interrupted run, resumed, equals an uninterrupted run byte for byte, running nothing twice."""
    full = tmp_path / "full.json"
    run_evaluation(small_manifest, suite, "greedy", "m", full)
    part = tmp_path / "part.json"
    played: list[int] = []

    def make(limit):  # noqa: ANN001
        def factory():  # noqa: ANN202
            if len(played) >= limit:
                raise Crash("interrupted")
            played.append(len(played))
            return GreedyPolicy()
        return factory

    with pytest.raises(Crash):
        run_evaluation(small_manifest, suite, make(2), "m", part)
    assert len(load_result(part, suite).episodes) == 2
    assert len(played) == 2
    summary = run_evaluation(small_manifest, suite, make(99), "m", part)
    assert summary.resumed == 2 and summary.ran == len(small_manifest.episodes) - 2
    assert len(played) == len(small_manifest.episodes)
    assert part.read_bytes() == full.read_bytes()
    again = run_evaluation(small_manifest, suite, make(0), "m", part)
    assert again.ran == 0


def test_zero_episode_artifact_is_written_first(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """Before the first episode runs, a valid artifact with no episodes exists."""
    out = tmp_path / "r.json"
    seen: list = []

    def factory():  # noqa: ANN202
        seen.append(json.loads(out.read_text())["episodes"])
        raise Crash("stop at once")

    with pytest.raises(Crash):
        run_evaluation(small_manifest, suite, factory, "m", out)
    assert seen == [[]]
    assert load_result(out, suite).episodes == ()


def test_resume_refuses_other_manifest_or_model(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """resume=False refuses an existing file; a different model id or manifest is rejected."""
    out = tmp_path / "r.json"
    run_evaluation(small_manifest, suite, "stay", "m", out)
    before = out.read_bytes()
    with pytest.raises(ResumeError, match="never overwritten"):
        run_evaluation(small_manifest, suite, "stay", "m", out, resume=False)
    with pytest.raises(ResumeError, match="belongs to model id 'm', not 'other'"):
        run_evaluation(small_manifest, suite, "stay", "other", out)
    with pytest.raises(ResumeError, match="belongs to evaluation manifest"):
        run_evaluation(build_manifest(suite, [0]), suite, "stay", "m", out)
    assert out.read_bytes() == before


def test_invalid_action_stops_the_run_and_keeps_completed(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """An invalid action raises InvalidActionError; episodes completed before it stay in the artifact."""
    from emberbench.errors import InvalidActionError

    count = [0]

    def factory():  # noqa: ANN202
        count[0] += 1
        if count[0] == 3:
            return lambda obs: {"nobody": "N"}
        return GreedyPolicy()

    out = tmp_path / "r.json"
    with pytest.raises(InvalidActionError, match="unknown person 'nobody'"):
        run_evaluation(small_manifest, suite, factory, "m", out)
    assert [e.index for e in load_result(out, suite).episodes] == [0, 1]


def test_model_id_validation(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """model_id must be 1-256 printable characters without outer whitespace."""
    for bad, message in [("", "1 to 256"), ("x" * 257, "1 to 256"), (" a", "whitespace"), ("a\n", "non-printable")]:
        with pytest.raises(ResultError, match=message):
            run_evaluation(small_manifest, suite, "stay", bad, tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_progress_reports_each_episode(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """The progress callback sees the resumed count, then one call per episode."""
    calls: list[tuple[int, int]] = []
    run_evaluation(small_manifest, suite, "stay", "m", tmp_path / "r.json", progress=lambda d, t: calls.append((d, t)))
    n = len(small_manifest.episodes)
    assert calls == [(i, n) for i in range(n + 1)]


def test_store_run_refuses_the_same_outputs(tmp_path, suite, small_manifest) -> None:  # noqa: ANN001
    """With a store too: an existing artifact is not overwritten without resume, nor written to a missing folder."""
    from emberbench.evaluation.store_runner import open_store

    store = open_store(tmp_path / "store")
    out = tmp_path / "r.json"
    run_evaluation(small_manifest, suite, "stay", "m", out, store=store)
    before = out.read_bytes()
    with pytest.raises(ResumeError, match="never overwritten"):
        run_evaluation(small_manifest, suite, "stay", "m", out, resume=False, store=store)
    with pytest.raises(ResumeError, match="belongs to model id 'm', not 'other'"):
        run_evaluation(small_manifest, suite, "stay", "other", out, store=store)
    with pytest.raises(ResultError, match="output folder does not exist"):
        run_evaluation(small_manifest, suite, "stay", "m", tmp_path / "nope" / "r.json", store=store)
    assert out.read_bytes() == before
