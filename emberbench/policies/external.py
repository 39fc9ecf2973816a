"""External agents: a policy that is a separate process speaking JSON lines.

Protocol (docs/model-interface.md): for every step the runner writes the
observation's canonical JSON and a newline to the agent's stdin, and reads one
line from its stdout: a JSON object mapping each person id inside to a move.
A fresh process is started for every episode and its stdin is closed at the
end. The agent learns nothing but observations.

The run stops with :class:`AgentError` when the agent exits, says nothing
within the timeout, or answers with something that is not one JSON object.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from typing import Any

from ..errors import AgentError
from ..observation import Observation

_MAX_LINE = 16 * 1024 * 1024


class ExternalAgentFactory:
    """Factory for :class:`ExternalAgent` (picklable: holds only the command and timeout).

    Args:
        command: the command line (split with :func:`shlex.split`).
        timeout: seconds allowed for each answer.
    """

    def __init__(self, command: str, *, timeout: float) -> None:
        argv = shlex.split(command)
        if not argv:
            raise AgentError("cmd: policy needs a command line after 'cmd:'")
        if timeout <= 0:
            raise AgentError(f"agent timeout must be positive, got {timeout}")
        self.command = command
        self.argv = argv
        self.timeout = timeout

    def __call__(self) -> ExternalAgent:
        return ExternalAgent(self.argv, self.timeout)


class ExternalAgent:
    """One agent process for one episode. Call with an observation; close at the end."""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self._argv = argv
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self._step = 0

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0
            )
        except OSError as exc:
            raise AgentError(f"cannot start external agent {shlex.join(self._argv)!r}: {exc.strerror}") from None
        os.set_blocking(proc.stdout.fileno(), False)  # type: ignore[union-attr]
        return proc

    def _name(self) -> str:
        return f"external agent {shlex.join(self._argv)!r}"

    def _stderr_tail(self) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 300))
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return f"; stderr: {tail[-1][:200]}" if tail else ""

    def _died(self) -> AgentError:
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            # stdout closed but the process lives on: it can no longer answer.
            self._proc.kill()
            self._proc.wait()
            return AgentError(f"{self._name()} closed its output at step {self._step} and was stopped")
        return AgentError(f"{self._name()} exited with status {code} at step {self._step}{self._stderr_tail()}")

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
            action = json.loads(line)
        except ValueError:
            raise AgentError(
                f"{self._name()} answered step {self._step} with malformed JSON: {line[:120]!r}"
            ) from None
        if not isinstance(action, dict):
            raise AgentError(f"{self._name()} answered step {self._step} with a {type(action).__name__}, "
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
                    self.close()
                    raise AgentError(f"{self._name()} gave no answer within {self._timeout:g} s at step {self._step}")
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise self._died()
                self._buffer += chunk
                if len(self._buffer) > _MAX_LINE:
                    raise AgentError(f"{self._name()} sent a line longer than {_MAX_LINE} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """End the agent process: close its stdin, wait briefly, then kill it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
        self._stderr.close()
