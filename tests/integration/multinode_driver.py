"""Driver of the multi-node test, run as ``python -m tests.integration.multinode_driver OUT_DIR``.

It runs in its own process because the test session's Ray connection belongs
to the pytest process. It starts a two-node Ray cluster on 127.0.0.1 (a head
and a second node, one CPU each, via ``ray.cluster_utils.Cluster``), then

1. runs the dev manifest with ``greedy`` on two workers: ``a.json``;
2. runs it with ``fire-aware`` (slower episodes, so that the second node is
   busy) and removes the second node after 10 episodes: ``b.json``;

and prints a JSON summary (episodes per node, lost calls) on its last line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out_dir: Path) -> None:
    from ray.cluster_utils import Cluster

    from emberbench.cluster import RayExecutor, ray_session
    from emberbench.results.manifest import build_manifest
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.sim.suite import load_suite

    fast_failure_detection = {"health_check_period_ms": 500, "health_check_timeout_ms": 500,
                              "health_check_failure_threshold": 3}
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False,
        "_system_config": fast_failure_detection,
    })
    second = cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    summary: dict[str, object] = {}
    suite = load_suite()
    manifest = build_manifest(suite, [0, 1, 2, 3, 4])
    try:
        with ray_session(cluster.address, workers=2) as info:
            summary["nodes"] = info.nodes
            store = open_store(out_dir / "store-a")
            with RayExecutor(suite, "greedy", workers=2, store_root=store.root) as ex:
                run_evaluation(manifest, suite, "greedy", "g", out_dir / "a.json", executor=ex, store=store)
                summary["a_by_node"] = sorted(ex.stats.episodes_by_node.values())
            store = open_store(out_dir / "store-b")
            removed: list[bool] = []

            def progress(done: int, total: int) -> None:
                if done >= 10 and not removed:
                    cluster.remove_node(second, allow_graceful=False)
                    removed.append(True)

            with RayExecutor(suite, "fire-aware", workers=2, store_root=store.root, target_call_seconds=0.2) as ex:
                run_evaluation(manifest, suite, "fire-aware", "f", out_dir / "b.json", executor=ex, store=store,
                               progress=progress)
                summary["b_by_node"] = sorted(ex.stats.episodes_by_node.values())
                summary["b_failed_calls"] = ex.stats.failed_calls
                summary["removed"] = bool(removed)
    finally:
        cluster.shutdown()
    print(json.dumps(summary))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
