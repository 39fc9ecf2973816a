"""The openai: adapter against the local test server (tests/model_server.py): answers, every injected fault,
the response cache, seed privacy of every prompt, accounting, limits. No client object is mocked."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest

from emberbench.errors import InvalidActionError, ModelError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.policies.context import PolicyContext
from emberbench.policies.served.limits import RateLimiter, RequestGate
from emberbench.policies.served.openai_chat import OpenAIChatFactory, ServerSettings
from emberbench.policies.served.prompt import INSTRUCTIONS
from emberbench.policies.spec import closing, resolve_policy
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from tests.unit.test_runner import SEEDS_64, SMALL, seed_renderings

SCENARIO = "v1-pub-01-single-exit-sparse"


@pytest.fixture
def tag(request) -> str:  # noqa: ANN001
    """A model-name option unique to the test, so the server's counts and the cache are the test's own."""
    return "tag" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]


def environ(server, **extra: str) -> dict[str, str]:  # noqa: ANN001
    """The environment of a run against the test server: fast retries, short timeouts."""
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key", "EMBERBENCH_MODEL_BACKOFF": "0.01",
            "EMBERBENCH_MODEL_TIMEOUT": "5", **extra}


def factory(server, model: str, store=None, **extra: str):  # noqa: ANN001, ANN201
    return resolve_policy(f"openai:{model}", context=PolicyContext(store=store, environ=environ(server, **extra)))


def manifest_of(suite, scenarios, seeds) -> EvaluationManifest:  # noqa: ANN001
    entries = []
    for sid in scenarios:
        for seed in seeds:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def play(suite, policy_factory, seed: int = 3, scenario: str = SCENARIO):  # noqa: ANN001, ANN201
    """Play one episode; return the record and the policy's usage."""
    from emberbench.records.episode import play_episode

    with closing(policy_factory()) as policy:
        record, _ = play_episode(suite.scenario(scenario), seed, policy)
        return record, policy.usage()


def record_digests(path, suite) -> list[str]:  # noqa: ANN001
    return [e.record_digest for e in load_result(path, suite).episodes]


