"""Checking, within a bounded time, that a Ray cluster address can be joined.

``ray.init(address=...)`` retries an address it cannot reach without end,
printing its client's log lines (``gcs_client.cc ... TimedOut``) every half
minute, and a blocked ``ray.init`` cannot be interrupted from Python. So
before joining, the CLI joins once in a child process (:func:`probe_cluster`)
and gives it a bounded time: a cluster that does not answer in time, or
refuses (a wrong token, no GCS at that port), is one line, and the child is
killed with whatever it started. The price is one extra short connection
(about a second or two) for commands that join a cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from emberbench.errors import ClusterError

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds a cluster gets to answer (the CLI's ``EMBERBENCH_CONNECT_TIMEOUT`` overrides it)."""

_PROBE = """
import logging, sys
import ray
ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
print(int(ray.cluster_resources().get("CPU", 0)), flush=True)
ray.shutdown()
"""


def probe_cluster(address: str, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> int:
    """Join the Ray cluster at ``address`` once, in a child process, within ``timeout`` seconds.

    Returns:
        The cluster's CPU count.

    Raises:
        ClusterError: no answer within ``timeout`` seconds, or the join
            failed (the message holds Ray's reason, one line).
    """
    from .session import require_token_auth

    require_token_auth()
    try:
        child = subprocess.Popen([sys.executable, "-c", _PROBE, address], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise ClusterError(f"cannot check the Ray cluster at {address}: {exc}") from None
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"cannot join the Ray cluster at {address}: no answer within {timeout:g} s "
                           "(EMBERBENCH_CONNECT_TIMEOUT sets how long to wait)") from None
    finally:
        _end(child)
    if child.returncode != 0:
        raise ClusterError(f"cannot join the Ray cluster at {address}: {last_error_line(err)}")
    try:
        return int(out.split()[-1])
    except (IndexError, ValueError):
        raise ClusterError(f"cannot join the Ray cluster at {address}: the check printed no CPU count") from None


def _end(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole session if the child still runs (not yet reaped, so its id is still its own); reap it."""
    if child.returncode is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    child.wait()


def last_error_line(stderr: bytes) -> str:
    """The most telling line of a failed Ray call's stderr: its exception, without Ray's log prefixes."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in reversed(lines):
        if not line.startswith(("[", "File ", "Traceback", "^")) and ("Error" in line or "Exception" in line):
            return line[:300]
    return lines[-1][:300] if lines else "the check failed without a message"
