"""How a command ends: one line and a documented status for usage errors, signals, a closed stdout, a policy bug."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


class SendsSigint:
    """A policy that interrupts the process, as Ctrl-C does."""

    def __call__(self, observation: object) -> dict[str, str]:
        os.kill(os.getpid(), signal.SIGINT)
        return {}


class _SignalsInAFinalizer:
    """Garbage whose finalizer sends ``signum`` to this process (the first time) and runs on, so the handler
    fires inside it."""

    sent = False

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        if not _SignalsInAFinalizer.sent:
            _SignalsInAFinalizer.sent = True
            os.kill(os.getpid(), self.signum)
        total = 0
        for step in range(1000):  # the handler runs here, inside the finalizer, where its exception is lost
            total += step


class SignalLostInAFinalizer:
    """A policy under which SIGTERM arrives while garbage is being collected (as it may during any import).

    Each step takes 50 ms (the episode has 23), so a signal that is not lost stops it long before its end.
    """

    closed = False
    calls = 0

    def __call__(self, observation) -> dict[str, str]:  # noqa: ANN001
        SignalLostInAFinalizer.calls += 1
        _SignalsInAFinalizer(signal.SIGTERM)  # collected at once: its __del__ runs here
        time.sleep(0.05)
        return {p.id: "stay" for p in observation.people}

    def close(self) -> None:
        SignalLostInAFinalizer.closed = True


class InterruptCaughtByALibrary:
    """A policy whose code catches KeyboardInterrupt and carries on (as some libraries do)."""

    def __call__(self, observation) -> dict[str, str]:  # noqa: ANN001
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        except BaseException:  # noqa: BLE001, S110 - the point: a library that swallows it
            pass
        return {p.id: "stay" for p in observation.people}


def test_a_signal_lost_in_a_finalizer_still_ends_the_command() -> None:
    """Issue 22 (defect 5): a SIGTERM whose handler ran inside a finalizer was printed as "Exception ignored in
    ... Terminated" and lost, and the command went on to exit 0. The lost exception is now delivered again to
    the main thread: the episode stops, cleanup runs, one line `terminated`, exit 143."""
    SignalLostInAFinalizer.closed = _SignalsInAFinalizer.sent = False
    SignalLostInAFinalizer.calls = 0
    result = CliRunner().invoke(app, ["episode", SCENARIO, "--policy", f"{__name__}:SignalLostInAFinalizer"])
    assert (result.exit_code, result.stderr) == (143, "terminated\n")
    assert SignalLostInAFinalizer.closed and SignalLostInAFinalizer.calls < 20  # stopped, not played to the end


def test_a_signal_whose_exception_was_swallowed_still_decides_the_status() -> None:
    """Issue 22 (defect 5): SIGINT whose KeyboardInterrupt a library caught let the command finish with exit 0;
    the signal is latched, so the command still ends with `interrupted` and 130 once it returns."""
    result = CliRunner().invoke(app, ["episode", SCENARIO, "--policy", f"{__name__}:InterruptCaughtByALibrary"])
    assert (result.exit_code, result.stderr) == (130, "interrupted\n")


def test_the_start_up_handlers_end_the_process_at_once_with_one_line() -> None:
    """Issue 22 (defect 5): before the command runs (imports), a signal ends the process with one line and
    130/143 instead of the interpreter's defaults (killed without a word; a traceback out of an import)."""
    code = ("import os, signal, sys, time\n"
            "from emberbench.cli.stop_signals import install_early\n"
            "install_early()\n"
            "os.kill(os.getpid(), getattr(signal, sys.argv[1]))\n"
            "time.sleep(5)\n"
            "print('not reached')\n")
    for name, status, line in (("SIGTERM", 143, b"terminated\n"), ("SIGINT", 130, b"interrupted\n")):
        child = subprocess.run([sys.executable, "-c", code, name], capture_output=True, timeout=60)
        assert (child.returncode, child.stdout, child.stderr) == (status, b"", line)


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


@pytest.mark.parametrize(("policy", "status", "line"), [("SendsSigterm", 143, "terminated"),
                                                     ("SendsSigint", 130, "interrupted")])
