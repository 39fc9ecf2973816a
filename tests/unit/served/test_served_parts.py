"""Served models, the parts that need no server: prompt, request, reply parsing, retry policy, limits,
usage, settings, the cache entry format and the errors."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from emberbench.io.canonical import canonical_bytes, sha256_hex
from emberbench.errors import InvalidActionError, ModelCacheError, ModelError, PolicyError
from emberbench.policies.served.cache import ResponseCache, entry_bytes, read_entry, ref_name
from emberbench.policies.served.limits import RateLimiter, RequestGate
from emberbench.policies.served.openai_chat import ServerSettings
from emberbench.policies.served.prompt import INSTRUCTIONS, PARAMETERS, PROMPT_VERSION, render_messages
from emberbench.policies.served.reply import Completion, EnvelopeError, parse_action, parse_completion
from emberbench.policies.served.request import ChatRequest
from emberbench.policies.served.retry import GaveUp, RetryPolicy, Transient, call_with_retries, parse_retry_after
from emberbench.policies.served.usage import ModelUsage, episode_usage
from emberbench.sim.simulator import Simulation
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"

PINNED_PROMPTS = {"1": "456a28ab52b9cf0c5ccb24263cc10e51450547498762e637afa8dfb429b3cec8"}
"""SHA-256 of (instructions, parameters) for each prompt version: a changed prompt needs a new version."""


def _first_observation(suite):  # noqa: ANN001, ANN202
    return Simulation(suite.scenario("v1-pub-01-single-exit-sparse"), 0).observation()


def test_prompt_is_the_instructions_and_the_observation_json_only(suite) -> None:  # noqa: ANN001
    """The messages are the fixed instructions, then exactly the observation's canonical JSON."""
    obs = _first_observation(suite)
    messages = render_messages(obs)
    assert messages == [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": obs.to_json()}]
    assert INSTRUCTIONS.startswith(f"EMBERBench evacuation policy, prompt version {PROMPT_VERSION}.")
    assert PARAMETERS["temperature"] == 0 and isinstance(PARAMETERS["seed"], int)


def test_prompt_text_is_pinned_to_its_version() -> None:
    """Changing the instructions or the parameters without a new PROMPT_VERSION fails here."""
    assert sha256_hex(canonical_bytes([INSTRUCTIONS, PARAMETERS])) == PINNED_PROMPTS[PROMPT_VERSION]


def test_request_key_and_body_are_functions_of_the_canonical_request(suite) -> None:  # noqa: ANN001
    """The cache key hashes model, messages, parameters and prompt version; the body carries the same values."""
    obs = _first_observation(suite)
    request = ChatRequest.build("m", render_messages(obs), PARAMETERS, PROMPT_VERSION)
    assert request.digest == sha256_hex(canonical_bytes(request.to_dict()))
    assert set(request.to_dict()) == {"model", "messages", "parameters", "prompt_version"}
    body = json.loads(request.body())
    assert body == {"model": "m", "messages": render_messages(obs), **PARAMETERS}
    for other in (ChatRequest.build("n", render_messages(obs), PARAMETERS, PROMPT_VERSION),
                  ChatRequest.build("m", render_messages(obs), {**PARAMETERS, "seed": 1}, PROMPT_VERSION),
                  ChatRequest.build("m", render_messages(obs), PARAMETERS, "0")):
        assert other.digest != request.digest


def _completion(content: str | None, finish: str = "stop") -> Completion:
    return Completion(content, finish, 0, 0)


@pytest.mark.parametrize(("content", "action"), [
    ('{"a":"N","b":"stay"}', {"a": "N", "b": "stay"}),
    ('  \n{"a": "N"}\n ', {"a": "N"}),
    ('```json\n{"a": "W"}\n```', {"a": "W"}),
    ('```\n{"a": "E"}\n```', {"a": "E"}),
    ('{"a": "X"}', {"a": "X"}),  # an unknown move is the action validator's to refuse, as for every policy
])
def test_reply_parser_accepts_one_json_object(content, action) -> None:  # noqa: ANN001
    """The reply format: one JSON object, alone or in one code fence."""
    assert parse_action(_completion(content), 0, "model 'm'") == action


@pytest.mark.parametrize(("content", "finish", "message"), [
    (None, "stop", "action for step 3: model 'm' replied with no text content"),
    ("Go north.", "stop", "action for step 3: model 'm' replied with text that is not one JSON object: 'Go north.'"),
    ('["a"]', "stop", "action for step 3: model 'm' replied with a JSON list, not an object"),
    ('{"a": "N"', "length", "not one JSON object (cut at the token limit)"),
    ('{"a": "N", "a": "S"}', "stop", "duplicate key 'a'"),
    ('{"a": NaN}', "stop", "JSON constant NaN is not allowed"),
    ('Sure! {"a": "N"}', "stop", "not one JSON object"),
    ('```json\n{"a": "N"}\n```\nHope this helps', "stop", "not one JSON object"),
    ('{"a": "N"}\n{"b": "S"}', "stop", "not one JSON object"),
])
def test_reply_parser_turns_anything_else_into_an_invalid_action(content, finish, message) -> None:  # noqa: ANN001
    """An unparsable reply is an InvalidActionError naming the step, as for any invalid action; never a crash."""
    with pytest.raises(InvalidActionError) as caught:
        parse_action(_completion(content, finish), 2, "model 'm'")
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("body", "message"), [
    (b"not json", "malformed JSON"),
    (b'{"choices": []}', "without choices[0]"),
    (b'{"choices": [{"text": "x"}]}', "without choices[0].message"),
    (b'{"choices": [{"message": {"content": 3}}]}', "is a int, not a string"),
    (b'[1]', "without choices[0]"),
])
def test_envelope_errors(body, message) -> None:  # noqa: ANN001
    """A body that is not a chat completion is the server's fault (EnvelopeError), not the model's."""
    with pytest.raises(EnvelopeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_completion(body)


def test_envelope_reads_content_finish_and_usage() -> None:
    """Content, finish reason and token counts are read; missing or odd usage counts as 0."""
    body = json.dumps({"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 7, "completion_tokens": 2}})
    assert parse_completion(body) == Completion("{}", "stop", 7, 2)
    body = json.dumps({"choices": [{"message": {"content": None}}], "usage": {"prompt_tokens": -1}})
    assert parse_completion(body) == Completion(None, None, 0, 0)


class FakeTime:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _flaky(failures: list[Transient]):  # noqa: ANN202
    calls = []

    def attempt() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return "ok"

    return attempt, calls


def test_retry_backs_off_with_jitter_and_honours_retry_after() -> None:
    """Waits are jittered within the doubling bound, never shorter than Retry-After; then the answer."""
    t = FakeTime()
    attempt, calls = _flaky([Transient("HTTP 503"), Transient("HTTP 429", retry_after=7.5), Transient("x")])
    policy = RetryPolicy(max_attempts=5, max_seconds=100, first_backoff=1.0, max_backoff=3.0)
    assert call_with_retries(attempt, policy, rng=random.Random(1), sleep=t.sleep, clock=t.clock) == "ok"
    assert len(calls) == 4
    assert 0 <= t.sleeps[0] <= 1.0 and t.sleeps[1] >= 7.5 and 0 <= t.sleeps[2] <= 3.0


def test_jitter_changes_only_timing() -> None:
    """Two generators give different waits and the same answer."""
    answers, waits = [], []
    for seed in (1, 2):
        t = FakeTime()
        attempt, _ = _flaky([Transient("HTTP 503"), Transient("HTTP 503")])
        answers.append(call_with_retries(attempt, RetryPolicy(), rng=random.Random(seed), sleep=t.sleep,
                                         clock=t.clock))
        waits.append(t.sleeps)
    assert answers == ["ok", "ok"] and waits[0] != waits[1]


def test_retry_caps_attempts_and_total_time() -> None:
    """The attempt cap and the time cap both end the retries, naming the last failure."""
    t = FakeTime()
    attempt, calls = _flaky([Transient("HTTP 503: overloaded")] * 10)
    with pytest.raises(GaveUp) as caught:
        call_with_retries(attempt, RetryPolicy(max_attempts=3), sleep=t.sleep, clock=t.clock)
    assert len(calls) == 3 and caught.value.cause == "HTTP 503: overloaded"
    assert str(caught.value).startswith("gave up after 3 attempts in ")
    t = FakeTime()
    attempt, calls = _flaky([Transient("HTTP 429", retry_after=50.0)] * 10)
    with pytest.raises(GaveUp, match="the server asked for 50 s.*would pass the 10 s limit"):
        call_with_retries(attempt, RetryPolicy(max_attempts=9, max_seconds=10), sleep=t.sleep, clock=t.clock)
    assert len(calls) == 1 and t.sleeps == []


def test_non_transient_errors_are_not_retried() -> None:
    """Anything but Transient propagates at once."""
    calls = []

    def attempt() -> None:
        calls.append(1)
        raise ValueError("no")

    with pytest.raises(ValueError):
        call_with_retries(attempt, RetryPolicy(), sleep=lambda s: None)
    assert calls == [1]


@pytest.mark.parametrize(("headers", "seconds"), [
    ({}, None),
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "0.25"}, 0.25),
    ({"retry-after-ms": "40", "retry-after": "9"}, 0.04),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "-1"}, None),
    ({"retry-after": "Thu, 01 Jan 1970 00:00:10 GMT"}, 5.0),
])
def test_retry_after_forms(headers, seconds) -> None:  # noqa: ANN001
    """Retry-After in seconds or as an HTTP date, and retry-after-ms; anything unreadable is ignored."""
    assert parse_retry_after(headers, now=5.0) == seconds


