"""Output rules of presentation: single files and report folders."""

from __future__ import annotations

import os

import pytest

from emberbench.errors import OutputPathError, PresentationError
from emberbench.viewer.outputs import REPORT_INDEX, ReportFolder, claim_output_file


def test_existing_file_needs_force(tmp_path) -> None:  # noqa: ANN001
    """An existing output file is refused without --force and accepted with it."""
    target = tmp_path / "page.html"
    assert claim_output_file(target, force=False) == target
    target.write_text("old")
    with pytest.raises(PresentationError, match="use --force"):
        claim_output_file(target, force=False)
    assert claim_output_file(target, force=True) == target


def test_link_is_never_an_output(tmp_path) -> None:  # noqa: ANN001
    """A symbolic link is refused even with --force (the output policy)."""
    link = tmp_path / "link.html"
    os.symlink(tmp_path / "elsewhere", link)
    with pytest.raises(OutputPathError):
        claim_output_file(link, force=True)


def test_foreign_folder_is_refused(tmp_path) -> None:  # noqa: ANN001
    """A non-empty folder is refused unless forced; with --force the report is written among the other files."""
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(PresentationError, match="is not empty; give --force"):
        ReportFolder(tmp_path, force=False)
    with ReportFolder(tmp_path, force=True) as folder:
        folder.write("index.html", b"x")
        folder.finish()
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "notes.txt", REPORT_INDEX]


def _report(folder, files: dict[str, bytes], *, force: bool = False) -> ReportFolder:  # noqa: ANN001
    with ReportFolder(folder, force=force) as f:
        for name, data in files.items():
            f.write(name, data)
        f.finish()
    return f


def test_a_previous_report_is_replaced_only_with_force(tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 3): rerunning into a report's folder (say with fewer results) is refused without --force,
    leaving the previous report whole; with --force the new report replaces it whole (stale pages go)."""
    out = tmp_path / "r"
    _report(out, {"index.html": b"1", "viewer/a.html": b"1", "viewer/b.html": b"1"})
    with pytest.raises(PresentationError, match="holds a previous report; give --force"):
        ReportFolder(out, force=False)
    assert (out / "viewer" / "b.html").read_bytes() == b"1"
    second = _report(out, {"index.html": b"2", "viewer/a.html": b"2"}, force=True)
    assert second.replaced
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "index.html", REPORT_INDEX, "viewer", "viewer/a.html"]
    assert (out / "index.html").read_bytes() == b"2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # nothing left beside it


def test_an_empty_folder_is_used(tmp_path) -> None:  # noqa: ANN001
    """An existing empty folder takes the report without --force (the staging folder is renamed onto it)."""
    out = tmp_path / "r"
    out.mkdir()
    folder = _report(out, {"index.html": b"1"})
    assert not folder.replaced and sorted(p.name for p in out.iterdir()) == ["index.html", REPORT_INDEX]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_a_folder_filled_while_the_report_is_built_is_not_overwritten(tmp_path) -> None:  # noqa: ANN001
    """The emptiness checked at the start is checked again by the final rename: someone else's file wins."""
    out = tmp_path / "r"
    out.mkdir()
    with pytest.raises(PresentationError, match="no longer empty"), ReportFolder(out, force=False) as f:
        f.write("index.html", b"1")
        (out / "theirs.txt").write_text("theirs")
        f.finish()
    assert sorted(p.name for p in out.iterdir()) == ["theirs.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


@pytest.mark.parametrize("name", ["../escape.html", "/abs.html"])
def test_report_files_stay_inside(tmp_path, name) -> None:  # noqa: ANN001
    """A report file name cannot leave its folder."""
    with pytest.raises(PresentationError, match="leaves the report folder"), ReportFolder(tmp_path, force=False) as f:
        f.write(name, b"x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "previous report"])
def test_a_report_that_fails_leaves_nothing(tmp_path, existing) -> None:  # noqa: ANN001
    """Files are staged; leaving the block without finish() removes them, and the target is as it was
    (issue 22, defect 6): no folder (nor missing parent) created, no file of a previous report touched."""
    out = tmp_path / "a" / "r"
    if existing:
        with ReportFolder(out, force=False) as first:
            first.write("index.html", b"1")
            first.finish()
    before = sorted((p.relative_to(tmp_path).as_posix(), p.read_bytes() if p.is_file() else b"")
                    for p in tmp_path.rglob("*"))
    with pytest.raises(RuntimeError), ReportFolder(out, force=existing) as folder:
        folder.write("index.html", b"2")
        folder.write("viewer/m.html", b"2")
        raise RuntimeError("an input was refused")
    after = sorted((p.relative_to(tmp_path).as_posix(), p.read_bytes() if p.is_file() else b"")
                   for p in tmp_path.rglob("*"))
    assert after == before


def test_a_linked_subfolder_is_refused_before_anything_moves(tmp_path) -> None:  # noqa: ANN001
    """A previous report whose viewer/ became a link: the new report refuses it and changes no file."""
    out = tmp_path / "r"
    with ReportFolder(out, force=False) as first:
        first.write("index.html", b"1")
        first.write("viewer/m.html", b"1")
        first.finish()
    elsewhere = tmp_path / "elsewhere"
    (out / "viewer").rename(elsewhere)
    (out / "viewer").symlink_to(elsewhere)
    with pytest.raises(OutputPathError, match="not a folder"), ReportFolder(out, force=True) as second:
        second.write("index.html", b"2")
        second.write("viewer/m.html", b"2")
        second.finish()
    assert (out / "index.html").read_bytes() == b"1" and (elsewhere / "m.html").read_bytes() == b"1"
    assert sorted(p.name for p in out.iterdir()) == ["index.html", REPORT_INDEX, "viewer"]
