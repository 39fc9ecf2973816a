"""The streaming reader against the whole-file loader: every corruption, the same message, the same first failure."""

from __future__ import annotations

import copy
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import emberbench.results.text as result_text
from emberbench.io.canonical import canonical_bytes, sha256_hex
from emberbench.errors import CanonicalFormError, ResultError
from emberbench.results.stream import read_episode, read_header, verify_artifact
from emberbench.evaluation.runner import run_evaluation
from tests.hypothesis_profiles import examples
from tests.run_support import small_manifest
from tests.unit.loader_reference import reference_load, reference_verdict

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory, suite):  # noqa: ANN001
    """A complete greedy artifact of six episodes (bytes and parsed object)."""
    manifest = small_manifest(suite, seeds=range(3), ids=SMALL)
    path = tmp_path_factory.mktemp("stream") / "greedy.json"
    run_evaluation(manifest, suite, "greedy", "greedy-v1", path)
    raw = path.read_bytes()
    return raw, json.loads(raw)


def _obj(fn):  # noqa: ANN001, ANN202
    """A corruption of the parsed object, saved in canonical form."""
    def go(raw: bytes, data: dict) -> bytes:
        d = copy.deepcopy(data)
        fn(d)
        return canonical_bytes(d) + b"\n"
    return go


def _text(fn):  # noqa: ANN001, ANN202
    """A corruption of the bytes."""
    return lambda raw, data: fn(raw)


def _redigest(d: dict, i: int) -> None:
    d["episodes"][i]["record_digest"] = sha256_hex(canonical_bytes(d["episodes"][i]["record"]))


def _action(d: dict, i: int) -> None:
    rec = d["episodes"][i]["record"]
    line = rec["actions"][0]
    k = next(k for k, ch in enumerate(line) if ch in "NESW")
    rec["actions"][0] = line[:k] + ("S" if line[k] != "S" else "N") + line[k + 1:]
    _redigest(d, i)


def _steps(d: dict, i: int) -> None:
    d["episodes"][i]["metrics"]["counts"]["steps"] += 1


def _suite_version(d: dict) -> None:
    d["manifest"]["suite_version"] = d["suite_version"] = "1.0.9"
    d["evaluation_manifest_hash"] = sha256_hex(canonical_bytes(d["manifest"]))


def _retag(d: dict) -> None:
    d["episodes"][0]["record"]["header"]["seed"] = 99
    _redigest(d, 0)


