"""``bench_cluster.py ceiling``: episodes per second one coordinator takes in when episodes cost almost nothing.

The parent side (:func:`ceiling`) plays the outcomes once and measures each
side as a child process of ``bench_cluster.py``; the child side
(:func:`intake`) takes them in. On Ray the workers are :class:`_Replayer`
actors, which Ray ships by value (this module is not importable on the
workers).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emberbench.results.manifest import build_manifest

BENCH = Path(__file__).with_name("bench_cluster.py")


SMALLEST = "v1-pub-01-single-exit-sparse"


def ceiling(args: argparse.Namespace) -> None:
    """Episodes per second one coordinator takes in when episodes cost almost nothing.

    Every side takes in the same ``--episodes`` outcomes of ``stay`` on the
    smallest public scenario, played once beforehand, with a fresh local
    store, and must write the same artifact:

    * in process, records already stored: the coordinator alone, as a Ray
      driver works (journal, checkpoints, run-info, assembly);
    * in process, with the record puts an in-process run also makes;
    * on Ray: the real executor and driver, fed by workers that hand back the
      pre-played outcomes at once (the play is all they skip), so the driver
      is the bottleneck and its wall rate is its ceiling;
    * with ``--play``, on Ray with workers that really play: the driver's CPU
      seconds per episode bound what it takes in.
    """
    from _proc_cpu import measure

    from emberbench.evaluation.runner import play_to_outcome
    from emberbench.policies.spec import resolve_policy
    from emberbench.results.manifest import write_manifest
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    manifest = build_manifest(suite, list(range(args.episodes)), scenario_ids=[SMALLEST])
    n = len(manifest.episodes)
    base = Path(tempfile.mkdtemp(prefix="bench-ceiling-", dir=args.dir))
    try:
        write_manifest(manifest, base / "m.json")
        factory = resolve_policy("stay")
        played = [play_to_outcome(suite, e, factory) for e in manifest.episodes]
        _write_played(played, base / "played.msgpack")
        print(f"{n} episodes of 'stay' on {SMALLEST}, played beforehand; a fresh local store each; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
        reference: bytes | None = None
        rows: list[tuple[str, float, float]] = []
        for i in range(args.repeat):
            for what in ("stored", "puts", "ray"):
                job = {"what": "intake", "side": what, "workers": args.workers, "manifest": str(base / "m.json"),
                       "played": str(base / "played.msgpack"), "out": str(base / f"{what}{i}.json"),
                       "store": str(base / f"st-{what}{i}"), "executor": "ray" if what == "ray" else "local"}
                measured = measure([sys.executable, str(BENCH), "child", json.dumps(job)])
                data = (base / f"{what}{i}.json").read_bytes()
                if reference is None:
                    reference = data
                elif data != reference:
                    raise SystemExit(f"{what} wrote different bytes")
                driver = measured.kinds_between("up", "end").get("driver", 0.0)
                wall = measured.window_wall()
                rows.append((what, wall, driver))
                label = {"stored": "in process, records already stored", "puts": "in process, with record puts",
                         "ray": f"Ray driver, {args.workers} workers replaying"}[what]
                print(f"  {label:38} {wall:6.2f} s wall {driver:6.2f} CPU s (driver): {n / wall:6.0f} episodes/s, "
                      f"{1000 * driver / n:.3f} ms CPU per episode ({n / max(driver, 1e-9):.0f} per CPU second)"
                      f"{'; ' + ' '.join(measured.lines) if measured.lines else ''}", flush=True)
                shutil.rmtree(base / f"st-{what}{i}", ignore_errors=True)
        for what in ("stored", "puts", "ray"):
            best = min((wall for side, wall, _ in rows if side == what))
            print(f"best {what}: {n / best:.0f} episodes/s (target >= 2,000)")
        if args.play:
            job = {"what": "run", "executor": "ray", "workers": args.workers, "policy": "stay",
                   "manifest": str(base / "m.json"), "out": str(base / "play.json"), "store": str(base / "st-play")}
            measured = measure([sys.executable, str(BENCH), "child", json.dumps(job)])
            if (base / "play.json").read_bytes() != reference:
                raise SystemExit("the played run wrote different bytes")
            driver = measured.kinds_between("up", "end").get("driver", 0.0)
            print(f"Ray, {args.workers} workers playing: {measured.window_wall():.2f} s wall (the workers' play bounds "
                  f"it); the driver spent {driver:.2f} CPU s = {1000 * driver / n:.3f} ms per episode: up to "
                  f"{n / max(driver, 1e-9):.0f} episodes per CPU second of the driver; {' '.join(measured.lines)}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _write_played(played: list[Any], path: Path) -> None:
    import msgpack

    rows = [[o.index, o.record_digest, o.metrics_bytes, record] for o, record in played]
    path.write_bytes(msgpack.packb(rows, use_bin_type=True))


def _read_played(path: str) -> list[tuple[Any, bytes]]:
    import msgpack

    from emberbench.evaluation.outcome import EpisodeOutcome

    rows = msgpack.unpackb(Path(path).read_bytes(), raw=False)
    return [(EpisodeOutcome(index, digest, None, metrics), record) for index, digest, metrics, record in rows]


def _time_the_close() -> None:
    """Have the run's close (the final artifact: every record read back, the result stored) print its cost."""
    import atexit

    from emberbench.evaluation import store_runner

    spent: list[tuple[float, float]] = []
    real = store_runner.StoreSink.close

    def close(self: Any, *args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return real(self, *args, **kwargs)
        finally:
            spent.append((time.perf_counter() - wall, time.process_time() - cpu))

    store_runner.StoreSink.close = close  # type: ignore[method-assign]
    atexit.register(lambda: spent and print(f"of which the close (final artifact) {spent[0][0]:.2f} s wall "
                                            f"{spent[0][1]:.2f} CPU s", flush=True))


class _Replayer:
    """A Ray actor standing in for an episode worker: it hands back outcomes played beforehand at once."""

    def __init__(self, rows: list[list[Any]]) -> None:
        import socket

        import ray

        self.rows = {row[0]: row for row in rows}
        self.node_id, self.host = ray.get_runtime_context().get_node_id(), socket.gethostname()

    def run_batch(self, suite_hash: str, suite_holder: list[Any], tasks: bytes) -> tuple[bytes, None]:
        from emberbench.cluster.codec import decode_tasks, encode_reply

        from emberbench.evaluation.outcome import EpisodeOutcome

        outcomes = []
        for entry in decode_tasks(tasks):
            index, digest, metrics, size = self.rows[entry.index]
            outcomes.append(EpisodeOutcome(index, digest, None, metrics, record_size=size))
        return encode_reply(self.node_id, self.host, 1e-4 * len(outcomes), outcomes), None

    def where(self) -> tuple[int, str]:
        return os.getpid(), self.node_id

    def release(self) -> None:
        return None


def intake(spec: dict[str, Any], suite: Any, mark: Callable[[str], None]) -> None:
    """One side of ``ceiling``: the coordinator takes in outcomes played beforehand."""
    from emberbench.evaluation.outcome import EpisodeOutcome
    from emberbench.evaluation.runner import run_evaluation, stored_behind
    from emberbench.evaluation.store_runner import open_store
    from emberbench.results.manifest import load_manifest

    manifest = load_manifest(spec["manifest"], suite)
    played = _read_played(spec["played"])
    store = open_store(spec["store"])
    _time_the_close()
    if spec["side"] != "puts":
        for outcome, record in played:  # as the workers leave them: every record stored, its size reported
            store.put(record, key=outcome.record_digest)
    if spec["side"] == "ray":
        from emberbench.cluster import RayExecutor, ray_session

        class Replaying(RayExecutor):
            def _new_actor(self) -> Any:
                import ray  # after ray_session: it sets Ray's token variables before Ray is imported
                from ray import cloudpickle

                cloudpickle.register_pickle_by_value(sys.modules[__name__])
                rows = [[o.index, o.record_digest, o.metrics_bytes, len(r)] for o, r in played]
                return ray.remote(_Replayer).options(**self.actor_options()).remote(rows)

        with ray_session(workers=spec["workers"]) as info, Replaying(
                suite, "stay", workers=info.workers, store_root=store.locator, store=store) as ex:
            mark("up")
            run_evaluation(manifest, suite, "stay", "m", spec["out"], executor=ex, store=store)
            mark("end")
            print(f"calls {ex.stats.calls}", flush=True)
        return

    class Played:
        def run(self, tasks: Any) -> Any:
            chosen = [played[e.index] for e in tasks]
            if spec["side"] == "puts":  # an in-process run's puts, behind play
                return stored_behind(store, iter(chosen), len(chosen))
            return (EpisodeOutcome(o.index, o.record_digest, None, o.metrics_bytes, record_size=len(r))
                    for o, r in chosen)

    mark("up")
    run_evaluation(manifest, suite, "stay", "m", spec["out"], executor=Played(), store=store)
    mark("end")
