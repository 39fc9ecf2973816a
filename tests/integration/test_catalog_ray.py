"""`runs verify` with replay on Ray: the same verdicts as in process, for a stored result and for a journal."""

from __future__ import annotations

import pytest

from emberbench.runs.catalog import iter_catalog
from emberbench.runs.verify import verify_run
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.run_support import small_manifest
from tests.unit.test_catalog import _StopsAtThird


@pytest.mark.ray
def test_verify_on_ray_matches_in_process(ray_cluster, suite, tmp_path, s3_locator) -> None:  # noqa: ANN001
    """On an S3 store, a complete run is `ok` and a stopped run `partial` with Ray replay, as in process."""
    from emberbench.cluster import RayAuthenticator

    store = open_store(s3_locator)
    manifest = small_manifest(suite)
    run_evaluation(manifest, suite, "greedy", "whole", tmp_path / "w.json", store=store)
    with pytest.raises(RuntimeError, match="stop"):
        run_evaluation(manifest, suite, _StopsAtThird(), "half", tmp_path / "h.json", store=store,
                       policy_spec="greedy")
    rows = {row.info.model_id: row for row in iter_catalog(store)}
    with RayAuthenticator(2) as authenticator:
        verdicts = {model: verify_run(store, row.hex_id[:8], suite, authenticator=authenticator)
                    for model, row in rows.items()}
    local = {model: verify_run(store, row.hex_id[:8], suite) for model, row in rows.items()}
    assert {m: (v.verdict, v.detail) for m, v in verdicts.items()} == {m: (v.verdict, v.detail) for m, v in local.items()}
    assert verdicts["whole"].verdict == "ok" and verdicts["half"].verdict == "partial"
    store.close()