def _bomb(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _last_value(raw: bytes, value: bytes) -> bytes:
    """The artifact with the value of its last header member (suite_version) replaced."""
    return raw[:raw.rindex(b'"1.0.0"}')] + value + b"}\n"


NINES = b"9" * 5000


CORRUPTIONS = {
    # The JSON text: positions are the whole document's.
    "empty": _text(lambda r: b""),
    "whitespace only": _text(lambda r: b"  \n"),
    "garbage": _text(lambda r: b"{nope"),
    "top-level list": _text(lambda r: b"[1, 2]\n"),
    "top-level list, broken": _text(lambda r: b"[1,2,}\n"),
    "top-level string": _text(lambda r: b'"abc"'),
    "truncated early": _text(lambda r: r[:3000]),
    "truncated late": _text(lambda r: r[:-40]),
    "extra data": _text(lambda r: r + b"x"),
    "bad utf-8 early": _text(lambda r: r[:2500] + b"\xff" + r[2501:]),
    "bad utf-8 late": _text(lambda r: r[:-100] + b"\xff" + r[-99:]),
    "bad utf-8 after a syntax error": _text(lambda r: r[:2000] + b"!!" + r[2002:-100] + b"\xff" + r[-99:]),
    "nesting bomb in an episode": _text(lambda r: r.replace(b'{"index":1,', b'{"deep":' + _bomb(80) + b',"index":1,', 1)),
    "nesting bomb in the header": _text(lambda r: _last_value(r, _bomb(100))),
    "nesting 63 in the header": _text(lambda r: _last_value(r, _bomb(63))),
    "nesting 64 in the header": _text(lambda r: _last_value(r, _bomb(64))),
    "nesting 62 in an episode": _text(lambda r: r.replace(b'{"index":1,', b'{"deep":' + _bomb(61) + b',"index":1,', 1)),
    "nesting 63 in an episode": _text(lambda r: r.replace(b'{"index":1,', b'{"deep":' + _bomb(62) + b',"index":1,', 1)),
    "unclosed nesting": _text(lambda r: r[:2000] + b"[" * 100),
    "NaN": _text(lambda r: r.replace(b'"seed":0', b'"seed":NaN', 1)),
    "Infinity in the header": _text(lambda r: _last_value(r, b"Infinity")),
    "duplicate top-level key": _text(lambda r: r[:-2] + b',"model_id":"x"}\n'),
    "duplicate top-level key and a syntax error": _text(lambda r: r[:3000] + b"!!" + r[3002:-2] + b',"model_id":"x"}\n'),
    "duplicate episode key": _text(lambda r: r.replace(b'{"index":1,', b'{"index":1,"index":1,', 1)),
    "duplicate record key": _text(lambda r: r.replace(b'"steps":', b'"steps":1,"steps":', 1)),
    # Issue 22, defect 4: numbers too long for Python to convert.
    "episode index of 5000 digits": _text(lambda r: r.replace(b'"index":0', b'"index":' + NINES, 1)),
    "negative seed of 5000 digits": _text(lambda r: r.replace(b'"seed":0', b'"seed":-' + NINES, 1)),
    "manifest index of 5000 digits": _text(lambda r: r.replace(b'"manifest":{"episodes":[{"index":0',
                                                               b'"manifest":{"episodes":[{"index":' + NINES, 1)),
    "header value of 5000 digits": _text(lambda r: _last_value(r, NINES)),
    "float of 5000 digits": _text(lambda r: r.replace(b'"evacuated_rate":1.0', b'"evacuated_rate":' + NINES + b".0", 1)),
    # Issue 22, defect 3: what cannot be a result is refused where it is met; nothing after it outranks it.
    "unknown key first, then a syntax error": _text(lambda r: b'{"aaa":1,' + r[1:3000] + b"!!" + r[3002:]),
    "unknown key first, then bad utf-8": _text(lambda r: b'{"aaa":1,' + r[1:-100] + b"\xff" + r[-99:]),
    "unknown key holding a nesting bomb": _text(lambda r: r[:-2] + b',"z":' + _bomb(100) + b"}\n"),
    "duplicate key, then bad utf-8": _text(lambda r: r[:-2] + b',"model_id":"\xff"}\n'),
    "syntax error, then an unknown key": _text(lambda r: r[:3000] + b"!!" + r[3002:-2] + b',"z":1}\n'),
    "bad utf-8, then an unknown key": _text(lambda r: r[:2500] + b"\xff" + r[2501:-2] + b',"z":1}\n'),
    "top-level list, then bad utf-8": _text(lambda r: b"[\xff"),
    "key of 100 characters": _text(lambda r: r[:-2] + b',"' + b"k" * 100 + b'":1}\n'),
    "unclosed key of 100 characters": _text(lambda r: r[:-2] + b',"' + b"k" * 100),
    "unclosed short key": _text(lambda r: r[:-2] + b',"kk'),
    "key of 100 characters, then bad utf-8": _text(lambda r: r[:-2] + b',"' + b"k" * 100 + b"\xff"),
    # The header.
    "extra top-level key": _obj(lambda d: d.update(note=1)),
    "extra top-level key sorted first": _obj(lambda d: d.update(aaa=1)),
    "missing top-level key": _obj(lambda d: d.pop("suite_id")),
    "missing episodes": _obj(lambda d: d.pop("episodes")),
    "future result version": _obj(lambda d: d.update(result_version="2.0")),
    "bad model id": _obj(lambda d: d.update(model_id=" x")),
    "model id not a string": _obj(lambda d: d.update(model_id=5)),
    "manifest hash": _obj(lambda d: d.update(evaluation_manifest_hash="0" * 64)),
    "header differs": _obj(lambda d: d.update(metrics_version="1.1")),
    "embedded manifest invalid": _obj(lambda d: d["manifest"].update(manifest_version="7")),
    "embedded manifest not an object": _obj(lambda d: d.update(manifest=[])),
    "manifest vs suite": _obj(_suite_version),
    "episodes not a list": _obj(lambda d: d.update(episodes={"a": 1})),
    # Each episode's structure.
    "episode keys": _obj(lambda d: d["episodes"][0].pop("metrics")),
    "episode keys, last": _obj(lambda d: d["episodes"][-1].pop("metrics")),
    "episode not an object": _obj(lambda d: d["episodes"].insert(0, 5)),
    "index not in manifest": _obj(lambda d: d["episodes"][0].update(index=99)),
    "index a boolean": _obj(lambda d: d["episodes"][0].update(index=False)),
    "order": _obj(lambda d: d["episodes"].__setitem__(slice(0, 2), d["episodes"][1::-1])),
    "duplicate": _obj(lambda d: d["episodes"].insert(1, copy.deepcopy(d["episodes"][0]))),
    "entry seed": _obj(lambda d: d["episodes"][0].update(seed=5)),
    "entry scenario id": _obj(lambda d: d["episodes"][3].update(scenario_id="x")),
    "record malformed": _obj(lambda d: d["episodes"][2]["record"].pop("outcome")),
    "record header": _obj(_retag),
    "record digest": _obj(lambda d: d["episodes"][0].update(record_digest="a" * 64)),
    "record digest not hex": _obj(lambda d: d["episodes"][0].update(record_digest="A" * 64)),
    # Canonical form.
    "pretty printed": lambda r, d: json.dumps(d, indent=1, sort_keys=True).encode(),
    "keys unsorted": lambda r, d: json.dumps(d, indent=None).encode(),
    "trailing whitespace": _text(lambda r: r + b"  \n"),
    "no newline": _text(lambda r: r.rstrip(b"\n")),
    "byte order mark": _text(lambda r: b"\xef\xbb\xbf" + r),
    "UTF-16": _text(lambda r: r.decode().encode("utf-16")),
    "float not canonical": _text(lambda r: r.replace(b'"evacuated_rate":1.0', b'"evacuated_rate":1.00', 1)),
    "escape not canonical": _text(lambda r: r.replace(b'"greedy-v1"', b'"gr\\u0065edy-v1"', 1)),
    "space in the header": _text(lambda r: r.replace(b',"model_id":', b', "model_id":', 1)),
    "space in an episode": _text(lambda r: r.replace(b'{"index":3,', b'{"index": 3,', 1)),
    # Replay and stored metrics.
    "authentication": _obj(lambda d: _action(d, 0)),
    "authentication, late": _obj(lambda d: _action(d, 5)),
    "stored metrics": _obj(lambda d: _steps(d, 0)),
    "stored metrics, late": _obj(lambda d: _steps(d, 4)),
    # Several defects: the first by the loader's order wins, wherever it is.
    "replay early, structure late": _obj(lambda d: (_action(d, 1), d["episodes"][4].update(seed=77))),
    "metrics early, replay late": _obj(lambda d: (_steps(d, 1), _action(d, 4))),
    "two replays": _obj(lambda d: (_action(d, 4), _action(d, 2))),
    "two metrics": _obj(lambda d: (_steps(d, 4), _steps(d, 2))),
    "replay and header": _obj(lambda d: (_action(d, 2), d.update(metrics_version="1.1"))),
    "structure and header": _obj(lambda d: (d["episodes"][3].update(seed=77), d.update(model_id=" y"))),
    "pretty and replay": lambda r, d: json.dumps(json.loads(_obj(lambda x: _action(x, 2))(r, d)), indent=1).encode(),
    "pretty and structure": lambda r, d: json.dumps(json.loads(_obj(lambda x: x["episodes"][4].update(seed=77))(r, d)),
                                                    indent=1, sort_keys=True).encode(),
    "space in an episode and replay": lambda r, d: _obj(lambda x: _action(x, 4))(r, d).replace(
        b'{"index":1,', b'{"index": 1,', 1),
    "space in an episode and structure late": lambda r, d: _obj(lambda x: x["episodes"][5].update(seed=77))(r, d).replace(
        b'{"index":1,', b'{"index": 1,', 1),
    "syntax error late, structure early": lambda r, d: _obj(lambda x: x["episodes"][1].update(seed=77))(r, d)[:-30]
    + b"!!" + r[-28:],
}


@pytest.fixture(scope="module")
def cases(artifact, tmp_path_factory, suite):  # noqa: ANN001
    """Every corrupted file, with the whole-file loader's verdict on it."""
    raw, data = artifact
    folder = tmp_path_factory.mktemp("tamper")
    out = {}
    for name, corrupt in CORRUPTIONS.items():
        path = folder / (name.replace(" ", "-").replace(",", "") + ".json")
        path.write_bytes(corrupt(raw, data))
        out[name] = (path, reference_verdict(path, suite))
    return out


def _verdict(path, suite) -> str:  # noqa: ANN001
    try:
        return f"ok {verify_artifact(path, suite).digest}"
    except ResultError as exc:
        return str(exc)


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_streaming_reader_gives_the_loaders_verdict(cases, suite, name) -> None:  # noqa: ANN001
    """Each corruption the loader rejects is rejected by the streaming reader with exactly the same message."""
    path, expected = cases[name]
    assert not expected.startswith("ok "), f"{name} is not a corruption"
    assert _verdict(path, suite) == expected


@pytest.mark.parametrize("block", [7, 1000])
def test_block_boundaries_change_no_verdict(cases, suite, monkeypatch, block) -> None:  # noqa: ANN001
    """With tiny read blocks (values split anywhere) every verdict, positions included, stays the loader's."""
    monkeypatch.setattr(result_text, "BLOCK_BYTES", block)
    for name, (path, expected) in cases.items():
        assert _verdict(path, suite) == expected, name


def test_a_good_artifact_gives_its_digest_and_episodes(artifact, suite, tmp_path) -> None:  # noqa: ANN001
    """A valid artifact verifies to the digest of its bytes; the sink sees each episode once, in order."""
    raw, _ = artifact
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    seen = []
    done = verify_artifact(path, suite, sink=seen.append)
    assert done.digest == sha256_hex(raw) == reference_load(raw, suite, str(path))
    assert done.indices == tuple(range(6)) and done.complete and done.model_id == "greedy-v1"
    assert [e.index for e in seen] == list(done.indices)
    assert all(sha256_hex(e.record_bytes) == e.record_digest for e in seen)


def test_metric_out_of_range_names_the_file(artifact, suite, tmp_path) -> None:
    """Issue 12 defect 3: a metric written as 1e400 is refused with a message naming the file (was a bare error)."""
    raw, _ = artifact
    path = tmp_path / "inf.json"
    path.write_bytes(raw.replace(b'"mean_exposure":', b'"mean_exposure":1e400,"x":', 1))
    message = r"inf\.json: number 1e400 is out of range \(not a finite double\)"
    with pytest.raises(ResultError, match=message):
        reference_load(path.read_bytes(), suite, str(path))
    with pytest.raises(ResultError, match=message):
        verify_artifact(path, suite)


def test_an_integer_beyond_64_bits_is_refused_as_the_whole_file_parser_does(artifact, suite, tmp_path) -> None:
    """An integer past 2**64 - 1 in an episode gets the whole-file parser's range message, naming the file."""
    raw, _ = artifact
    path = tmp_path / "big-int.json"
    path.write_bytes(raw.replace(b'"seed":0', b'"seed":123456789012345678901234', 1))
    with pytest.raises(ResultError) as old:
        reference_load(path.read_bytes(), suite, str(path))
    assert "is out of range" in str(old.value)
    with pytest.raises(ResultError) as new:
        verify_artifact(path, suite)
    assert str(new.value) == str(old.value)


@settings(max_examples=examples(40))
@given(data=st.data())
def test_random_damage_gets_the_loaders_verdict(artifact, suite, tmp_path_factory, data) -> None:  # noqa: ANN001
    """Bytes deleted, inserted or replaced anywhere: the streaming verdict is the loader's (tiny blocks too)."""
    raw, _ = artifact
    start = data.draw(st.integers(0, len(raw) - 1))
    stop = data.draw(st.integers(start, min(len(raw), start + 12)))
    insert = data.draw(st.binary(max_size=4) | st.sampled_from([b",", b"]", b"}", b'"', b"{", b"[", b" ", b"\\"]))
    damaged = raw[:start] + insert + raw[stop:]
    path = tmp_path_factory.mktemp("damage") / "d.json"
    path.write_bytes(damaged)
    try:
        expected = f"ok {reference_load(damaged, suite, str(path))}"
    except ResultError as exc:
        expected = str(exc)
    except CanonicalFormError:
        return  # an out-of-range number: refused by the streaming reader with its own message (tested above)
    assert _verdict(path, suite) == expected
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(result_text, "BLOCK_BYTES", 5)
        assert _verdict(path, suite) == expected


def test_header_is_read_from_the_tail(artifact, suite, tmp_path) -> None:  # noqa: ANN001
    """read_header reads only the end of a canonical artifact (episode bytes are never read)."""
    raw, _ = artifact

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size: int | None = -1) -> bytes:
            out = super().read(size)
            Counting.read_bytes += len(out)
            return out

    head = read_header(Counting(raw), where="a")
    assert head.model_id == "greedy-v1" and len(head.manifest.episodes) == 6
    assert Counting.read_bytes < len(raw) - raw.index(b'],"evaluation_manifest_hash"') + 1024 * 1024