def test_a_run_stopped_by_either_signal_is_interrupted_in_the_catalog(policy: str, status: int, line: str,
                                                                      tmp_path: Path, suite) -> None:  # noqa: ANN001
    """Issue 27 (defect 8): a store-backed run stopped by SIGTERM was recorded `failed` in its run-info (and so
    in `runs ls`), one stopped by SIGINT `interrupted`. A stop signal is not a failure: both are `interrupted`."""
    from emberbench.results.manifest import write_manifest
    from tests.run_support import small_manifest

    write_manifest(small_manifest(suite), tmp_path / "m.json")
    store = tmp_path / "store"
    result = CliRunner().invoke(app, ["run", "--manifest", str(tmp_path / "m.json"), "--policy", f"{__name__}:{policy}",
                                      "--model-id", "m", "--out", str(tmp_path / "o.json"), "--store", str(store),
                                      "--executor", "local"])
    assert (result.exit_code, result.stderr) == (status, f"{line}\n")
    listing = CliRunner().invoke(app, ["runs", "ls", "--store", str(store)])
    assert listing.exit_code == 0, listing.output
    assert listing.output.splitlines()[1].split()[5] == "interrupted", listing.output


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


@pytest.fixture
def damaged_store(tmp_path: Path, suite):  # noqa: ANN001, ANN201
    """A store with one complete run whose stored result was replaced by one with a changed metric."""
    from emberbench.runs.catalog import iter_catalog
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from tests.run_support import small_manifest, tamper_metric

    store = open_store(tmp_path / "store")
    out = tmp_path / "r.json"
    run_evaluation(small_manifest(suite, seeds=(0,)), suite, "greedy", "g", out, store=store)
    (row,) = iter_catalog(store)
    tamper_metric(out)
    store.refs.set(f"results/{row.run}", store.put(out.read_bytes()))
    return store, row


def _report_then_one_error_line(result, report_start: str) -> str:  # noqa: ANN001
    """Exit 1, the report on stdout, and exactly one `error:` line on stderr; return that line."""
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(report_start), result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    return lines[0]


def test_a_damaged_store_ends_audit_and_runs_verify_with_one_error_line(damaged_store) -> None:  # noqa: ANN001
    """Issue 22 (defect 8): `store audit` and `runs verify` on a damaged run printed their report and exited 1
    with nothing on stderr; now one `error:` line after the report says what failed, naming the run."""
    store, row = damaged_store
    audit = CliRunner().invoke(app, ["store", "audit", "--store", str(store.root)])
    line = _report_then_one_error_line(audit, "damaged ")
    assert "1 of 1 runs damaged" in line and row.run[:16] in line
    verify = CliRunner().invoke(app, ["runs", "verify", row.hex_id[:8], "--store", str(store.root)])
    line = _report_then_one_error_line(verify, "failed: ")
    assert row.run in line and "stored metrics differ" in line


def test_a_damaged_run_info_ends_runs_ls_with_one_error_line(damaged_store) -> None:  # noqa: ANN001
    """Issue 22 (defect 8): `runs ls` listed a damaged run-info and exited 1 silently; now it says so in one line."""
    from emberbench.evaluation.run_info import run_info_ref

    store, row = damaged_store
    store.refs.set(run_info_ref(row.run), store.put(b"not json at all"))
    listing = CliRunner().invoke(app, ["runs", "ls", "--store", str(store.root)])
    assert "1 run(s) listed as damaged" in _report_then_one_error_line(listing, "ID ")


@pytest.fixture
def full_disk(tmp_path: Path):  # noqa: ANN201
    """A real 64 KiB tmpfs, filled up (root only: it is mounted in tmp_path and unmounted afterwards)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        with open(disk / "filler", "wb", buffering=0) as handle:
            try:
                while handle.write(b"\0" * 4096):
                    pass
            except OSError:
                pass
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_full_disk_names_the_output_it_could_not_write(full_disk: Path) -> None:
    """Issue 22 (defect 8): on a full disk a command said `error: No space left on device`, naming no file; now
    the one line names the output, exit 1, and nothing is left on the disk but what was there."""
    out = full_disk / "m.json"
    result = CliRunner().invoke(app, ["manifest", "build", "--seeds", "0", "1", "2", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert result.stderr == f"error: No space left on device ({out})\n"
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]
