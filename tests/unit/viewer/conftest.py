"""Fixtures of the presentation tests: small results made once per session."""

from __future__ import annotations

import pytest

from tests.viewer_data import make_results


@pytest.fixture(scope="session")
def results(tmp_path_factory, suite):  # noqa: ANN001
    """stay, greedy and fire-aware results of the small manifest (model id -> path)."""
    return make_results(tmp_path_factory.mktemp("viewer-results"), suite)


@pytest.fixture(scope="session")
def result36(tmp_path_factory, suite):  # noqa: ANN001
    """greedy on the small manifest's three scenarios under twelve seeds: 36 episodes."""
    from tests.viewer_data import make_result

    return make_result(tmp_path_factory.mktemp("viewer-result36"), suite)
