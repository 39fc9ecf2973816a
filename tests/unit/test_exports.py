"""Exports (issue 27): per-episode metrics of results and the run catalog as CSV, JSON lines and Parquet that other
tools read directly; streamed through the library's verifier; nothing left behind when an input fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import emberbench as eb
from emberbench.cli.main import app
from emberbench.results.episode_rows import EPISODE_COLUMNS, EPISODE_TABLE_VERSION
from emberbench.runs.catalog import CATALOG_COLUMNS
from tests.run_support import small_manifest, tamper_metric

runner = CliRunner()


@pytest.fixture(scope="module")
def results(tmp_path_factory, suite):  # noqa: ANN001, ANN201
    """Two results (greedy and fire-aware) of four episodes, run through a store."""
    folder = tmp_path_factory.mktemp("exports")
    manifest = small_manifest(suite)
    from emberbench.evaluation.store_runner import open_store

    store = open_store(folder / "store")
    for policy in ("greedy", "fire-aware"):
        eb.run_evaluation(manifest, suite, policy, policy, folder / f"{policy}.json", store=store)
    return folder


def _export(*args: object):  # noqa: ANN202
    return runner.invoke(app, ["export", *map(str, args)])


def _expected(results: Path, suite) -> list[dict]:  # noqa: ANN001
    rows = []
    for name in ("greedy", "fire-aware"):
        rows += eb.load_result(results / f"{name}.json", suite).to_table().to_records()
    return rows


def test_csv_reads_back_with_the_csv_module_and_pandas(results: Path, suite, tmp_path: Path) -> None:  # noqa: ANN001
    """CSV: a header of the columns, one row per episode with its model, scenario, seed and families (quoted
    where they hold commas), every float reading back to the exact stored value."""
    import pandas as pd

    out = tmp_path / "episodes.csv"
    done = _export(results / "greedy.json", results / "fire-aware.json", "--out", out)
    assert done.exit_code == 0 and done.output == f"{out}: 8 episodes of 2 result(s) (csv)\n", done.output
    with out.open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0] == [c.name for c in EPISODE_COLUMNS] and len(table) == 9
    expected = _expected(results, suite)
    for row, want in zip(table[1:], expected):
        assert row[:5] == [want["model_id"], str(want["index"]), want["scenario_id"], str(want["seed"]),
                           want["families"]]
        assert want["families"] and "," in want["families"]
        shown = dict(zip(table[0], row))
        assert shown["evacuated_rate"] == repr(want["evacuated_rate"])  # the shortest text of the exact float
        assert shown["exit_balance"] == ("" if want["exit_balance"] is None else repr(want["exit_balance"]))
    frame = pd.read_csv(out)
    assert list(frame["evacuated_rate"]) == [r["evacuated_rate"] for r in expected]
    assert list(frame["seed"]) == [r["seed"] for r in expected]


def test_parquet_and_jsonl_read_back_typed(results: Path, suite, tmp_path: Path) -> None:  # noqa: ANN001
    """Parquet: typed columns (seeds uint64, counts int64, metrics float64, undefined as null), the column-set
    version in its metadata; JSON lines: one object per episode, equal to the library's rows."""
    expected = _expected(results, suite)
    assert _export(results / "greedy.json", results / "fire-aware.json", "--out", tmp_path / "e.parquet").exit_code == 0
    table = pq.read_table(tmp_path / "e.parquet")
    assert str(table.schema.field("seed").type) == "uint64" and str(table.schema.field("steps").type) == "int64"
    assert str(table.schema.field("mean_exposure").type) == "double"
    assert table.schema.metadata[b"emberbench_table_version"] == EPISODE_TABLE_VERSION.encode()
    assert table.to_pylist() == expected
    assert _export(results / "greedy.json", results / "fire-aware.json", "--format", "jsonl",
                   "--out", tmp_path / "e.txt").exit_code == 0
    lines = (tmp_path / "e.txt").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == expected


def test_every_result_is_verified_by_the_streaming_verifier_and_a_failure_leaves_no_file(
        results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each artifact is read once, by the library's streaming verifier (never the whole-file loader); a tampered
    second artifact fails the export after the first one's rows were encoded, and no file is left."""
    import emberbench.results.artifact as artifact
    import emberbench.results.stream as stream

    streamed = []
    real = stream.ArtifactStream

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, source, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
            streamed.append(Path(source).name)
            super().__init__(source, *args, **kwargs)

    monkeypatch.setattr(stream, "ArtifactStream", Counting)
    monkeypatch.setattr(artifact, "load_result", lambda *a, **k: pytest.fail("the whole-file loader was used"))
    bad = tmp_path / "bad.json"
    bad.write_bytes((results / "fire-aware.json").read_bytes())
    tamper_metric(bad)
    failed = _export(results / "greedy.json", bad, "--out", tmp_path / "e.csv")
    assert failed.exit_code == 1 and "stored metrics differ" in failed.stderr, failed.output
    assert streamed == ["greedy.json", "bad.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_the_run_catalog_as_a_table_and_as_files(results: Path, tmp_path: Path) -> None:
    """`runs export --table` writes one row per run (as `eb.run_catalog` has them) in every format."""
    store = results / "store"
    catalog = eb.run_catalog(store)
    frame = catalog.to_pandas()
    assert list(frame.columns) == [c.name for c in CATALOG_COLUMNS] and len(frame) == 2
    assert sorted(frame["model_id"]) == ["fire-aware", "greedy"] and set(frame["state"]) == {"complete"}
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"runs.{fmt}"
        done = runner.invoke(app, ["runs", "export", "--table", "--store", str(store), "--out", str(out)])
        assert done.exit_code == 0 and done.output == f"{out}: 2 runs ({fmt})\n", done.output
    assert pq.read_table(tmp_path / "runs.parquet").to_pylist() == catalog.to_table().to_records()
    with (tmp_path / "runs.csv").open(newline="") as handle:
        assert [row["id"] for row in csv.DictReader(handle)] == list(frame["id"])
    only = runner.invoke(app, ["runs", "export", "--table", "--store", str(store), "--model", "greedy",
                               "--out", str(tmp_path / "g.jsonl")])
    assert only.exit_code == 0 and len((tmp_path / "g.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize(("args", "code", "says"), [
    (("runs", "export", "--table", "--out", "t.txt"), 2, "give --format csv, jsonl or parquet"),
    (("runs", "export", "--table", "abcd", "--out", "t.csv"), 2, "--table writes the catalog of every run"),
    (("runs", "export", "--out", "t.csv"), 2, "give the run's ID, or --table"),
    (("runs", "export", "abcd", "--format", "csv", "--out", "t.csv"), 2, "--format, --model and --state go with"),
    (("export", "x.json", "--out", "t.csv", "--format", "xlsx"), 2, "'xlsx' is not one of csv, jsonl, parquet"),
])
def test_misused_export_options_are_usage_errors(args: tuple[str, ...], code: int, says: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Options that do not go together are one usage line (exit 2), before anything is read or written."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, list(args))
    assert result.exit_code == code and says in result.stderr and len(result.stderr.splitlines()) == 1, result.output
    assert list(tmp_path.iterdir()) == []
