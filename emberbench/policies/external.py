"""External agents: a policy that is a separate process speaking JSON lines.

Protocol (docs/model-interface.md): for every step the runner writes the
observation's canonical JSON and a newline to the agent's stdin, and reads one
line from its stdout: a JSON object mapping each person id inside to a move.
A fresh process is started for every episode and its stdin is closed at the
end. The agent learns nothing but observations.

Each agent runs in a process group of its own, marked in its environment,
and everything it started is ended with the episode
(:mod:`emberbench.policies.agent_tree`): a helper it forked (``sleep 300 &``),
and one that left the group with ``setsid()`` and a double fork, do not
outlive it. A reply line is input like any file (the input policy): at most
:data:`emberbench.io.input_policy.AGENT_REPLY` bytes and values, strict JSON.

The run stops with :class:`AgentError` when the agent exits, says nothing
within the timeout, or answers with something that is not one JSON object.
The error quotes the last lines the agent wrote to stderr (at most
:data:`STDERR_TAIL_LINES`), and the episode layer adds the scenario and seed,
which the agent never learns. With a log folder, each episode's whole stderr
is saved there under a name made of the scenario id and the seed. The folder
and the log file are checked before the agent starts: a folder that is a
symbolic link, or a log path that is a link, FIFO or anything but a regular
file, is refused before the episode is played.
"""

from __future__ import annotations

import logging
import math
import os
import selectors
import shlex
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import AgentError, CanonicalFormError, EmberError
from ..io.input_policy import AGENT_REPLY, parse_json
from ..sim.observation import Observation
from .agent_tree import MARK_VAR, end_agent, new_mark

_log = logging.getLogger(__name__)
_MAX_LINE = AGENT_REPLY.max_bytes
_MAX_TIMEOUT = 86_400.0
_CLOSE_GRACE = 2.0
"""Seconds an agent gets to exit by itself once its stdin is closed."""
STDERR_TAIL_LINES = 20
"""How many of the agent's last stderr lines an error quotes."""
_TAIL_BYTES = 64 * 1024
_TAIL_LINE_CHARS = 300
MAX_LOG_BYTES = 64 * 1024 * 1024
"""A saved stderr log keeps at most this many bytes: the end of the stream, after a note of what was dropped."""


def stderr_log_name(scenario_id: str, seed: int) -> str:
    """The file name of one episode's agent stderr log (scenario ids and seeds are file-name safe)."""
    return f"{scenario_id}.seed-{seed}.stderr.log"


def read_tail(fd: int, lines: int = STDERR_TAIL_LINES) -> tuple[str, ...]:
    """The last ``lines`` non-blank lines of the file open at ``fd`` (its last 64 KiB), each at most 300 characters.

    Reads with ``pread``, so the file offset the agent process shares is left
    alone. Control characters other than tab are shown as ``?``, so that a
    line can never reset a terminal or forge another line.
    """
    size = os.fstat(fd).st_size
    start = max(0, size - _TAIL_BYTES)
    text = os.pread(fd, size - start, start).decode("utf-8", "replace")
    kept = [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]
    clean = ["".join("?" if (ord(ch) < 32 and ch != "\t") or 127 <= ord(ch) < 160 else ch for ch in line)
             for line in kept]
    return tuple(line if len(line) <= _TAIL_LINE_CHARS else line[:_TAIL_LINE_CHARS - 3] + "..." for line in clean)


def describe_tail(tail: tuple[str, ...]) -> str:
    """The tail as it appears in an error message: one line, the agent's lines separated by ' | '."""
    if not tail:
        return "; no stderr output"
    count = f"{len(tail)} line{'s' if len(tail) > 1 else ''}"
    return f"; stderr (last {count}): {' | '.join(tail)}"