def test_header_of_a_broken_file_gets_the_full_verdict(cases) -> None:  # noqa: ANN001
    """A file whose tail is no header is parsed whole, so read_header reports the loader's first error."""
    path, expected = cases["duplicate top-level key and a syntax error"]
    with pytest.raises(ResultError) as info:
        read_header(path)
    assert str(info.value) == expected


def test_read_episode_replays_only_that_episode(artifact, suite, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """read_episode checks the whole file but replays one record, and returns it authenticated."""
    import emberbench.records.episode as episode

    raw, data = artifact
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    calls = []
    real = episode.replay
    monkeypatch.setattr(episode, "replay", lambda *a: calls.append(1) or real(*a))
    got = read_episode(path, 4, suite)
    assert len(calls) == 1
    assert got.index == 4 and got.record.to_dict() == data["episodes"][4]["record"]
    assert got.metrics_bytes == canonical_bytes(data["episodes"][4]["metrics"])
    with pytest.raises(ResultError, match="no episode with manifest index 9"):
        read_episode(path, 9, suite)


def test_a_stream_that_cannot_seek_is_spooled(artifact, suite) -> None:  # noqa: ANN001
    """A non-seekable binary stream (a pipe) verifies like the file."""
    raw, _ = artifact

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self.data = io.BytesIO(raw)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # noqa: ANN001
            chunk = self.data.read(len(buffer))
            buffer[:len(chunk)] = chunk
            return len(chunk)

    assert verify_artifact(Pipe(), suite, where="pipe").digest == sha256_hex(raw)


def test_a_header_that_changes_under_the_reader_is_refused(artifact, suite, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """If the header met at the end differs from the one read first, the artifact is refused, not trusted."""
    import emberbench.results.stream as stream

    raw, data = artifact
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    real = stream.read_tail_header

    def other_model(handle, where):  # noqa: ANN001, ANN202
        header = real(handle, where)
        return {**header, "model_id": "someone-else"}

    monkeypatch.setattr(stream, "read_tail_header", other_model)
    with pytest.raises(ResultError, match="changed while it was read"):
        verify_artifact(path, suite)


def test_artifact_stream_yields_verified_episodes_and_raises_at_the_first_failure(artifact, cases, suite, tmp_path) -> None:  # noqa: ANN001
    """Pulling episodes: the header at once, every episode once, `verified` only after the end."""
    from emberbench.results.stream import ArtifactStream, read_first_episode

    raw, _ = artifact
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    stream = ArtifactStream(path, suite)
    assert stream.model_id == "greedy-v1" and stream.verified is None
    assert [e.index for e in stream] == list(range(6))
    assert stream.verified is not None and stream.verified.digest == sha256_hex(raw)
    assert read_first_episode(path, suite).index == 0
    bad, expected = cases["stored metrics, late"]
    with pytest.raises(ResultError) as info:
        list(ArtifactStream(bad, suite))
    assert str(info.value) == expected


# -- issue 22, defect 3: bounded reading of files that are not results ---------------------------


class _CountingReads(io.BytesIO):
    """A seekable in-memory file that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        out = super().read(size)
        self.bytes_read += len(out)
        return out


BOMB = b"{}," * 3_000_000 + b"{}"


@pytest.mark.parametrize(("text", "message", "tail"), [
    (b'{"x":[' + BOMB + b"]}", "unknown top-level key 'x' at char 1", 0),
    (b'{"model_id":"m","model_id":[' + BOMB + b"]}", "duplicate key 'model_id'", 0),
    (b'{"' + BOMB + b'":1}', "a top-level key at char 1 is longer than 64 characters", 0),
    (b"[" + BOMB + b"]", "a result artifact must be a JSON object", 0),
    # It starts as a canonical artifact does: its end is first searched for a header (bytes only, not parsed).
    (b'{"episodes":[],"x":[' + BOMB + b"]}", "unknown top-level key 'x' at char 15", 1),
], ids=["unknown key", "repeated key", "long key", "not an object", "unknown key after episodes"])
def test_a_file_that_is_no_result_is_refused_after_one_block(suite, text: bytes, message: str, tail: int) -> None:
    """Issue 22 (defect 3): a 9 MB file whose first character or a top-level key cannot belong to a result is
    refused there, having parsed at most one block; it was read whole (twice) and parsed into millions of objects.
    (Since issue 27, defect 6, the refusal looks once more at what it read, no further, to tell whether the
    file is another EMBERBench file: at most twice one block.)"""
    handle = _CountingReads(text)
    with pytest.raises(ResultError) as info:
        verify_artifact(handle, suite, where="vb.json")
    assert str(info.value).startswith(f"vb.json: {message}"), info.value
    assert handle.bytes_read <= tail * len(text) + 2 * (result_text.BLOCK_BYTES + 64), handle.bytes_read


def test_a_value_bomb_under_a_known_key_costs_a_bounded_amount_of_memory(suite, tmp_path) -> None:
    """Issue 22 (defect 3): three million objects as the value of a header key are refused once their count passes
    the cap, before they are built: the peak stays far below what they cost (about 200 MB)."""
    import tracemalloc

    path = tmp_path / "bomb.json"
    path.write_bytes(b'{"episodes":[],"evaluation_manifest_hash":[' + b"{}," * 3_000_000 + b"{}]}")
    tracemalloc.start()
    try:
        with pytest.raises(ResultError) as info:
            verify_artifact(path, suite)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"holds more than {result_text.HEADER_CAP.values} values" in str(info.value)
    assert peak < 32 << 20, f"peak {peak >> 20} MiB"


def test_the_value_cap_counts_only_the_value_not_the_text_read_after_it(artifact, suite, tmp_path,
                                                                        monkeypatch) -> None:  # noqa: ANN001
    """Every episode is counted against a cap equal to the largest episode's count: the artifact verifies,
    although the text read past each episode holds many more values; one value less and the largest episode is
    refused, naming its position."""
    from emberbench.io.input_policy import leading_value_count

    raw, data = artifact
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    texts = [canonical_bytes(e) for e in data["episodes"]]
    counts = [leading_value_count(t)[0] for t in texts]
    largest = max(counts)
    monkeypatch.setattr(result_text, "BLOCK_BYTES", 1 << 16)
    monkeypatch.setattr(result_text, "EPISODE_CAP", result_text.ValueCap(1 << 26, largest))
    assert verify_artifact(path, suite).digest == sha256_hex(raw)
    monkeypatch.setattr(result_text, "EPISODE_CAP", result_text.ValueCap(1 << 26, largest - 1))
    with pytest.raises(ResultError, match=f"a single JSON value at char {raw.index(texts[counts.index(largest)])} "
                                          f"holds more than {largest - 1} values"):
        verify_artifact(path, suite)


def test_episodes_nobody_reads_are_parsed_many_at_a_time(suite, tmp_path, monkeypatch) -> None:
    """Once the verdict is known to be a structural one, the rest of the episode list is checked in bulk, with
    the same verdict as element by element (a JSON error late in the list still outranks it)."""
    body = b'{"episodes":[' + b"{}," * 200_000
    late_error = body + b'{"a":1,"a":2}]}'
    fine = body + b"{}]}"
    for text, expected in ((late_error, "duplicate key 'a'"), (fine, "top-level keys differ")):
        path = tmp_path / "e.json"
        path.write_bytes(text)
        with pytest.raises(ResultError, match=expected):
            verify_artifact(path, suite)


def test_a_number_too_long_to_convert_is_measured_whole_across_blocks(suite, tmp_path, monkeypatch) -> None:
    """A 5,000-digit integer cut by the end of a block (more than 4,300 digits of it read) is reported with its
    whole length, as the whole-file parse reports it, not with the length of the part read."""
    path = tmp_path / "n.json"
    text = b'{"episodes":[[' + NINES + b"]]}"
    path.write_bytes(text)
    monkeypatch.setattr(result_text, "BLOCK_BYTES", 4500)
    with pytest.raises(ResultError) as old:
        reference_load(text, suite, str(path))
    with pytest.raises(ResultError) as new:
        verify_artifact(path, suite)
    assert str(new.value) == str(old.value)
    assert "(5000 characters) is out of range" in str(new.value)
