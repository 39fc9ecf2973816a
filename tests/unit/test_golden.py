"""Golden samples of every saved format: today's code reads them and writes them byte for byte;
samples of a future version are refused with a clear message."""

from __future__ import annotations

import json

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.records.episode import authenticate_bytes, play_episode
from emberbench.errors import ManifestError, RecordAuthenticationError, ResultError
from emberbench.results.manifest import load_manifest
from emberbench.records.metrics import metrics_from_dict
from emberbench.policies import GreedyPolicy
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def test_golden_record_and_metrics_are_reproduced(suite) -> None:  # noqa: ANN001
    """Playing the golden episode again gives the golden record and metrics bytes exactly."""
    record, metrics = play_episode(suite.scenario("v1-pub-01-single-exit-sparse"), 0, GreedyPolicy())
    assert record.canonical_bytes() + b"\n" == (GOLDEN / "record-1.0.json").read_bytes()
    assert canonical_bytes(metrics.to_dict()) + b"\n" == (GOLDEN / "metrics-1.0.json").read_bytes()
    assert authenticate_bytes((GOLDEN / "record-1.0.json").read_bytes(), suite) == metrics
    assert metrics_from_dict(json.loads((GOLDEN / "metrics-1.0.json").read_text())) == metrics


def test_golden_manifest_and_result_load_and_regenerate(tmp_path, suite) -> None:  # noqa: ANN001
    """The golden manifest loads; running it again writes the golden result byte for byte."""
    manifest = load_manifest(GOLDEN / "manifest-1.0.json", suite)
    result = load_result(GOLDEN / "result-1.0.json", suite)
    assert result.manifest == manifest and result.model_id == "golden-greedy"
    out = tmp_path / "again.json"
    run_evaluation(manifest, suite, "greedy", "golden-greedy", out)
    assert out.read_bytes() == (GOLDEN / "result-1.0.json").read_bytes()


@pytest.mark.parametrize(("name", "error", "message"), [
    ("record-future.json", RecordAuthenticationError, "unsupported record_version '2.0'"),
    ("manifest-future.json", ManifestError, "unsupported manifest_version '2.0'"),
    ("result-future.json", ResultError, "unsupported result_version '2.0'"),
])
def test_future_versions_are_refused(suite, name, error, message) -> None:  # noqa: ANN001
    """A sample of a newer format version is refused, naming the version."""
    path = GOLDEN / name
    with pytest.raises(error, match=message):
        if name.startswith("record"):
            authenticate_bytes(path.read_bytes(), suite)
        elif name.startswith("manifest"):
            load_manifest(path, suite)
        else:
            load_result(path, suite)


def test_future_metrics_version_is_refused() -> None:
    """Stored metrics of a newer version are refused."""
    with pytest.raises(RecordAuthenticationError, match="unsupported metrics_version '2.0'"):
        metrics_from_dict(json.loads((GOLDEN / "metrics-future.json").read_text()))


def test_core_import_leaves_ray_and_store_out() -> None:
    """Importing the core and the CLI does not import ray or the store package."""
    import subprocess
    import sys

    code = ("import sys, emberbench, emberbench.records.episode, emberbench.results.artifact, emberbench.evaluation.runner, "
            "emberbench.statistics, emberbench.cli.main; "
            "print(sorted(m for m in ('ray', 'emberbench.store', 'emberbench.cluster') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
