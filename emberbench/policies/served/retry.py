"""The one retry policy of served models: exponential backoff with full jitter, Retry-After honoured,
a cap on attempts and a cap on total time.

Only failures that a later attempt may cure are retried (:class:`Transient`:
HTTP 429, 408 and 5xx, timeouts, connections refused or cut); everything
else fails at once. The wait before attempt ``n + 1`` is drawn uniformly
from ``[0, min(max_backoff, first_backoff * 2**(n - 1))]`` and is never
shorter than the server's ``Retry-After``. Jitter only changes *when* a
request is sent, never what is sent or what is done with the answer, so it
cannot change a record; it comes from a generator of its own, seeded from
the operating system, never from the episode.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


class Transient(Exception):
    """A failure worth another attempt.

    Attributes:
        cause: one line saying what happened (``HTTP 503: overloaded``).
        retry_after: seconds the server asked to wait, or None.
    """

    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after


class GaveUp(Exception):
    """Retries are spent. ``cause`` is the last failure, ``why`` the cap that ended the retries."""

    def __init__(self, cause: str, why: str, attempts: int, seconds: float) -> None:
        super().__init__(f"{why}: {cause}")
        self.cause = cause
        self.why = why
        self.attempts = attempts
        self.seconds = seconds


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When to try again.

    Attributes:
        max_attempts: attempts in all (the first one included), at least 1.
        max_seconds: the most time one answer may take, retries and waits included.
        first_backoff: the upper bound of the first wait, in seconds.
        max_backoff: the largest upper bound of any wait.
    """

    max_attempts: int = 6
    max_seconds: float = 300.0
    first_backoff: float = 1.0
    max_backoff: float = 60.0

    def __post_init__(self) -> None:
        if not (isinstance(self.max_attempts, int) and self.max_attempts >= 1):
            raise ValueError(f"max_attempts must be an integer of at least 1, got {self.max_attempts!r}")
        for name in ("max_seconds", "first_backoff", "max_backoff"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The jittered wait after failed attempt ``attempt`` (1-based), before Retry-After."""
        return rng.uniform(0.0, min(self.max_backoff, self.first_backoff * 2.0 ** min(attempt - 1, 60)))


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), or None.

    Header names are matched case-insensitively by the caller's mapping
    (httpx's headers are). A value that cannot be read is ignored.
    """
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        return max(0.0, when - (time.time() if now is None else now))
    return value if math.isfinite(value) and value >= 0 else None


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy, *, rng: random.Random | None = None,
                      sleep: Callable[[float], None] = time.sleep,
                      clock: Callable[[], float] = time.monotonic,
                      on_retry: Callable[[float], None] | None = None) -> T:
    """Call ``attempt`` until it returns, raises something other than :class:`Transient`, or a cap is hit.

    Args:
        attempt: one try; raises :class:`Transient` for a failure worth retrying.
        policy: the caps and the backoff.
        rng: the jitter's generator (default: a new one seeded by the operating system).
        sleep, clock: how to wait and how to tell time (monotonic).
        on_retry: called with each wait before it is slept (for accounting).

    Raises:
        GaveUp: the attempts are spent, or the next wait would pass ``max_seconds``.
    """
    rng = rng if rng is not None else random.Random()
    start = clock()
    tries = 0
    while True:
        tries += 1
        try:
            return attempt()
        except Transient as exc:
            elapsed = clock() - start
            spent = f"gave up after {tries} attempt{'s' if tries > 1 else ''} in {elapsed:.1f} s"
            if tries >= policy.max_attempts:
                raise GaveUp(exc.cause, spent, tries, elapsed) from None
            wait = policy.backoff(tries, rng)
            if exc.retry_after is not None:
                wait = max(wait, exc.retry_after)
            if elapsed + wait > policy.max_seconds:
                asked = f" (the server asked for {exc.retry_after:g} s)" if exc.retry_after is not None else ""
                raise GaveUp(exc.cause, f"{spent}: waiting {wait:.1f} s more{asked} would pass the "
                             f"{policy.max_seconds:g} s limit", tries, elapsed) from None
            if on_retry is not None:
                on_retry(wait)
            sleep(wait)


__all__ = ["GaveUp", "RetryPolicy", "Transient", "call_with_retries", "parse_retry_after"]