def test_rate_limiter_allows_n_starts_per_window() -> None:
    """At most 3 starts in any 1-second window; the fourth waits for the first to leave the window."""
    t = FakeTime()
    limiter = RateLimiter(3, 1.0, clock=t.clock, sleep=t.sleep)
    starts = []
    for _ in range(7):
        limiter.acquire()
        starts.append(t.now)
    assert starts == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0]
    unlimited = RateLimiter(0, 1.0, clock=t.clock, sleep=t.sleep)
    assert [unlimited.acquire() for _ in range(100)] == [0.0] * 100


def test_gate_limits_requests_in_flight() -> None:
    """No more than `concurrency` holders of a slot at once."""
    import threading
    import time

    gate = RequestGate(2, RateLimiter(0))
    inside, peak, lock = [0], [0], threading.Lock()

    def work() -> None:
        with gate.slot():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.05)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] == 2


def test_usage_sums_and_round_trips() -> None:
    """Usage adds up field by field (the slowest answer is the larger one) and round-trips as JSON."""
    a = ModelUsage(steps=2, requests=3, retries=1, prompt_tokens=10, completion_tokens=4, latency_ms=30,
                   max_latency_ms=20)
    b = ModelUsage(steps=1, cache_hits=1, latency_ms=0)
    total = a + b
    assert total.steps == 3 and total.cache_hits == 1 and total.latency_ms == 30 and total.max_latency_ms == 20
    assert ModelUsage.from_dict(json.loads(json.dumps(total.to_dict()))) == total
    with pytest.raises(ValueError):
        ModelUsage.from_dict({"steps": 1})
    with pytest.raises(ValueError):
        ModelUsage(steps=-1)

    class Reports:
        def usage(self) -> ModelUsage:
            return a

    assert episode_usage(Reports()) == a and episode_usage(object()) is None


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("EMBERBENCH_MODEL_TIMEOUT", "0", "EMBERBENCH_MODEL_TIMEOUT='0': must be a number > 0"),
    ("EMBERBENCH_MODEL_TIMEOUT", "nan", "must be a number > 0"),
    ("EMBERBENCH_MODEL_MAX_ATTEMPTS", "2.5", "EMBERBENCH_MODEL_MAX_ATTEMPTS='2.5': must be an integer > 0"),
    ("EMBERBENCH_MODEL_CONCURRENCY", "0", "must be an integer > 0"),
    ("EMBERBENCH_MODEL_RPM", "-3", "EMBERBENCH_MODEL_RPM='-3': must be an integer >= 0"),
])
def test_settings_refuse_bad_environment_values(variable, value, message) -> None:  # noqa: ANN001
    """A bad environment value is a PolicyError naming the variable, at resolve time."""
    with pytest.raises(PolicyError, match=message.replace("(", r"\(")):
        ServerSettings.from_environment({variable: value})


