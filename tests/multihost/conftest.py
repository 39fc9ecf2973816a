"""Fixtures of the multi-host tests: the rig (one per session), a time bound and a leftover check per test.

The rig (tests/rig, docs/cluster.md) needs root and iproute2. Where it cannot
start, its tests skip with the reason in one line; with ``CI=true`` they fail
instead, since CI runs as root and must run them. After every test the
fixture checks that nothing the test started is left on any host, and after
the session that no namespace or process of the rig is left on the machine.

Each test declares its time bound on its marker, ``@pytest.mark.multihost(seconds=N)``;
a test still running then is interrupted (SIGALRM) and fails, and whatever it
started on the hosts is killed with its process group.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from tests.rig import Rig, RigConfig, RigError

PREFIX = "ebtest"
"""The test rig's own prefix: running the tests leaves a rig made with ``cluster_rig.py up`` (prefix ebrig) alone."""
DEFAULT_SECONDS = 120


def unavailable(reason: str) -> None:
    """Skip, or fail under ``CI=true``: the multi-host tests must run in CI."""
    reason = " ".join(reason.split())  # one line
    if os.environ.get("CI") == "true":
        pytest.fail(f"multi-host rig: {reason}", pytrace=False)
    pytest.skip(f"multi-host rig: {reason}")


@pytest.fixture(scope="session")
def rig() -> Iterator[Rig]:
    """The running rig: S3 on ``s3``, the Ray head on ``head``, workers ``w1`` and ``w2``, drivers on ``client``."""
    rig = Rig(RigConfig(prefix=PREFIX))
    try:
        rig.up(owned=True)
    except RigError as exc:
        unavailable(str(exc))
    try:
        yield rig
    finally:
        rig.down()
    remains = rig.remains()
    assert not remains, f"left behind by the rig: {remains}"


@pytest.fixture(scope="session")
def manifest(suite):  # noqa: ANN001
    """The manifest every multi-host run plays (tests/multihost/support.py)."""
    from emberbench.results.manifest import build_manifest

    from .support import SEEDS

    return build_manifest(suite, SEEDS)


@pytest.fixture(scope="session")
def reference(suite, manifest, tmp_path_factory) -> bytes:  # noqa: ANN001
    """The artifact of ``greedy`` (model id ``g``) on that manifest, in this process, with a local store."""
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store

    base = tmp_path_factory.mktemp("in-process")
    run_evaluation(manifest, suite, "greedy", "g", base / "g.json", store=open_store(base / "store"))
    return (base / "g.json").read_bytes()


@pytest.fixture(autouse=True)
def _bounded_and_clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """Interrupt a multi-host test at its time bound; after it, nothing it started may be left on a host."""
    marker = request.node.get_closest_marker("multihost")
    seconds = int(marker.kwargs.get("seconds", DEFAULT_SECONDS)) if marker else DEFAULT_SECONDS

    def overtime(signum: int, frame: object) -> None:
        raise TimeoutError(f"{request.node.name} exceeded its bound of {seconds} s")

    previous = signal.signal(signal.SIGALRM, overtime)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if "rig" in request.fixturenames:
        left = request.getfixturevalue("rig").leftovers()
        assert not left, f"left behind on the rig by {request.node.name}: {left}"
