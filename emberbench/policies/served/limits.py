"""Limits per server: requests in flight (a semaphore) and requests started per time window.

One :class:`RequestGate` serves every policy of the process that talks to
the same server (:func:`gate_for`), so the limits hold across episodes and,
once several episodes run at once, across them too. Every attempt, retries
included, passes the gate. Limits change when requests are sent, never what
they say.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Callable, Iterator


class RateLimiter:
    """At most ``max_requests`` starts in any ``window`` seconds (a sliding window of start times).

    Args:
        max_requests: starts allowed per window; 0 means no limit.
        window: the window's length in seconds (60 for requests per minute).
    """

    def __init__(self, max_requests: int, window: float = 60.0, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if not isinstance(max_requests, int) or max_requests < 0:
            raise ValueError(f"max_requests must be a non-negative integer, got {max_requests!r}")
        if not window > 0:
            raise ValueError(f"window must be positive, got {window!r}")
        self.max_requests = max_requests
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._starts: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait until a start is allowed, then count one; returns the seconds waited."""
        if self.max_requests == 0:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                while self._starts and self._starts[0] <= now - self.window:
                    self._starts.popleft()
                if len(self._starts) < self.max_requests:
                    self._starts.append(now)
                    return waited
                pause = self._starts[0] + self.window - now
            self._sleep(pause)
            waited += pause


class RequestGate:
    """The limits of one server: ``concurrency`` requests in flight, ``per_minute`` starts a minute.

    Args:
        concurrency: requests in flight at once, at least 1.
        limiter: the start-rate limit.
    """

    def __init__(self, concurrency: int, limiter: RateLimiter) -> None:
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an integer of at least 1, got {concurrency!r}")
        self.concurrency = concurrency
        self.limiter = limiter
        self._slots = threading.BoundedSemaphore(concurrency)

    @contextlib.contextmanager
    def slot(self) -> Iterator[float]:
        """Hold one request slot; yields the seconds spent waiting for it (semaphore and rate)."""
        start = time.monotonic()
        with self._slots:
            waited_rate = self.limiter.acquire()
            yield max(waited_rate, time.monotonic() - start)


_GATES: dict[tuple[str, int, int], RequestGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(server: str, concurrency: int, per_minute: int) -> RequestGate:
    """The process's gate for ``server`` with these limits (made on first use, then shared)."""
    key = (server, concurrency, per_minute)
    with _GATES_LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = RequestGate(concurrency, RateLimiter(per_minute, 60.0))
        return gate


__all__ = ["RateLimiter", "RequestGate", "gate_for"]
