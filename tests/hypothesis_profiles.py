"""The Hypothesis profiles of the test suite: ``ci`` keeps the full example count, ``dev`` is the everyday one.

Both are derandomized (the same examples on every run, so a failure
reproduces) and have no deadline (a loaded machine must not fail a test).
``ci`` runs :data:`CI_EXAMPLES` examples per property and is chosen when
``CI=true``; everywhere else ``dev`` runs :data:`DEV_EXAMPLES`, which keeps a
local run of the whole suite short. ``EMBERBENCH_HYPOTHESIS_PROFILE=ci`` runs
CI's count locally; ``EMBERBENCH_HYPOTHESIS_EXAMPLES=N`` sets the count of
either profile.

A test that sets its own ``max_examples`` states it as :func:`examples` of
its CI count, so it too runs fewer examples outside CI and exactly as many as
before in CI.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CI_EXAMPLES = 60
DEV_EXAMPLES = 20
PROFILES = ("ci", "dev")


def profile_name() -> str:
    """``EMBERBENCH_HYPOTHESIS_PROFILE`` if set, else ``ci`` under ``CI=true``, else ``dev``."""
    name = os.environ.get("EMBERBENCH_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
    if name not in PROFILES:
        raise ValueError(f"EMBERBENCH_HYPOTHESIS_PROFILE={name!r}: expected one of {', '.join(PROFILES)}")
    return name


def examples(ci_count: int) -> int:
    """The ``max_examples`` of a test whose CI count is ``ci_count``, under the current profile (at least 5)."""
    if profile_name() == "ci":
        return ci_count
    return max(5, round(ci_count * DEV_EXAMPLES / CI_EXAMPLES))


def load_profile() -> None:
    """Register both profiles and load the one this run uses."""
    override = os.environ.get("EMBERBENCH_HYPOTHESIS_EXAMPLES")
    for name, count in (("ci", CI_EXAMPLES), ("dev", DEV_EXAMPLES)):
        settings.register_profile(
            name,
            derandomize=True,
            deadline=None,
            max_examples=int(override) if override else count,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
            print_blob=True,
        )
    settings.load_profile(profile_name())