def check_log_folder(folder: str | os.PathLike[str]) -> None:
    """A log folder is missing (it is created) or a folder, never a symbolic link (the logs would land elsewhere).

    Folders above it may be links, as for any output path.

    Raises:
        AgentError: the folder is a link, or something other than a folder.
    """
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise AgentError(f"agent log folder {os.fspath(folder)}: cannot check it: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise AgentError(f"agent log folder {os.fspath(folder)} is a symbolic link; give the folder itself")
    if not stat.S_ISDIR(mode):
        raise AgentError(f"agent log folder {os.fspath(folder)} exists and is not a folder")


def check_log_file(target: Path) -> None:
    """The output policy for one stderr log, and :func:`check_log_folder` for its folder.

    Raises:
        AgentError: either is refused.
    """
    from ..io.atomic import check_output_path
    from ..errors import OutputPathError

    check_log_folder(target.parent)
    if not target.parent.exists():
        return
    try:
        check_output_path(target)
    except OutputPathError as exc:
        raise AgentError(f"cannot save the agent's stderr log: {exc}") from None


class ExternalAgentFactory:
    """Factory for :class:`ExternalAgent` (picklable: holds only the command, timeout and log folder).

    Args:
        command: the command line (split with :func:`shlex.split`).
        timeout: seconds allowed for each answer.
        log_dir: a folder where each episode's agent stderr is saved
            (:func:`stderr_log_name`), or None. It is created when missing.
            Runs on several machines need a folder every worker can reach
            at the same path.
    """

    def __init__(self, command: str, *, timeout: float, log_dir: str | os.PathLike[str] | None = None) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:  # an unclosed quote or a trailing backslash
            raise AgentError(f"cmd: policy {command!r} is not a valid command line: {exc}") from None
        if not argv:
            raise AgentError("cmd: policy needs a command line after 'cmd:'")
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and 0 < timeout <= _MAX_TIMEOUT):
            raise AgentError(f"agent timeout must be positive, finite and at most {_MAX_TIMEOUT:g} seconds, "
                             f"got {timeout!r}")
        if log_dir is not None:
            check_log_folder(log_dir)
        self.command = command
        self.argv = argv
        self.timeout = timeout
        self.log_dir = None if log_dir is None else os.fspath(log_dir)

    def __call__(self) -> ExternalAgent:
        return ExternalAgent(self.argv, self.timeout, log_dir=self.log_dir)


