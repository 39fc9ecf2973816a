"""The run catalog (`emberbench runs ...`): listing, short ids, show, verify, export, on a local and an S3 store."""

from __future__ import annotations

import json

import pytest
from emberbench.runs.catalog import fit, format_row, iter_catalog, resolve_run, short_id_length
from emberbench.errors import StoreUsageError
from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.run_support import invoke, small_manifest, tamper_metric
from tests.schema_check import registry_validator

H = "0123456789abcdef" * 4


@pytest.mark.parametrize(("ids", "minimum", "expected"), [
    ([], 8, 8),
    (["run-" + H], 8, 8),
    (["run-" + H, "run-" + "f" + H[1:]], 8, 8),
    (["run-" + H, "run-" + H[:9] + "f" + H[10:]], 8, 10),
    (["run-" + H, "run-" + H[:63] + "0"], 4, 64),
])
def test_short_id_length_tells_every_run_apart(ids, minimum, expected) -> None:  # noqa: ANN001
    """The display length is the minimum, or one more than the longest shared prefix."""
    assert short_id_length(ids, minimum) == expected


def test_short_id_length_agrees_with_comparing_every_pair() -> None:
    """Many ids in clusters sharing 6 to 12 digits: the length is one more than the longest prefix any two share."""
    import hashlib
    import os

    ids = []
    for i in range(300):
        digest = hashlib.sha256(str(i).encode()).hexdigest()
        shared = 6 + i % 7
        ids.append("run-" + H[:shared] + digest[shared:])  # every id shares `shared` digits with H
    longest = max(len(os.path.commonprefix([a[4:], b[4:]])) for a in ids for b in ids if a != b)
    assert short_id_length(ids) == longest + 1 > 8
    assert short_id_length(ids[:1]) == 8


