"""Shared test configuration: derandomized Hypothesis profiles, automatic markers and common fixtures."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.hypothesis_profiles import load_profile
# The automatic markers and the check that a test carries the marker of each server fixture it
# reaches (tests/markers.py); importing the hooks here registers them.
from tests.markers import pytest_collection_modifyitems, pytest_fixture_setup  # noqa: F401
from tests.markers import pytest_runtest_call, pytest_runtest_protocol  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]

# pytester: tests/unit/test_test_selection.py runs pytest on small suites of its own.
pytest_plugins = ("pytester",)

load_profile()

# S3 tests talk only to the loopback test server (tests/s3server.py): fake
# credentials for the whole session (also inherited by Ray workers started
# later), no profile or config file of the user's, no instance metadata.
for _var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_PROFILE"):
    os.environ.pop(_var, None)
os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
                   "AWS_CONFIG_FILE": str(ROOT / ".no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(ROOT / ".no-aws-credentials")})


@pytest.fixture(scope="session")
def suite():
    """The public suite, loaded once."""
    from emberbench.sim.suite import load_suite

    return load_suite()


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (for subprocess tests)."""
    return sys.executable


@pytest.fixture(scope="session", autouse=True)
def _cli_built_once() -> Iterator[None]:
    """typer's test runner rebuilds the whole click command tree on every ``invoke`` (about 70 ms, most of
    a CLI test's time); the suite builds each app's tree once and hands the same object back."""
    import typer.testing

    real = typer.testing._get_command
    built: dict[int, tuple[object, object]] = {}

    def once(app):  # noqa: ANN001, ANN202
        if id(app) not in built:
            built[id(app)] = (app, real(app))  # the app is kept, so its id is not reused
        return built[id(app)][1]

    typer.testing._get_command = once
    yield
    typer.testing._get_command = real


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


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything alive after collection (modules, test items, their parameters) out of the collector's way.

    These objects live for the whole session. Left in the oldest generation, each full collection walks all of
    them again: about 0.1-0.2 s a call on this project's 2-core machines, and tests that call ``gc.collect()``
    before a file snapshot (dropped stores hold lease files until collected) spent more than half the quick
    loop's CPU there. Frozen, a collection costs what the running test made.
    """
    gc.collect()
    gc.freeze()


_WORKER_CHECKS = {"checked": 0, "seconds": 0.0}
"""What the xdist workers reported of their schema checks (the controller's summary adds them up)."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand the schema-check counts to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["schema_checked"] = _WRITE_CHECK.checked
        workeroutput["schema_seconds"] = _WRITE_CHECK.seconds


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001
    """Add up a finished worker's schema-check counts."""
    output = getattr(node, "workeroutput", {})
    _WORKER_CHECKS["checked"] += output.get("schema_checked", 0)
    _WORKER_CHECKS["seconds"] += output.get("schema_seconds", 0.0)


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    """Say how many written documents were checked against schemas, and how long it took."""
    checked = _WRITE_CHECK.checked + _WORKER_CHECKS["checked"]
    seconds = _WRITE_CHECK.seconds + _WORKER_CHECKS["seconds"]
    if checked:
        terminalreporter.write_line(f"schema check of written documents: {checked} distinct "
                                    f"documents in {seconds:.2f} s")
    terminalreporter.write_line(f"hypothesis profile: {settings.get_current_profile_name()} "
                                f"({settings().max_examples} examples per property unless a test says otherwise)")


@pytest.fixture(scope="session")
def s3_endpoint():
    """The endpoint URL of a real S3-compatible server on 127.0.0.1, started once per session."""
    from tests import s3server

    try:
        server = s3server.start()
    except RuntimeError as exc:
        if os.environ.get("CI") == "true":  # in CI the S3 tests must run, not skip
            pytest.fail(f"no S3 test server: {exc}")
        pytest.skip(f"no S3 test server: {exc}")
    yield server.endpoint
    server.stop()


_S3_PREFIXES = iter(range(1_000_000))


@pytest.fixture
def s3_locator(s3_endpoint: str) -> str:
    """A fresh, empty store locator on the test server (its own prefix in the shared bucket)."""
    from tests import s3server

    return f"s3://{s3server.BUCKET}/t{next(_S3_PREFIXES):06d}-{os.getpid()}?endpoint={s3_endpoint}"


@pytest.fixture(scope="session")
def model_server():
    """A local OpenAI-compatible test server on 127.0.0.1 (tests/model_server.py), started once per session."""
    from tests import model_server as module

    try:
        server = module.start()
    except RuntimeError as exc:
        if os.environ.get("CI") == "true":  # in CI the served-model tests must run, not skip
            pytest.fail(f"no model test server: {exc}")
        pytest.skip(f"no model test server: {exc}")
    yield server
    server.stop()
