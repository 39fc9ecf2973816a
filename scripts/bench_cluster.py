#!/usr/bin/env python3
"""What Ray costs and gives on this machine: CPU overhead, speed-up, the coordinator's ceiling, the crossover.

Subcommands (``scaling`` when none is given):

``scaling``
    The Ray executor with 1 and 2 workers and parallel verification against
    the in-process baseline, in one process (Ray start-up timed apart). Every
    artifact must be byte-identical to the in-process one.

``cost``
    The same work in process and on an embedded Ray instance with
    ``--workers`` workers, each as its own child process, in alternating
    back-to-back pairs. ``--what run`` plays ``--episodes`` episodes of the
    public suite (``--policy``, a fresh local store each time); ``--what
    calibrate`` calibrates ``--scenarios`` scenarios of the standard recipe.
    The CPU seconds of every process below the command are counted
    (:mod:`_proc_cpu` samples them in ``/proc``): driver, GCS, raylet,
    agents, workers. Reported per side: CPU of the whole command, CPU of the
    *work window* (from ``ray.init`` returned to the end of the work, before
    ``ray.shutdown``; the same span in process), and wall times. Targets:
    window CPU on Ray / in process <= 1.10; wall speed-up >= 1.8 x (needs two
    idle cores: check ``uptime``).

``ceiling``
    Episodes per second one coordinator takes in when episodes cost almost
    nothing: outcomes of ``stay`` on the smallest public scenario, played
    beforehand, taken in by the coordinator alone in process (records already
    stored, as Ray workers leave them), in process with the record puts, and
    by a Ray driver whose workers hand the outcomes back at once (the real
    executor, codec and driver; only the play is skipped). ``--play`` adds a
    Ray run whose workers really play. Target >= 2,000 episodes/s.

``crossover``
    The constants of the automatic executor choice
    (:mod:`emberbench.evaluation.executor_choice`): the seconds an embedded
    Ray instance and its workers take to start, and each built-in policy's
    seconds per simulated cell-step on the public suite. ``--runs N ...``
    then times whole runs of N episodes in process and on Ray (each a child
    process, as a user runs it) and prints what the choice picks for each.

Usage: .venv/bin/python scripts/bench_cluster.py cost --what run --episodes 2000 --pairs 3
       .venv/bin/python scripts/bench_cluster.py cost --what calibrate --scenarios 60 --pairs 3
       .venv/bin/python scripts/bench_cluster.py ceiling [--episodes 4000] [--play]
       .venv/bin/python scripts/bench_cluster.py crossover [--runs 240 2000]
       .venv/bin/python scripts/bench_cluster.py scaling [--episodes 1000] [--policy fire-aware] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from emberbench.results.manifest import EvaluationManifest, build_manifest  # noqa: E402


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def bench_manifest(suite: Any, episodes: int) -> EvaluationManifest:
    """The first ``episodes`` episodes of the suite under enough seeds."""
    seeds = list(range(math.ceil(episodes / len(suite.scenarios))))
    full = build_manifest(suite, seeds)
    return EvaluationManifest(suite_id=full.suite_id, suite_version=full.suite_version, suite_hash=full.suite_hash,
                              episodes=full.episodes[:episodes])


# -- scaling: the original side-by-side run ----------------------------------------------------


def scaling(args: argparse.Namespace) -> None:
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.results.artifact import load_result
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    manifest = bench_manifest(suite, args.episodes)
    n = len(manifest.episodes)
    base = Path(tempfile.mkdtemp(prefix="bench-cluster-", dir=args.dir))
    rows: list[tuple[str, float, str]] = []
    try:
        local_s, _ = timed(lambda: run_evaluation(manifest, suite, args.policy, "m", base / "local.json",
                                                  store=open_store(base / "st-local")))
        reference = (base / "local.json").read_bytes()
        rows.append(("in-process", local_s, ""))

        from emberbench.cluster import RayAuthenticator, RayExecutor, ray_session
        from emberbench.cluster.commands import load_on_ray

        session = ray_session(workers=2)
        init_s, _ = timed(session.__enter__)  # Ray start-up, reported apart
        try:
            by_workers: dict[int, float] = {}
            for workers in (1, 2):
                store = open_store(base / f"st-ray{workers}")
                ex = RayExecutor(suite, args.policy, workers=workers, store_root=store.locator)
                start_s, _ = timed(ex.start)
                try:
                    run_s, _ = timed(lambda w=workers, ex=ex, store=store: run_evaluation(
                        manifest, suite, args.policy, "m", base / f"ray{w}.json", executor=ex, store=store))
                finally:
                    ex.close()
                if (base / f"ray{workers}.json").read_bytes() != reference:
                    raise SystemExit(f"ray with {workers} workers wrote different bytes")
                by_workers[workers] = run_s
                rows.append((f"ray, {workers} worker{'s' if workers > 1 else ''}", run_s,
                             f"worker start-up {start_s:.2f} s, {ex.stats.calls} calls"))
            # Verify is short (seconds), so each side is timed --repeat times,
            # interleaved, and the best time of each is compared.
            local_times, ray_times = [], []
            with RayAuthenticator(2) as auth:
                first_s, _ = timed(lambda: load_on_ray(base / "local.json", suite, auth))
                for _ in range(args.repeat):
                    local_times.append(timed(lambda: load_result(base / "local.json", suite))[0])
                    ray_times.append(timed(lambda: load_on_ray(base / "local.json", suite, auth))[0])
            verify_local_s, verify_ray_s = min(local_times), min(ray_times)
            rows.append(("verify, in process", verify_local_s, f"best of {args.repeat}"))
            rows.append(("verify, 2 workers", verify_ray_s,
                         f"best of {args.repeat}; first pass (worker imports) {first_s:.2f} s"))
        finally:
            session.__exit__(None, None, None)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"{n} episodes of {args.policy!r}; artifacts byte-identical across executors")
    print(f"{'':24}{'seconds':>9}{'ms/episode':>12}")
    for name, seconds, note in rows:
        print(f"{name:24}{seconds:9.2f}{1000 * seconds / n:12.2f}   {note}")
    overhead = (by_workers[1] - local_s) / n * 1000
    print(f"Ray start-up (embedded, 2 CPUs), excluded above: {init_s:.2f} s")
    print(f"ray 1 worker vs in process: {by_workers[1] / local_s:.3f} x time "
          f"({overhead:+.2f} ms per episode; target <= 1.10 x)")
    print(f"ray 2 workers vs 1 worker: {by_workers[1] / by_workers[2]:.2f} x faster (target >= 1.7)")
    print(f"verify 2 workers vs in process: {verify_local_s / verify_ray_s:.2f} x faster (target >= 1.7)")


# -- the child: one measured command -----------------------------------------------------------


def child(spec: dict[str, Any]) -> None:
    """Run one measured piece of work (``spec`` from :func:`cost`), marking the work window.

    Marks: ``up`` once Ray is up (in process: at the same point), ``end`` when
    the work is done and nothing is stopped yet, ``exit`` after everything
    was shut down.
    """
    from _proc_cpu import mark

    _work(spec, mark)
    mark("exit")


def _work(spec: dict[str, Any], mark: Callable[[str], None]) -> None:
    from emberbench.sim.suite import load_suite

    suite = load_suite(spec.get("suite"))
    executor, workers = spec["executor"], spec["workers"]
    if spec["what"] == "start":  # Ray's start-up as a run pays it: the session, then workers ready to play
        from emberbench.cluster import ray_executor

        mark("up")
        with ray_executor(suite, "greedy", workers=workers):
            mark("end")
        return
    if spec["what"] == "intake":
        from _bench_ceiling import intake

        intake(spec, suite, mark)
        return
    if spec["what"] == "calibrate":
        from emberbench.generate import calibrate_suite, write_calibration

        def work(mapper: Any = None) -> None:
            write_calibration(calibrate_suite(suite, mapper=mapper), spec["out"])

        if executor == "local":
            mark("up")
            work()
            mark("end")
        else:
            from emberbench.cluster import ray_mapper

            with ray_mapper(workers=workers) as mapper:
                mark("up")
                work(mapper)
                mark("end")
        return
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.results.manifest import load_manifest

    manifest = load_manifest(spec["manifest"], suite)
    if executor == "local":
        mark("up")
        run_evaluation(manifest, suite, spec["policy"], "m", spec["out"], store=open_store(spec["store"]))
        mark("end")
        return
    from emberbench.cluster import RayExecutor, ray_session

    with ray_session(workers=workers) as info:
        mark("up")
        store = open_store(spec["store"])
        import inspect

        extra = {"store": store} if "store" in inspect.signature(RayExecutor).parameters else {}  # --before trees
        with RayExecutor(suite, spec["policy"], workers=info.workers, store_root=store.locator, **extra) as ex:
            run_evaluation(manifest, suite, spec["policy"], "m", spec["out"], executor=ex, store=store)
            mark("end")
            print(f"calls {ex.stats.calls}", flush=True)


# -- cost: CPU and wall time, in process against Ray --------------------------------------------


def cost(args: argparse.Namespace) -> None:
    from _proc_cpu import measure

    base = Path(tempfile.mkdtemp(prefix="bench-cost-", dir=args.dir))
    trees = {"": None} if args.before is None else {"": None, " (before)": _before_tree(args.before)}
    sides = [(executor, tag) for tag in trees for executor in ("local", "ray")]
    results: dict[tuple[str, str], list[Any]] = {side: [] for side in sides}
    try:
        spec: dict[str, Any] = {"what": args.what, "workers": args.workers, "policy": args.policy}
        if args.what == "calibrate":
            from emberbench.generate import generate_suite, load_recipe, write_suite

            write_suite(generate_suite(load_recipe("standard"), args.scenarios, 1, suite_id="bench"), base / "suite")
            spec["suite"] = str(base / "suite")
            label = f"calibration of {args.scenarios} standard scenarios (3 baselines x 3 seeds)"
        else:
            from emberbench.results.manifest import write_manifest
            from emberbench.sim.suite import load_suite

            write_manifest(bench_manifest(load_suite(), args.episodes), base / "m.json")
            spec["manifest"] = str(base / "m.json")
            label = f"{args.episodes} episodes of {args.policy!r} on the public suite, a fresh local store each"
        reference: bytes | None = None
        for i in range(args.pairs):
            for executor, tag in (sides if i % 2 == 0 else sides[::-1]):
                run = base / f"{executor}{i}{tag.strip(' ()')}"
                run.mkdir()
                out = run / ("calibration.json" if args.what == "calibrate" else "out.json")
                job = {**spec, "executor": executor, "out": str(out), "store": str(run / "store")}
                tree = trees[tag]
                # Another tree's children run in it: Ray workers put their driver's folder first on their path.
                script, env, cwd = (__file__, None, None) if tree is None else (
                    str(tree / "scripts" / "bench_cluster.py"), {**os.environ, "PYTHONPATH": str(tree)}, str(tree))
                load = os.getloadavg()[0]
                measured = measure([sys.executable, script, "child", json.dumps(job)], env=env, cwd=cwd)
                data = out.read_bytes()
                if reference is None:
                    reference = data
                elif data != reference:
                    raise SystemExit(f"{executor}{tag} wrote different bytes in round {i + 1}")
                results[(executor, tag)].append(measured)
                print(f"round {i + 1} {executor + tag:16}: whole {measured.cpu['exit']:7.2f} CPU s "
                      f"{measured.wall['exit']:7.2f} s wall; window {measured.window():7.2f} CPU s "
                      f"{measured.window_wall():7.2f} s wall; load average {load:.2f} {' '.join(measured.lines)}",
                      flush=True)
                shutil.rmtree(run, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{label}; {args.workers} Ray workers; outputs byte-identical")
    for tag in trees:
        local, ray = results[("local", tag)], results[("ray", tag)]
        window = [r.window() / l.window() for l, r in zip(local, ray)]
        whole = [r.cpu["exit"] / l.cpu["exit"] for l, r in zip(local, ray)]
        speed = [l.window_wall() / r.window_wall() for l, r in zip(local, ray)]
        speed_whole = [l.wall["exit"] / r.wall["exit"] for l, r in zip(local, ray)]
        name = tag.strip() or "(this tree)"
        print(f"{name}: CPU, Ray / in process, work window: {fmt(window)} (target <= 1.10); whole command: "
              f"{fmt(whole)}")
        print(f"{name}: wall speed-up, work window: {fmt(speed)}; whole command: {fmt(speed_whole)} (target >= 1.8)")
    print(f"load average now {os.getloadavg()[0]:.2f}")
    for tag in trees:
        for side, runs in (("in process", results[("local", tag)]), ("Ray", results[("ray", tag)])):
            for title, a, b in (("start (to up)", None, "up"), ("work window", "up", "end"), ("stop", "end", "exit")):
                merged: dict[str, float] = {}
                for r in runs:
                    part = r.kinds[b] if a is None else r.kinds_between(a, b)
                    for kind, seconds in part.items():
                        merged[kind] = merged.get(kind, 0.0) + seconds / len(runs)
                shown = sorted(((k, v) for k, v in merged.items() if v >= 0.005), key=lambda kv: -kv[1])
                print(f"{side}{tag}, {title}: {sum(merged.values()):.2f} CPU s: "
                      + ", ".join(f"{k} {v:.2f}" for k, v in shown))


def _before_tree(tree: Path) -> Path:
    """A code tree to compare against (``--before``): ``emberbench`` laid out as installed, this script beside it.

    ``tree`` holds an ``emberbench`` package with ``store`` and ``cluster``
    inside it, as an install lays them out (e.g. ``git archive`` of another
    commit, with ``store/`` and ``cluster/`` moved into ``emberbench/``). The
    measured children run this script and :mod:`_proc_cpu` from
    ``tree/scripts`` with ``PYTHONPATH=tree``, so they and their Ray workers
    import that tree's code.
    """
    tree = tree.resolve()
    for part in ("store", "cluster"):
        if not (tree / "emberbench" / part / "__init__.py").is_file():
            raise SystemExit(f"--before {tree}: no emberbench/{part}/ package there")
    (tree / "scripts").mkdir(exist_ok=True)
    for name in ("bench_cluster.py", "_proc_cpu.py"):
        shutil.copyfile(Path(__file__).with_name(name), tree / "scripts" / name)
    return tree


# -- crossover: the constants of the executor choice ---------------------------------------------


def crossover(args: argparse.Namespace) -> None:
    """Measure the constants of emberbench.evaluation.executor_choice, then whole runs on both sides of the choice."""
    from _proc_cpu import measure

    from emberbench.evaluation import executor_choice as choice
    from emberbench.evaluation.runner import play_to_outcome
    from emberbench.policies.spec import resolve_policy
    from emberbench.results.manifest import write_manifest
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    print(f"load average {os.getloadavg()[0]:.2f}")
    manifest = build_manifest(suite, list(range(args.seeds)))
    size = {sc.id: sc.max_steps * (1 + sc.height * sc.width / choice.CELLS_SCALE) for sc in suite.scenarios}
    steps = sum(size[e.scenario_id] for e in manifest.episodes)
    print(f"seconds per step (x (1 + cells / {choice.CELLS_SCALE})), {len(manifest.episodes)} episodes of the "
          "public suite in this process, best of 3:")
    for policy in choice.STEP_SECONDS:
        factory = resolve_policy(policy)
        best = math.inf
        for _ in range(3):
            cpu = time.process_time()
            for entry in manifest.episodes:
                play_to_outcome(suite, entry, factory)
            best = min(best, time.process_time() - cpu)
        print(f"  {policy:12} {best / steps * 1e6:8.1f} us (in the code: {choice.STEP_SECONDS[policy] * 1e6:.1f} us); "
              f"{1000 * best / len(manifest.episodes):.2f} ms per episode")
    starts = []
    for _ in range(args.repeat):
        job = {"what": "start", "workers": args.workers, "executor": "ray"}
        load = os.getloadavg()[0]
        measured = measure([sys.executable, __file__, "child", json.dumps(job)])
        starts.append(measured.window_wall())
        print(f"  Ray start-up, from nothing to {args.workers} workers ready: {measured.window_wall():.2f} s wall, "
              f"{measured.window():.2f} CPU s (load average {load:.2f})")
    wall = statistics.median(starts)
    room = choice.RAY_GAIN - choice.RAY_CPU_RATIO / args.workers
    print(f"RAY_START_SECONDS: median {wall:.2f} s (in the code: {choice.RAY_START_SECONDS:.2f} s); break-even work "
          f"on {args.workers} CPUs: {choice.RAY_START_SECONDS / room:.1f} s with the code's constants, "
          f"{wall / room:.1f} s with this start-up")
    if not args.runs:
        return
    base = Path(tempfile.mkdtemp(prefix="bench-crossover-", dir=args.dir))
    try:
        print(f"whole runs of {args.policy!r} on the public suite (a fresh local store each), in process and on "
              f"{args.workers} Ray workers, and what the automatic choice picks on {args.workers} CPUs:")
        for episodes in args.runs:
            runs = bench_manifest(suite, episodes)
            write_manifest(runs, base / "m.json")
            work = choice.estimate_seconds(suite, runs.episodes, args.policy)
            picked = choice.choose_executor(len(runs.episodes), work_seconds=work, cpus=args.workers)
            walls = {}
            for side in ("local", "ray"):
                job = {"what": "run", "executor": side, "workers": args.workers, "policy": args.policy,
                       "manifest": str(base / "m.json"), "out": str(base / f"{side}.json"),
                       "store": str(base / f"st-{side}")}
                load = os.getloadavg()[0]
                measured = measure([sys.executable, __file__, "child", json.dumps(job)])
                walls[side] = (measured.wall["exit"], load)
                shutil.rmtree(base / f"st-{side}", ignore_errors=True)
            if (base / "local.json").read_bytes() != (base / "ray.json").read_bytes():
                raise SystemExit(f"{episodes} episodes: Ray wrote different bytes")
            faster = "in process" if walls["local"][0] <= walls["ray"][0] else "Ray"
            print(f"  {episodes:6} episodes: in process {walls['local'][0]:6.1f} s (load {walls['local'][1]:.1f}), "
                  f"Ray {walls['ray'][0]:6.1f} s (load {walls['ray'][1]:.1f}): {faster} faster; "
                  f"{picked.describe()}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def fmt(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} ({', '.join(f'{v:.3f}' for v in values)})"


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["child"]:
        child(json.loads(argv[1]))
        return
    if not argv or argv[0].startswith("-"):
        argv = ["scaling", *argv]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("scaling", help="1 and 2 Ray workers and parallel verify against in process")
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--policy", default="fire-aware")
    p.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    p.add_argument("--repeat", type=int, default=3, help="timings of each verify, best one kept")
    p = sub.add_parser("ceiling", help="episodes per second one coordinator takes in")
    p.add_argument("--episodes", type=int, default=4000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2, help="rounds of the three sides")
    p.add_argument("--play", action="store_true", help="also a Ray run whose workers really play")
    p.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    p = sub.add_parser("crossover", help="the constants of the automatic executor choice, and whole runs")
    p.add_argument("--seeds", type=int, default=5, help="public suite episodes per scenario for the step costs")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="Ray start-ups timed")
    p.add_argument("--runs", type=int, nargs="*", default=[], metavar="EPISODES",
                   help="also time whole runs of these sizes in process and on Ray (e.g. 240 2000)")
    p.add_argument("--policy", default="greedy", help="the policy of those runs")
    p.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    p = sub.add_parser("cost", help="CPU seconds and wall time of the same work in process and on Ray")
    p.add_argument("--what", choices=("run", "calibrate"), default="run")
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--policy", default="greedy")
    p.add_argument("--scenarios", type=int, default=60)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--pairs", type=int, default=2, help="rounds of every side back to back, the order alternating")
    p.add_argument("--before", type=Path, default=None, metavar="TREE",
                   help="also measure the code in TREE (an installed-layout emberbench package) side by side")
    p.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    args = parser.parse_args(argv)
    if args.command == "ceiling":
        from _bench_ceiling import ceiling

        ceiling(args)
        return
    {"scaling": scaling, "cost": cost, "crossover": crossover}[args.command](args)


if __name__ == "__main__":
    main()