def test_a_row_is_laid_out_as_each_cell_fits_its_column() -> None:
    """Cells that fit are padded, a cell one column too long is cut with ~ (a suite from its end), and wide
    characters count two: the line is the cells fitted one by one, whatever path lays it out."""
    from emberbench.evaluation.run_info import RunInfo
    from emberbench.runs.catalog import COLUMNS, CatalogRow
    from emberbench.store import journal_name

    def line(model: str, policy: str, suite: str) -> str:
        info = RunInfo(run=journal_name("ab" * 32, model), model_id=model, policy=policy, manifest_hash="ab" * 32,
                       suite_id=suite, suite_version="1", suite_hash="cd" * 32, emberbench_version="0.2.0",
                       python_version="3.11.7", ray_version=None, host="h", user="u",
                       started="2026-01-02T12:00:00Z", ended=None, episodes_done=12, episodes_scheduled=240,
                       state="running")
        return format_row(CatalogRow(info.run, info, None), 8)

    def expected(model: str, policy: str, suite: str, run: str) -> str:
        cells = [run[4:12], model, policy, suite, "12/240", "running", "2026-01-02"]
        widths = [8] + [width for _, width in COLUMNS[1:]]
        return " ".join(fit(c, w, keep_end=i == 3) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    for model, policy, suite in [("m" * 14, "p" * 10, "s" * 12), ("m" * 15, "p" * 10, "s" * 12),
                                 ("m", "p" * 11, "x-" * 7), ("模型" * 4, "greedy", "v1-public"),
                                 ("e\u0301t\u00e9-model", "greedy", "v1-public")]:
        run = journal_name("ab" * 32, model)
        assert line(model, policy, suite) == expected(model, policy, suite, run), (model, policy, suite)
    assert line("m" * 15, "g", "s").split()[1] == "m" * 13 + "~"


@pytest.mark.parametrize(("text", "columns", "keep_end", "expected"), [
    ("alpha", 8, False, "alpha   "),
    ("emberbench-v1-public", 12, False, "emberbench-~"),
    ("emberbench-v1-public", 12, True, "~h-v1-public"),
    ("模型模型模型", 7, False, "模型模~"),
    ("模型模型模型", 8, False, "模型模~ "),
    ("e\u0301t\u00e9", 4, False, "e\u0301t\u00e9 "),
])
def test_fit_counts_terminal_columns(text, columns, keep_end, expected) -> None:  # noqa: ANN001
    """Cells are cut by terminal width (wide characters count two, combining marks none)."""
    assert fit(text, columns, keep_end=keep_end) == expected


def test_ls_shows_the_suite_without_the_shipped_prefix(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 27 (defect 8): `runs ls` cut every public-suite run's suite to `~h-v1-public`; the shipped suites'
    common prefix `emberbench-` is left out, so the column reads `v1-public` whole."""
    store = open_store(tmp_path / "s")
    run_evaluation(small_manifest(suite, seeds=(0,)), suite, "greedy", "g", tmp_path / "g.json", store=store)
    listing = _cli("ls", "--store", str(tmp_path / "s"))
    row = listing.output.splitlines()[1]
    assert row.split()[3] == "v1-public" and "~" not in row, listing.output


@pytest.fixture(params=["local", "s3"])
def two_runs(request, tmp_path, suite):  # noqa: ANN001
    """A store holding two complete runs (greedy as 'alpha', random under a long model id); their outputs."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    manifest = small_manifest(suite)
    outs = {}
    for policy, model in (("greedy", "alpha"), ("random", "a-very-long-model-id-" + "x" * 40)):
        outs[model] = tmp_path / f"{policy}.json"
        run_evaluation(manifest, suite, policy, model, outs[model], store=store)
    yield request.param, locator, store, outs
    store.close()


def _cli(*args: str):  # noqa: ANN202
    return invoke("runs", *args)


def test_ls_lines_fit_80_columns_and_json_matches_its_schema(two_runs) -> None:  # noqa: ANN001
    """`runs ls`: a header and one line per run within 80 columns; --json has full ids and validates."""
    _, locator, store, outs = two_runs
    listing = _cli("ls", "--store", locator)
    assert listing.exit_code == 0, listing.output
    lines = listing.output.splitlines()
    assert len(lines) == 3 and lines[0].startswith("ID ")
    assert all(len(line) <= 80 for line in lines), lines
    assert "alpha" in lines[1] + lines[2] and "complete" in lines[1] and "4/4" in lines[2]
    document = json.loads(_cli("ls", "--store", locator, "--json").output)
    registry_validator("run-catalog").validate(document)
    assert document["store"] == store.locator
    assert sorted(r["info"]["model_id"] for r in document["runs"]) == sorted(outs)
    assert all(len(r["id"]) == 64 and r["run"] == "run-" + r["id"] for r in document["runs"])


def test_filters_select_runs(two_runs) -> None:  # noqa: ANN001
    """--model, --manifest (a hash prefix) and --state keep only the matching runs."""
    _, _, store, _ = two_runs
    assert [r.info.model_id for r in iter_catalog(store, model="alpha")] == ["alpha"]
    manifest_hash = next(iter_catalog(store)).info.manifest_hash
    assert len(list(iter_catalog(store, manifest=manifest_hash[:6]))) == 2
    assert list(iter_catalog(store, manifest="0" * 64 if manifest_hash[0] != "0" else "f" * 64)) == []
    assert list(iter_catalog(store, state="running")) == []
    with pytest.raises(StoreUsageError, match="state must be one of"):
        list(iter_catalog(store, state="done"))


def test_damaged_run_info_is_listed_and_the_listing_goes_on(two_runs) -> None:  # noqa: ANN001
    """A run-info that is not JSON gives a `damaged` line (exit 1); the other run is still listed."""
    _, locator, store, _ = two_runs
    first = sorted(store.journal_names())[0]
    store.refs.set(run_info_ref(first), store.put(b"not json at all"))
    listing = _cli("ls", "--store", locator)
    assert listing.exit_code == 1 and listing.stderr.startswith("error: 1 run(s) listed as damaged")
    lines = listing.stdout.splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[1].startswith(first[4:12] + " damaged: ") and "complete" in lines[2]
    document = json.loads(_cli("ls", "--store", locator, "--json").stdout)
    assert document["runs"][0]["info"] is None and "not valid JSON" in document["runs"][0]["damage"]


def test_short_ids_resolve_uniquely_and_ambiguity_lists_candidates(two_runs) -> None:  # noqa: ANN001
    """A unique prefix names a run; a shared prefix is refused in one line naming the candidates."""
    _, locator, store, _ = two_runs
    name = sorted(store.journal_names())[0]
    assert resolve_run(store, name[4:8]) == name and resolve_run(store, name) == name
    key = store.put(b"{}")
    twins = [f"run-abcd{c * 60}" for c in "01"]
    for twin in twins:
        store.refs.set(run_info_ref(twin), key)
    with pytest.raises(StoreUsageError, match=r"run id abcd is ambiguous: it starts 2 runs \(abcd0, abcd1\)"):
        resolve_run(store, "abcd")
    assert resolve_run(store, "abcd1") == twins[1]
    for bad, code, message in (("abc", 2, "at least 4 hex digits"), ("ABCD", 2, "lowercase hex"),
                               ("eeee", 1, "no run")):
        result = _cli("show", bad, "--store", locator)
        assert result.exit_code == code and message in result.output and len(result.output.splitlines()) == 1


def test_show_verify_and_export(two_runs, tmp_path) -> None:  # noqa: ANN001
    """show names the result ref; verify records `ok`; export writes the artifact byte for byte (no overwrite)."""
    _, locator, store, outs = two_runs
    alpha = next(r for r in iter_catalog(store) if r.info.model_id == "alpha")
    shown = _cli("show", alpha.hex_id[:6], "--store", locator).output
    assert f"result ref: results/{alpha.run} -> {alpha.info.result}" in shown and "verification: never" in shown
    checked = _cli("verify", alpha.hex_id[:6], "--store", locator)
    assert checked.exit_code == 0 and checked.output.startswith("ok: ") and "4/4 episodes" in checked.output
    info = read_run_info(store, alpha.run)
    assert info.verification.verdict == "ok" and info.state == "complete"
    assert "verification: ok at " in _cli("show", alpha.hex_id[:6], "--store", locator).output
    out = tmp_path / "exported.json"
    assert _cli("export", alpha.hex_id[:6], "--out", out, "--store", locator).exit_code == 0
    assert out.read_bytes() == outs["alpha"].read_bytes()
    again = _cli("export", alpha.hex_id[:6], "--out", out, "--store", locator)
    assert again.exit_code == 1 and "use --force" in again.output
    assert _cli("export", alpha.hex_id[:6], "--out", out, "--store", locator, "--force").exit_code == 0


def _overwrite_object(backend_name: str, store, key: str, data: bytes) -> None:  # noqa: ANN001
    """Replace the stored frame of ``key`` with ``data`` behind the store's back (file, or S3 put)."""
    if backend_name == "local":
        path = store.layout.object_path(key)
        path.unlink()
        path.write_bytes(data)
    else:
        b = store.backend
        b.client.put_object(Bucket=b.bucket, Key=f"{b.prefix}objects/{key[:2]}/{key[2:]}", Body=data)


def _frame(backend_name: str, store, key: str) -> bytes:  # noqa: ANN001
    if backend_name == "local":
        return store.layout.object_path(key).read_bytes()
    b = store.backend
    return b.client.get_object(Bucket=b.bucket, Key=f"{b.prefix}objects/{key[:2]}/{key[2:]}")["Body"].read()


def test_verify_fails_on_a_flipped_bit_and_on_a_result_that_does_not_replay(two_runs, tmp_path) -> None:  # noqa: ANN001
    """A corrupt stored result, and a well-stored result with a changed metric, are `failed` (exit 1), recorded."""
    backend_name, locator, store, outs = two_runs
    alpha = next(r for r in iter_catalog(store) if r.info.model_id == "alpha")
    frame = bytearray(_frame(backend_name, store, alpha.info.result))
    frame[-5] ^= 0x01
    _overwrite_object(backend_name, store, alpha.info.result, bytes(frame))
    failed = _cli("verify", alpha.hex_id[:6], "--store", locator)
    assert failed.exit_code == 1 and failed.output.startswith("failed: ")
    assert read_run_info(store, alpha.run).verification.verdict == "failed"
    tamper_metric(outs["alpha"])
    store.refs.set(f"results/{alpha.run}", store.put(outs["alpha"].read_bytes()))
    replayed = _cli("verify", alpha.hex_id[:6], "--store", locator)
    assert replayed.exit_code == 1 and "stored metrics differ" in replayed.output


class _StopsAtThird:
    """A policy factory that plays greedy twice, then raises (a run that stops after 2 episodes)."""

    def __init__(self) -> None:
        from emberbench.policies.spec import resolve_policy

        self.inner, self.calls = resolve_policy("greedy"), 0

    def __call__(self):  # noqa: ANN204
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("stop")
        return self.inner()


def test_verify_of_an_unfinished_run_replays_its_journal_and_is_partial(tmp_path, suite, request) -> None:  # noqa: ANN001
    """A failed run has no stored result: its journaled records are replayed; verdict partial, exit 3."""
    store = open_store(tmp_path / "s")
    with pytest.raises(RuntimeError, match="stop"):
        run_evaluation(small_manifest(suite), suite, _StopsAtThird(), "half", tmp_path / "h.json", store=store,
                       policy_spec="greedy")
    (row,) = iter_catalog(store)
    assert row.info.state == "failed" and row.info.episodes_done == 2
    result = _cli("verify", row.hex_id[:8], "--store", tmp_path / "s")
    assert result.exit_code == 3, result.output
    assert "partial: " in result.output and "2/4 journaled episodes" in result.output
    assert read_run_info(store, row.run).verification.verdict == "partial"


def test_the_listing_is_printed_whole_in_blocks(capsys) -> None:  # noqa: ANN001
    """`runs ls` prints its lines a block at a time: every line, in order, however many blocks it takes."""
    from emberbench.cli.runs_cmd import _echo_pieces

    lines = [f"line {i}\n" for i in range(2500)]
    _echo_pieces(iter(lines), block=1024)
    assert capsys.readouterr().out == "".join(lines)
    _echo_pieces(iter([]))
    assert capsys.readouterr().out == ""
