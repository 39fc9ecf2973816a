"""CLI: view, report, plot and episode --render; one-line errors, --out and --force."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app

runner = CliRunner()


def _run(*args: str):  # noqa: ANN202
    return runner.invoke(app, [str(a) for a in args])


def test_view_writes_and_refuses_to_overwrite(results, tmp_path) -> None:  # noqa: ANN001
    """view writes a page; a second run needs --force."""
    out = tmp_path / "v.html"
    first = _run("view", results["greedy"], "--out", out)
    assert first.exit_code == 0, first.output
    assert out.read_bytes().startswith(b"<!DOCTYPE html>")
    again = _run("view", results["greedy"], "--out", out)
    assert again.exit_code == 1 and again.output.count("\n") == 1 and "--force" in again.output
    assert _run("view", results["greedy"], "--out", out, "--force").exit_code == 0


def test_tampered_record_is_refused_in_one_line(tmp_path) -> None:  # noqa: ANN001
    """A record that fails authentication gives one error line and no page."""
    record = tmp_path / "rec.json"
    assert _run("episode", "v1-pub-01-single-exit-sparse", "--record", record).exit_code == 0
    data = json.loads(record.read_text())
    data["outcome"]["steps"] += 1
    record.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True))
    res = _run("view", record, "--out", tmp_path / "p.html")
    assert res.exit_code == 1 and res.output.startswith("error: ") and res.output.count("\n") == 1
    assert not (tmp_path / "p.html").exists()


def test_view_of_a_record_and_terminal(tmp_path) -> None:  # noqa: ANN001
    """A record's page and its terminal playback."""
    record = tmp_path / "rec.json"
    assert _run("episode", "v1-pub-04-dead-end-corridor", "--record", record).exit_code == 0
    assert _run("view", record, "--out", tmp_path / "p.html").exit_code == 0
    res = _run("view", record, "--terminal")
    assert res.exit_code == 0 and "v1-pub-04-dead-end-corridor seed" in res.output
    assert _run("view", record, "--episode", "2").exit_code == 1


def test_episode_render(tmp_path) -> None:  # noqa: ANN001
    """episode --render prints the outcome line then the frames."""
    res = _run("episode", "v1-pub-01-single-exit-sparse", "--render")
    assert res.exit_code == 0
    assert res.output.splitlines()[0].startswith("v1-pub-01-single-exit-sparse seed=")
    assert "step 0/" in res.output


def test_report_and_plot_commands(results, tmp_path) -> None:  # noqa: ANN001
    """report writes its folder; plot refuses a missing --scenario in one line."""
    res = _run("report", results["stay"], results["greedy"], "--out", tmp_path / "r", "--resamples", "200")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "index.html").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "x.txt").write_text("x")
    res = _run("report", results["stay"], "--out", tmp_path / "mine", "--resamples", "200")
    assert res.exit_code == 1 and res.output.count("\n") == 1
    res = _run("plot", "egress", results["stay"], "--out", tmp_path / "e.png")
    assert res.exit_code == 1 and "needs --scenario" in res.output


@pytest.mark.parametrize("kind", ["bogus"])
def test_plot_kind_is_a_choice(results, tmp_path, kind) -> None:  # noqa: ANN001
    """An unknown figure kind is a usage error (exit 2)."""
    assert _run("plot", kind, results["stay"], "--out", tmp_path / "x.png").exit_code == 2


def _document(page) -> dict:  # noqa: ANN001
    import re

    text = page.read_text()
    return json.loads(re.search(r'id="emberbench-data">(.*?)</script>', text, re.S).group(1))


def test_the_command_a_page_shows_for_a_missing_episode_works(result36, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Issue 27 (defect 2): the command a page shows for an episode it does not embed writes a new page for
    that episode (NAME.episode-N.view.html) instead of failing on the page it came from; the page links to it."""
    import shlex
    import shutil

    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(result36, folder / "greedy.json")
    monkeypatch.chdir(folder)
    assert _run("view", "greedy.json", "--embed", "5").exit_code == 0
    doc = _document(folder / "greedy.view.html")
    missing = next(i for i in doc["list"]["index"] if i not in {e["index"] for e in doc["episodes"]})
    command = shlex.split(doc["regenerate"].replace("{index}", str(missing)))
    assert command[:2] == ["emberbench", "view"]
    res = _run(*command[1:])
    assert res.exit_code == 0, res.output
    page = folder / f"greedy.episode-{missing}.view.html"
    assert doc["regenerate_page"].replace("{index}", str(missing)) == page.name
    shown = _document(page)
    assert shown["episodes"][0]["index"] == missing
    again = _run(*command[1:])  # the same command again: the page exists, --force replaces it
    assert again.exit_code == 1 and "--force" in again.output
    assert sorted(p.name for p in folder.iterdir()) == sorted(["greedy.json", "greedy.view.html", page.name])


def test_a_page_elsewhere_links_back_to_the_episode_pages(result36, tmp_path) -> None:  # noqa: ANN001
    """A page written with --out into another folder links to where the command writes (beside the result)."""
    out = tmp_path / "pages" / "g.html"
    out.parent.mkdir()
    assert _run("view", result36, "--embed", "5", "--out", out).exit_code == 0
    link = _document(out)["regenerate_page"]
    target = (out.parent / link.replace("{index}", "7")).resolve()
    assert target == result36.parent.resolve() / f"{result36.stem}.episode-7.view.html"