def test_greedy_model_plays_exactly_the_greedy_records(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """A model that answers the greedy moves yields the built-in greedy policy's records, byte for byte;
    one request per step, the key sent as a bearer token."""
    manifest = manifest_of(suite, SMALL, [3, 11])
    run_evaluation(manifest, suite, "greedy", "g", tmp_path / "builtin.json")
    for kind in ("greedy", "fenced"):
        model = f"{kind}+{tag}"
        out = tmp_path / f"served-{kind}.json"
        run_evaluation(manifest, suite, factory(model_server, model), "g", out, policy_spec=f"openai:{model}")
        assert record_digests(out, suite) == record_digests(tmp_path / "builtin.json", suite)
        steps = sum(len(e.record.actions) for e in load_result(out, suite).episodes)
        log = model_server.log(model)
        assert len(log) == steps and {e["status"] for e in log} == {200}
        assert {e["auth"] for e in log} == {"Bearer test-key"}


def test_every_prompt_is_the_observation_and_nothing_of_the_seed(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """Seed privacy: every request the server received holds the fixed instructions and one observation,
    and no rendering of any 64-bit episode seed, nor the scenario ids or any hash of the run."""
    model = f"greedy+{tag}"
    manifest = manifest_of(suite, SMALL, SEEDS_64)
    run_evaluation(manifest, suite, factory(model_server, model), "privacy", tmp_path / "r.json")
    log = model_server.log(model)
    assert log
    secrets = {manifest.hash, suite.hash} | {e.scenario_hash for e in manifest.episodes}
    secrets |= {e.scenario_id for e in manifest.episodes}
    for entry in log:
        raw = entry["body"].encode("utf-8")
        body = json.loads(raw)
        assert set(body) == {"model", "messages", "temperature", "seed", "max_tokens"}
        system, user = body["messages"]
        assert system == {"role": "system", "content": INSTRUCTIONS} and user["role"] == "user"
        assert set(json.loads(user["content"])) == {"observation_version", "step", "max_steps", "height", "width",
                                                     "grid", "exits", "people"}
        for seed in SEEDS_64:
            for needle in seed_renderings(seed):
                assert needle not in raw, (seed, needle)
                assert needle not in raw.decode("ascii").encode("latin-1")
            assert body["seed"] != seed
        assert not any(secret in entry["body"] for secret in secrets)
        assert "scenario" not in entry["body"] and "manifest" not in entry["body"]


@pytest.mark.parametrize(("fault", "attempts", "extra"), [
    ("429x2+ram20", 3, {}),
    ("503x2", 3, {}),
    ("500x1", 2, {}),
    ("timeoutx1", 2, {"EMBERBENCH_MODEL_TIMEOUT": "0.25"}),
    ("cutx1", 2, {}),
])
def test_transient_faults_are_retried_then_answered(model_server, suite, tag, fault, attempts, extra) -> None:  # noqa: ANN001
    """429, 5xx, a timeout and a reply cut short are retried; the episode is the one without faults."""
    clean, _ = play(suite, factory(model_server, f"greedy+{tag}clean"))
    model = f"greedy+{fault}+{tag}"
    record, usage = play(suite, factory(model_server, model, **extra))
    assert record.canonical_bytes() == clean.canonical_bytes()
    log = model_server.log(model)
    steps = len(record.actions)
    assert len(log) == steps * attempts and usage.requests == len(log)
    assert usage.retries == steps * (attempts - 1) and usage.steps == steps
    first_body = log[0]["body"]
    assert [e["body"] == first_body for e in log[:attempts]] == [True] * attempts  # the same request again


def test_retry_after_is_honoured(model_server, suite, tag) -> None:  # noqa: ANN001
    """With Retry-After: 1 the retry arrives at least a second after the 429."""
    model = f"greedy+429x1+ra1+{tag}"
    f = factory(model_server, model)
    policy = f()
    from emberbench.sim.simulator import Simulation

    policy(Simulation(suite.scenario(SCENARIO), 3).observation())
    log = model_server.log(model)
    assert [e["status"] for e in log] == [429, 200]
    assert log[1]["t"] - log[0]["t"] >= 0.95


def test_retry_cap_gives_one_line_error_naming_server_and_cause(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """A server that stays overloaded: 3 attempts, then a ModelError that names the server and the cause;
    the run stops and keeps what was done before."""
    model = f"greedy+503x*+{tag}"
    manifest = manifest_of(suite, [SCENARIO], [3])
    with pytest.raises(ModelError) as caught:
        run_evaluation(manifest, suite, factory(model_server, model, EMBERBENCH_MODEL_MAX_ATTEMPTS="3"), "m",
                       tmp_path / "r.json")
    message = str(caught.value)
    assert message.startswith(f"model '{model}' at {model_server.base_url}: no answer for step 1: gave up after 3 "
                              "attempts in ")
    assert message.endswith("; last failure: HTTP 503: overloaded") and "\n" not in message
    assert caught.value.server == model_server.base_url and caught.value.cause == "HTTP 503: overloaded"
    assert len(model_server.log(model)) == 3
    assert load_result(tmp_path / "r.json", suite).episodes == ()


def test_time_cap_ends_retries_before_a_long_retry_after(model_server, suite, tag) -> None:  # noqa: ANN001
    """A Retry-After longer than the time left is not waited for."""
    model = f"greedy+429x*+ra30+{tag}"
    start = time.monotonic()
    with pytest.raises(ModelError, match="the server asked for 30 s.*would pass the 2 s limit.*HTTP 429: rate limited"):
        play(suite, factory(model_server, model, EMBERBENCH_MODEL_MAX_SECONDS="2"))
    assert time.monotonic() - start < 2 and len(model_server.log(model)) == 1


@pytest.mark.parametrize(("fault", "cause"), [
    ("401x*", "HTTP 401: invalid api key"),
    ("malformedx1", "HTTP 200 with a body that is not a chat completion: malformed JSON"),
])
def test_refusals_are_not_retried(model_server, suite, tag, fault, cause) -> None:  # noqa: ANN001
    """A refused request or a body that is not a chat completion fails at once with a ModelError."""
    model = f"greedy+{fault}+{tag}"
    with pytest.raises(ModelError) as caught:
        play(suite, factory(model_server, model))
    assert str(caught.value).startswith(f"model '{model}' at {model_server.base_url}: step 1 failed: {cause}")
    assert "\n" not in str(caught.value) and len(model_server.log(model)) == 1


def test_server_that_is_not_there(suite, tag) -> None:  # noqa: ANN001
    """A refused connection is retried, then named."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ServerSettings.from_environment({"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                                                "EMBERBENCH_MODEL_MAX_ATTEMPTS": "2",
                                                "EMBERBENCH_MODEL_BACKOFF": "0.01"})
    with pytest.raises(ModelError, match=f"at http://127.0.0.1:{port}/v1: no answer for step 1: gave up after 2 "
                                         "attempts .*last failure: ConnectError"):
        play(suite, lambda: OpenAIChatFactory(f"greedy+{tag}", settings)())


@pytest.mark.parametrize(("kind", "message"), [
    ("prose", "action for step 1: model '{m}' replied with text that is not one JSON object: "
              "'Everyone should calmly walk north, I think.'"),
    ("list", "action for step 1: model '{m}' replied with a JSON list, not an object"),
    ("length", "action for step 1: model '{m}' replied with text that is not one JSON object (cut at the token "
               "limit)"),
    ("nocontent", "action for step 1: model '{m}' replied with no text content"),
    ("missing", "action for step 1: no move for person 'p006'"),
])
def test_unusable_replies_are_invalid_actions(model_server, suite, tmp_path, tag, kind, message) -> None:  # noqa: ANN001
    """An unparsable or incomplete reply is an invalid action: it stops the run like any invalid action,
    keeping the episodes completed before it (here: none), with a one-line message."""
    model = f"{kind}+{tag}"
    manifest = manifest_of(suite, [SCENARIO], [3])
    with pytest.raises(InvalidActionError) as caught:
        run_evaluation(manifest, suite, factory(model_server, model), "m", tmp_path / "r.json")
    assert str(caught.value).startswith(message.format(m=model)) and "\n" not in str(caught.value)
    assert len(model_server.log(model)) == 1  # the model's answer is not retried
    assert load_result(tmp_path / "r.json", suite).episodes == ()


def test_cache_makes_a_rerun_free_and_identical(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """With a store, a rerun of a removed run asks the server nothing and writes the same artifact byte for
    byte; another model id on the same store is answered from the cache too."""
    from emberbench.store import open_store
    from emberbench.runs.catalog import run_names
    from emberbench.runs.repair import remove_run

    store = open_store(tmp_path / "store", create=True)
    model = f"greedy+lat5+{tag}"
    spec = f"openai:{model}"
    manifest = manifest_of(suite, SMALL, [3, 11])
    first = run_evaluation(manifest, suite, factory(model_server, model, store), "m", tmp_path / "a.json",
                           store=store, policy_spec=spec)
    log = model_server.log(model)
    sent = len(log)
    steps = sum(len(e.record.actions) for e in load_result(tmp_path / "a.json", suite).episodes)
    # Each distinct request is sent once: steps that repeat an earlier observation are answered from the cache.
    assert 0 < sent <= steps and len({e["body"] for e in log}) == sent
    (only_run,) = run_names(store)
    remove_run(store, only_run, apply=True)
    again = run_evaluation(manifest, suite, factory(model_server, model, store), "m", tmp_path / "b.json",
                           store=store, policy_spec=spec)
    assert again.ran == len(manifest.episodes) and again.resumed == 0
    assert len(model_server.log(model)) == sent  # 100% of the requests avoided
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "a.json").read_bytes()
    assert again.result_digest == first.result_digest
    run_evaluation(manifest, suite, factory(model_server, model, store), "other", tmp_path / "c.json", store=store,
                   policy_spec=spec)
    assert len(model_server.log(model)) == sent
    assert record_digests(tmp_path / "c.json", suite) == record_digests(tmp_path / "a.json", suite)


def test_cache_entries_show_what_was_asked_and_answered(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """Each request's entry holds the canonical request and the server's exact body, and no key."""
    from emberbench.policies.served.cache import REF_PREFIX, read_entry
    from emberbench.store import open_store

    store = open_store(tmp_path / "store", create=True)
    model = f"greedy+{tag}"
    play(suite, factory(model_server, model, store))
    log = model_server.log(model)
    names = [n for n in store.refs.names() if n.startswith(REF_PREFIX)]
    assert len(names) == len(log)
    bodies = {e["body"] for e in log}
    for name in names:
        data = store.get(store.refs.get(name))
        assert b"test-key" not in data
        entry = read_entry(data, where=name)
        assert name.endswith("/" + entry["request_digest"]) and entry["server"] == model_server.base_url
        sent = {"model": model, "messages": entry["request"]["messages"], **entry["request"]["parameters"]}
        assert json.dumps(sent, sort_keys=True, separators=(",", ":")) in bodies
        assert json.loads(entry["response_body"])["choices"][0]["message"]["content"]


def test_cache_on_an_s3_store(model_server, suite, s3_locator, tag) -> None:  # noqa: ANN001
    """The cache is ordinary store content: on S3 too, a second episode asks nothing."""
    from emberbench.store import open_store

    store = open_store(s3_locator, create=True)
    model = f"greedy+{tag}"
    first, usage = play(suite, factory(model_server, model, store))
    second, again = play(suite, factory(model_server, model, store))
    assert first.canonical_bytes() == second.canonical_bytes()
    assert usage.cache_hits == 0 and again.cache_hits == again.steps == usage.requests == len(model_server.log(model))
    assert again.requests == 0


def test_accounting_matches_what_the_server_saw(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """Per-episode usage: requests, retries and tokens as the server counted and reported them, latency at
    least the server's delay; cache hits cost no request and no token."""
    from emberbench.store import open_store

    store = open_store(tmp_path / "store", create=True)
    model = f"greedy+lat20+503x1+{tag}"
    record, usage = play(suite, factory(model_server, model, store))
    log = model_server.log(model)
    answered = [e for e in log if e["status"] == 200]
    assert usage.steps == len(record.actions) == len(answered) and usage.cache_hits == 0
    assert usage.requests == len(log) == 2 * usage.steps and usage.retries == usage.steps
    assert usage.prompt_tokens == sum(e["usage"]["prompt_tokens"] for e in answered)
    assert usage.completion_tokens == sum(e["usage"]["completion_tokens"] for e in answered)
    assert usage.latency_ms >= 2 * 20 * usage.steps and usage.max_latency_ms >= 40
    assert usage.latency_ms >= usage.max_latency_ms
    _, cached = play(suite, factory(model_server, model, store))
    assert cached.cache_hits == cached.steps == usage.steps
    assert (cached.requests, cached.prompt_tokens, cached.completion_tokens, cached.latency_ms) == (0, 0, 0, 0)


def test_rate_limit_spaces_requests(model_server, suite, tag) -> None:  # noqa: ANN001
    """With at most 3 requests per 0.4 s, no 4 requests arrive within 0.4 s."""
    model = f"greedy+{tag}"
    settings = ServerSettings.from_environment(environ(model_server))
    gate = RequestGate(8, RateLimiter(3, 0.4))
    record, usage = play(suite, lambda: OpenAIChatFactory(model, settings, gate=gate)())
    times = [e["t"] for e in model_server.log(model)]
    assert len(times) >= 8
    assert all(times[i + 3] - times[i] >= 0.35 for i in range(len(times) - 3))


def test_concurrency_limit_holds_across_episodes(model_server, suite, tag) -> None:  # noqa: ANN001
    """Six episodes on six threads, at most two requests in flight: the server never sees a third."""
    model = f"greedy+lat150+{tag}"
    settings = ServerSettings.from_environment(environ(model_server))
    gate = RequestGate(2, RateLimiter(0))
    f = OpenAIChatFactory(model, settings, gate=gate)
    from emberbench.sim.simulator import Simulation

    def one(seed: int) -> None:
        f()(Simulation(suite.scenario(SCENARIO), seed).observation())

    threads = [threading.Thread(target=one, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times = sorted(e["t"] for e in model_server.log(model))
    assert len(times) == 6
    assert all(times[i + 2] - times[i] >= 0.12 for i in range(len(times) - 2))


def test_an_auditor_reads_every_step_from_the_cache(model_server, suite, tmp_path, tag) -> None:  # noqa: ANN001
    """From a result's records alone, every step's request is rebuilt and its cached answer is the move
    line the record holds."""
    from emberbench.records.served_audit import episode_exchanges
    from emberbench.policies.served.reply import parse_completion
    from emberbench.store import open_store

    store = open_store(tmp_path / "store", create=True)
    model = f"greedy+{tag}"
    manifest = manifest_of(suite, SMALL, [3])
    run_evaluation(manifest, suite, factory(model_server, model, store), "m", tmp_path / "r.json", store=store)
    chars = {"stay": ".", "N": "N", "E": "E", "S": "S", "W": "W"}
    checked = 0
    for episode in load_result(tmp_path / "r.json", suite).episodes:
        scenario = suite.scenario(episode.entry.scenario_id)
        exchanges = list(episode_exchanges(store, scenario, episode.record, model))
        assert len(exchanges) == len(episode.record.actions)
        for exchange, line in zip(exchanges, episode.record.actions):
            assert exchange.response_body is not None
            people = [p["id"] for p in json.loads(exchange.request.messages[1][1])["people"]]
            action = json.loads(parse_completion(exchange.response_body).content)
            assert "".join(chars[action[p]] for p in people) == line.replace("-", "")
            checked += 1
    assert checked == sum(len(e.record.actions) for e in load_result(tmp_path / "r.json", suite).episodes)
    other = list(episode_exchanges(store, scenario, episode.record, f"stay+{tag}"))
    assert {e.response_body for e in other} == {None}  # another model's requests are not in the cache