class ExternalAgent:
    """One agent process for one episode. Call with an observation; close at the end.

    The episode layer calls :meth:`label_episode` first, so that errors and
    the stderr log name the episode; the agent process is never told.
    """

    def __init__(self, argv: list[str], timeout: float, *, log_dir: str | None = None) -> None:
        self._argv = argv
        self._timeout = timeout
        self._log_dir = log_dir
        self._episode: tuple[str, int] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self._step = 0
        self._mark = new_mark()

    def label_episode(self, scenario_id: str, seed: int) -> None:
        """Name the episode this agent plays (for the stderr log; never sent to the process).

        With a log folder, the log's path is checked now, before the agent
        starts, so that a path the log could not be saved to stops the
        episode before it is played.

        Raises:
            AgentError: the log folder or file is refused (:func:`check_log_file`).
        """
        if self._log_dir is not None:
            check_log_file(Path(self._log_dir) / stderr_log_name(scenario_id, seed))
        self._episode = (scenario_id, seed)

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0,
                process_group=0,  # a group of its own: ended as a whole with the episode
                env={**os.environ, MARK_VAR: self._mark},  # and marked: what leaves the group is found too
            )
        except OSError as exc:
            raise AgentError(f"cannot start external agent {shlex.join(self._argv)!r}: {exc.strerror}") from None
        os.set_blocking(proc.stdout.fileno(), False)  # type: ignore[union-attr]
        return proc

    def _name(self) -> str:
        return f"external agent {shlex.join(self._argv)!r}"

    def _error(self, message: str) -> AgentError:
        """An AgentError whose message ends with the agent's last stderr lines."""
        tail = read_tail(self._stderr.fileno()) if not self._stderr.closed else ()
        return AgentError(message + describe_tail(tail), stderr_tail=tail)

    def _died(self) -> AgentError:
        """The agent closed its output: wait for it to exit (up to the timeout), end its group, say why."""
        proc, self._proc = self._proc, None
        assert proc is not None
        deadline = time.monotonic() + self._timeout
        while not _exited(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = not _exited(proc.pid)
        _finish(proc, self._mark)
        if alive:  # stdout closed but the process lived on: it could no longer answer
            return self._error(f"{self._name()} closed its output at step {self._step} and was stopped")
        return self._error(f"{self._name()} exited with status {proc.returncode} at step {self._step}")

    def __call__(self, observation: Observation) -> Any:
        if self._proc is None:
            self._proc = self._start()
        proc = self._proc
        self._step = observation.step + 1
        try:
            proc.stdin.write(observation.to_json().encode("ascii") + b"\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ConnectionResetError):
            raise self._died() from None
        line = self._read_line(proc)
        try:
            action = parse_json(line, where="reply", max_values=AGENT_REPLY.max_values)
        except CanonicalFormError as exc:
            raise self._error(f"{self._name()} answered step {self._step} with malformed JSON: {line[:120]!r} "
                              f"({exc})") from None
        if not isinstance(action, dict):
            raise self._error(f"{self._name()} answered step {self._step} with a {type(action).__name__}, "
                              "not a JSON object")
        return action

    def _read_line(self, proc: subprocess.Popen[bytes]) -> bytes:
        fd = proc.stdout.fileno()  # type: ignore[union-attr]
        deadline = time.monotonic() + self._timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self._end_process()  # first, so that the tail holds all it wrote
                    raise self._error(f"{self._name()} gave no answer within {self._timeout:g} s at step {self._step}")
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise self._died()
                self._buffer += chunk
                if len(self._buffer) > _MAX_LINE and b"\n" not in self._buffer[:_MAX_LINE + 1]:
                    raise self._error(f"{self._name()} sent a line longer than the cap of {_MAX_LINE} bytes "
                                      f"at step {self._step}")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """End the agent process, save its stderr log (with a log folder) and release the capture file.

        Raises:
            AgentError: the stderr log cannot be written.
        """
        self._end_process()
        if self._stderr.closed:
            return
        try:
            if self._log_dir is not None and self._episode is not None:
                self._save_log(Path(self._log_dir) / stderr_log_name(*self._episode))
        finally:
            self._stderr.close()

    def _save_log(self, target: Path) -> None:
        """Write the captured stderr to ``target`` through the output policy (the end of it past MAX_LOG_BYTES)."""
        from ..io.atomic import atomic_write_bytes

        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            check_log_folder(target.parent)  # again: it may have been swapped for a link meanwhile
            atomic_write_bytes(target, self._log_chunks())
        except (OSError, EmberError) as exc:
            raise AgentError(f"cannot save the agent's stderr log {target}: {exc}") from None
        _log.info("agent stderr saved to %s", target)

    def _log_chunks(self) -> Iterator[bytes]:
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        offset = max(0, size - MAX_LOG_BYTES)
        if offset:
            yield f"[emberbench: the first {offset} bytes of this stderr were dropped]\n".encode("ascii")
        while offset < size and (chunk := os.pread(fd, min(1 << 20, size - offset), offset)):
            offset += len(chunk)
            yield chunk

    def _end_process(self) -> None:
        """End the agent: close its stdin, give it a moment to exit, then end its whole process group."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _finish(proc, self._mark, grace=_CLOSE_GRACE)


def _finish(proc: subprocess.Popen[bytes], mark: str, *, grace: float = 0.0) -> None:
    """Close the agent's pipes and end everything it started (:func:`_end_all`)."""
    try:
        proc.stdin.close()  # type: ignore[union-attr]
    except OSError:
        pass
    _end_all(proc, mark, grace=grace)
    proc.stdout.close()  # type: ignore[union-attr]


def _end_all(proc: subprocess.Popen[bytes], mark: str, *, grace: float = 0.0) -> None:
    """Wait up to ``grace`` seconds for the agent to exit, then SIGKILL all it started, then reap it.

    :func:`emberbench.policies.agent_tree.end_agent` ends its process group,
    its descendants and its marked processes while the leader is not yet
    reaped (it is at most a zombie), so its id cannot have been reused by an
    unrelated process.
    """
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not _exited(proc.pid):
        time.sleep(0.01)
    end_agent(proc.pid, mark)
    proc.wait()


def _exited(pid: int) -> bool:
    """True when the child ``pid`` has exited (left unreaped, so ``Popen`` still owns its status)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None