def test_settings_defaults_and_key_hidden() -> None:
    """Unset or empty values take the defaults; the key never shows in the settings' repr."""
    s = ServerSettings.from_environment({"OPENAI_API_KEY": "sk-secret", "OPENAI_BASE_URL": "", "EMBERBENCH_MODEL_RPM": ""})
    assert s.base_url == "https://api.openai.com/v1" and s.per_minute == 0 and s.concurrency == 8
    assert "sk-secret" not in repr(s)


def test_bad_specs_are_policy_errors() -> None:
    """An empty model name or a base URL that is not http(s) is refused when the spec is resolved."""
    from emberbench.policies.context import PolicyContext
    from emberbench.policies.spec import resolve_policy

    with pytest.raises(PolicyError, match="the model name after 'openai:' must be"):
        resolve_policy("openai:")
    with pytest.raises(PolicyError, match="OPENAI_BASE_URL: the base URL must be an http:// or https:// URL"):
        resolve_policy("openai:m", context=PolicyContext(environ={"OPENAI_BASE_URL": "ftp://x/v1"}))


def test_errors_pickle_with_their_data() -> None:
    """ModelError keeps its server and cause across processes (Ray workers); ModelCacheError pickles."""
    error = ModelError("model 'm' at http://h/v1: boom", server="http://h/v1", cause="HTTP 503")
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.server, again.cause) == (str(error), "http://h/v1", "HTTP 503")
    assert isinstance(again, PolicyError)
    assert str(pickle.loads(pickle.dumps(ModelCacheError("bad entry")))) == "bad entry"


