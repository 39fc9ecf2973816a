"""What an embedded Ray instance may leave behind: no process (the reaper), no readable token, no oversize start."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from emberbench.cluster import hygiene
from emberbench.cluster.hygiene import MARKER_VAR, REAPER, ProcessGuard, ensure_private_token, local_cpus
from emberbench.cluster.session import _start_embedded
from emberbench.errors import ClusterError
from tests.helpers import process_alive, wait_gone


def test_the_guard_ends_every_marked_process_when_closed() -> None:
    """Issue 12 (defect 7): a process started while the guard is open carries the marker and is ended when the
    guard closes (as Ray's agents are when the command ends); a process started without it is left alone."""
    before = os.environ.get(MARKER_VAR)  # a session-wide Ray fixture may have its own guard open
    with ProcessGuard() as guard:
        assert os.environ[MARKER_VAR] == guard.marker.split("=", 1)[1]
        marked = subprocess.Popen(["sleep", "300"], start_new_session=True)
    assert os.environ.get(MARKER_VAR) == before
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert wait_gone(marked.pid)
        assert process_alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()
        marked.wait()


def test_the_reaper_acts_when_its_owner_dies_without_closing_anything(tmp_path: Path) -> None:
    """Issue 12 (defect 7): when the owner is SIGKILLed (nothing in it runs), the reaper still ends what the
    owner marked, within a second or two: the pipe's end of file is the signal."""
    owner_code = (
        "import subprocess, sys, time\n"
        "from emberbench.cluster.hygiene import ProcessGuard\n"
        "guard = ProcessGuard().__enter__()\n"
        "child = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, cwd=tmp_path)
    assert owner.stdout is not None
    helper = int(owner.stdout.readline())
    try:
        assert process_alive(helper)
        owner.kill()
        owner.wait()
        assert wait_gone(helper, 10.0)
    finally:
        if process_alive(helper):
            os.kill(helper, 9)


def test_reaper_usage_error() -> None:
    """The reaper script refuses to run without a NAME=VALUE marker."""
    result = subprocess.run([sys.executable, "-I", str(REAPER)], capture_output=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and b"usage" in result.stderr


def test_the_token_file_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 (defect 6): with a fresh HOME, the token folder is created 0700 and the token file 0600
    (Ray alone made them 0755 and 0644); an existing token is left as it is."""
    for name in hygiene.TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    path = ensure_private_token(tmp_path)
    assert path == tmp_path / ".ray" / "auth_token"
    assert stat.S_IMODE(os.stat(tmp_path / ".ray").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    token = path.read_text()
    assert len(token) == 64 and int(token, 16) >= 0
    assert ensure_private_token(tmp_path) is None and path.read_text() == token
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(path))
    assert ensure_private_token(tmp_path / "other-home") is None
    assert not (tmp_path / "other-home").exists()


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "planted")


def _link_to_a_token(path: Path) -> None:
    (path.parent / "real-token").write_text("ab" * 32)
    path.symlink_to(path.parent / "real-token")


@pytest.mark.parametrize(("make", "message"), [
    (_dangling, "is a symbolic link"),
    (_link_to_a_token, "is a symbolic link"),
    (lambda path: os.mkfifo(path), "is not a regular file"),
])
@pytest.mark.parametrize("named_by", ["home", "RAY_AUTH_TOKEN_PATH"])
def test_a_token_path_that_is_a_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make, message: str,  # noqa: ANN001
                                               named_by: str) -> None:
    """Issue 22 (defect 7): a dangling ~/.ray/auth_token link was taken for an existing token, and Ray then wrote
    a new token through it, creating the link's target with mode 0644. A token path that is a link (or not a
    regular file) is now refused before Ray starts, and nothing is created anywhere."""
    for name in hygiene.TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".ray").mkdir(mode=0o700)
    path = tmp_path / ".ray" / "auth_token"
    if named_by == "RAY_AUTH_TOKEN_PATH":
        path = tmp_path / "token"
        monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(path))
    make(path)
    before = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(ClusterError, match=f"Ray token file {path} {message}"):
        ensure_private_token(tmp_path)
    assert sorted(p.name for p in path.parent.iterdir()) == before
    assert not (path.parent / "planted").exists()


def test_a_token_path_naming_nothing_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RAY_AUTH_TOKEN_PATH naming no file would make Ray write a new token to ~/.ray/auth_token: refused."""
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "elsewhere"))
    with pytest.raises(ClusterError, match="RAY_AUTH_TOKEN_PATH=.*elsewhere: no such file"):
        ensure_private_token(tmp_path)
    assert list(tmp_path.iterdir()) == []


class _NoRay:
    """Stands for the ray module: any call means Ray would have started."""

    def init(self, **kwargs: object) -> None:
        raise AssertionError("ray.init was called")


def test_workers_beyond_this_machine_are_refused_before_ray_starts() -> None:
    """Issue 12 (defect 7): `--workers 1000000` on an embedded instance is one ClusterError before ray.init
    (it used to start workers without end)."""
    with pytest.raises(ClusterError, match=f"--workers 1000000 exceeds the {local_cpus()} CPUs of this machine"):
        _start_embedded(_NoRay(), 1_000_000, {})  # type: ignore[arg-type]
