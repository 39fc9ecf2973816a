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


# Every JSON document written through the atomic writer is checked against its
# schema after the test that wrote it (tests/schema_writes.py).
from tests.schema_writes import CHECK as _WRITE_CHECK  # noqa: E402
from tests.schema_writes import install as _install_write_check  # noqa: E402

_install_write_check()


@pytest.fixture(autouse=True)
def _written_documents_match_their_schemas():
    """After each test: the JSON documents it wrote validate against their schemas."""
    yield
    problems = _WRITE_CHECK.check()
    if problems:
        pytest.fail("written documents break their schemas:\n" + "\n".join(problems), pytrace=False)


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    """Say how many written documents were checked against schemas, and how long it took."""
    if _WRITE_CHECK.checked:
        terminalreporter.write_line(f"schema check of written documents: {_WRITE_CHECK.checked} distinct "
                                    f"documents in {_WRITE_CHECK.seconds:.2f} s")
