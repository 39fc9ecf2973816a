"""How a command ends: one line and a documented status for usage errors, signals, a closed stdout, a policy bug."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app

SCENARIO = "v1-pub-01-single-exit-sparse"


class Crash:
    """A policy with a bug: it raises on its first observation."""

    def __call__(self, observation: object) -> dict[str, str]:
        raise ZeroDivisionError("division by zero in the policy")


class SendsSigterm:
    """A policy that asks for the process to be terminated, as a supervisor would (kill -TERM)."""

    closed = False

    def __call__(self, observation: object) -> dict[str, str]:
        os.kill(os.getpid(), signal.SIGTERM)
        return {}

    def close(self) -> None:
        SendsSigterm.closed = True


def test_a_policy_exception_in_episode_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 (item 2): `episode` with a policy that raises prints one line naming the exception (as `run`
    does), exit 1; EMBERBENCH_DEBUG=1 (or -v) prints the policy's traceback before that line."""
    monkeypatch.delenv("EMBERBENCH_DEBUG", raising=False)
    result = CliRunner().invoke(app, ["episode", SCENARIO, "--policy", f"{__name__}:Crash"])
    assert result.exit_code == 1
    assert result.stderr == (f"error: {SCENARIO} seed 0: the policy raised ZeroDivisionError: division by zero in "
                             "the policy (-v or EMBERBENCH_DEBUG=1 shows the traceback)\n")
    monkeypatch.setenv("EMBERBENCH_DEBUG", "1")
    debug = CliRunner().invoke(app, ["episode", SCENARIO, "--policy", f"{__name__}:Crash"])
    assert debug.exit_code == 1 and "Traceback" in debug.stderr and "in __call__" in debug.stderr
    assert debug.stderr.splitlines()[-1].startswith("error: ")


def test_sigterm_ends_a_command_with_one_line_status_143_after_cleanup() -> None:
    """Issue 12 (defect 7): SIGTERM ends a command like SIGINT does: cleanup runs (the policy is closed), one
    line `terminated` on stderr, exit status 143; the previous handler is back afterwards."""
    before = signal.getsignal(signal.SIGTERM)
    SendsSigterm.closed = False
    result = CliRunner().invoke(app, ["episode", SCENARIO, "--policy", f"{__name__}:SendsSigterm"])
    assert (result.exit_code, result.stderr) == (143, "terminated\n")
    assert SendsSigterm.closed
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("args", [
    ["nosuch"], ["episode"], ["episode", SCENARIO, "--nope"], ["manifest", "build", "--seeds", "1"],
    ["episode", SCENARIO, "--seed", "x"], ["stats"],
])
def test_usage_errors_are_one_line_with_exit_status_2(args: list[str]) -> None:
    """Usage errors (unknown command or option, missing or malformed value) are one line and exit 2."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--help" in lines[0], result.stderr


@pytest.mark.parametrize("args", [["suite", "list"], ["suite", "show", SCENARIO], ["--help"]])
def test_a_closed_stdout_ends_quietly(args: list[str], tmp_path: Path) -> None:
    """Issue 16 (item 2): `suite list | head -1` ends without a message (status 141 as for SIGPIPE, or
    click's 1 for help text), never `error: Broken pipe`."""
    child = subprocess.Popen([sys.executable, "-m", "emberbench.cli.main", *args], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader goes away before anything is written
    err = child.stderr.read()
    assert child.wait(timeout=60) in (141, 1)
    assert err == b""