def test_golden_cache_entry_reads_and_future_version_is_refused() -> None:
    """The golden entry is what entry_bytes writes today; an entry of a newer version is refused."""
    data = (GOLDEN / "model-cache-entry-1.0.json").read_bytes().rstrip(b"\n")
    entry = read_entry(data, where="golden")
    request = ChatRequest.build(entry["request"]["model"], entry["request"]["messages"],
                                entry["request"]["parameters"], entry["request"]["prompt_version"])
    assert entry_bytes(request, entry["response_body"], entry["server"]) == data
    with pytest.raises(ModelCacheError, match="unsupported model_cache_entry '2.0'"):
        read_entry((GOLDEN / "model-cache-entry-future.json").read_bytes().rstrip(b"\n"), where="future")


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.update(request_digest="0" * 64), "request_digest is not the SHA-256 of its request"),
    (lambda e: e.update(extra=1), r"unknown key\(s\) \['extra'\]"),
    (lambda e: e.pop("server"), r"missing key\(s\) \['server'\]"),
    (lambda e: e.update(response_body=3), "must be strings"),
])
def test_damaged_cache_entries_are_refused(change, message) -> None:  # noqa: ANN001
    """The reader checks keys, types and that the digest is the request's."""
    request = ChatRequest.build("m", [{"role": "user", "content": "{}"}], PARAMETERS, PROMPT_VERSION)
    entry = json.loads(entry_bytes(request, "{}", "http://h/v1"))
    change(entry)
    with pytest.raises(ModelCacheError, match=message):
        read_entry(canonical_bytes(entry), where="x")
    with pytest.raises(ModelCacheError, match="not in canonical JSON form"):
        read_entry(entry_bytes(request, "{}", "http://h/v1").replace(b",", b", ", 1), where="x")


def test_first_answer_filed_wins(tmp_path) -> None:  # noqa: ANN001
    """Two writers filing answers to one request: both get the first one, and lookup returns it."""
    from emberbench.store import open_store

    store = open_store(tmp_path / "store", create=True)
    request = ChatRequest.build("m", [{"role": "user", "content": "{}"}], PARAMETERS, PROMPT_VERSION)
    a, b = ResponseCache(store), ResponseCache(store)
    assert a.lookup(request) is None
    first = a.save(request, "first", "http://h/v1")
    second = b.save(request, "second", "http://h/v1")
    assert first.response_body == second.response_body == "first"
    assert b.lookup(request).response_body == "first"
    assert store.refs.get(ref_name(request.digest)) == first.entry_key
    assert first.entry_key in {k for _, k in store.refs.items()}  # a ref: gc keeps it


def test_cache_entry_for_another_request_is_refused(tmp_path) -> None:  # noqa: ANN001
    """A ref that names an entry of another request is refused, never used as an answer."""
    from emberbench.store import open_store

    store = open_store(tmp_path / "store", create=True)
    one = ChatRequest.build("m", [{"role": "user", "content": "1"}], PARAMETERS, PROMPT_VERSION)
    two = ChatRequest.build("m", [{"role": "user", "content": "2"}], PARAMETERS, PROMPT_VERSION)
    filed = ResponseCache(store).save(one, "x", "http://h/v1")
    store.refs.set(ref_name(two.digest), filed.entry_key)
    with pytest.raises(ModelCacheError, match=f"holds request {one.digest}, not {two.digest}"):
        ResponseCache(store).lookup(two)
