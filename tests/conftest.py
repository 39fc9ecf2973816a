"""Shared test configuration: a derandomized Hypothesis profile and common fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]

settings.register_profile(
    "emberbench",
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("EMBERBENCH_HYPOTHESIS_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("emberbench")


@pytest.fixture(scope="session")
def suite():
    """The public suite, loaded once."""
    from emberbench.suite import load_suite

    return load_suite()


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (for subprocess tests)."""
    return sys.executable
