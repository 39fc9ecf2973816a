"""A signal at any point of a command's start-up ends it with 130 or 143, one line, nothing running, nothing torn.

Each case runs the real ``emberbench`` console script in a child process,
which sends itself SIGTERM or SIGINT at one named point of its start-up
(``tests/signal_hook/sitecustomize.py``: when a module begins to be imported,
or when a function is entered), so every point is hit exactly, not by a
timer that the machine's load would move. Then, whatever the point:

* the exit status is 143 (SIGTERM) or 130 (SIGINT) and stderr is the one
  line ``terminated`` or ``interrupted`` (no traceback, no "Exception
  ignored");
* no process the command started (the reaper, Ray's processes, workers) is
  left, found by a marker in the environment every one of them inherits;
* the output is absent or a complete artifact that verifies (the runner
  writes one before the first episode), with no temporary or lock file.

A point the command never reaches would let it finish with exit 0, so a
misnamed point fails the test rather than passing it unchecked.

The in-process points run concurrently, four children at a time (about
20 s on an idle 2-core machine); the Ray points start Ray and are marked
``ray`` and ``slow``.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from emberbench.results.manifest import build_manifest, write_manifest
from tests.integration.conftest import ROOT, subprocess_env

HOOK = ROOT / "tests" / "signal_hook"
TAG = "EMBERBENCH_SIGNAL_TEST"
SCENARIOS = ["v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation"]
RUN = ("run", "--manifest", "{m}", "--policy", "greedy", "--model-id", "g", "--out", "{out}")
CHILD_SECONDS = 240
GONE_SECONDS = 15.0

# (point, signal[, "finalizer"]): ten points of the in-process `run`, each with both signals, and two where the
# handler runs inside a finalizer (its exception would be lost).
LOCAL_POINTS = [
    "import:typer",                                  # the CLI's first slow import
    "import:pydantic",                               # typer's option coercion, as options are parsed
    "import:emberbench.cli.eval_cmd",                # the command modules
    "call:emberbench.cli.main:run_to_exit_status",   # the command is about to be parsed
    "call:emberbench.cli.args:parse_output_file",    # options being parsed
    "import:numpy",                                  # the core's slow import
    "call:emberbench.sim.suite:load_suite",
    "call:emberbench.results.manifest:load_manifest",
    "call:emberbench.evaluation.runner:run_evaluation",         # the run has begun (lock, journal, artifact)
    "call:emberbench.records.episode:play_episode",          # the first episode
]
LOCAL_CASES = [(point, sig, "") for point in LOCAL_POINTS for sig in ("TERM", "INT")] + [
    ("call:emberbench.evaluation.runner:run_evaluation", "TERM", "finalizer"),
    ("call:emberbench.records.episode:play_episode", "INT", "finalizer"),
]

# (command, point, signal, how): ten points of a run and a verification on embedded Ray, and the two failures
# of the issue (SIGTERM during the imports of `runs verify`, SIGINT as `run` starts Ray) with the handler
# running inside a finalizer.
RAY_CASES = [
    ("run", "import:ray", "TERM", ""),
    ("run", "import:ray._raylet", "INT", ""),
    ("run", "call:emberbench.cluster.hygiene:ProcessGuard.__enter__", "TERM", ""),
    ("run", "call:ray:init", "INT", ""),
    ("run", "call:emberbench.cluster.session:_cluster_info", "TERM", ""),
    ("run", "call:emberbench.cluster.executor:RayExecutor.start", "INT", ""),
    ("run", "call:emberbench.cluster.executor:RayExecutor.run", "TERM", ""),
    ("verify", "import:ray", "TERM", ""),
    ("verify", "call:ray:init", "INT", ""),
    ("verify", "call:emberbench.cluster.auth:RayAuthenticator.replay", "TERM", ""),
    ("verify", "import:ray._raylet", "TERM", "finalizer"),
    ("run", "call:ray:init", "INT", "finalizer"),
]


def _command() -> list[str]:
    """The installed console script (its entry point is what is under test), else ``python -m emberbench``."""
    script = Path(sys.executable).with_name("emberbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "emberbench"]


def _tagged(tag: str) -> list[int]:
    """Processes whose environment carries ``TAG=tag`` (the child and all it started)."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                continue
    return found


def _wait_gone(tag: str) -> list[int]:
    deadline = time.monotonic() + GONE_SECONDS
    while (left := _tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _run_case(folder: Path, args: list[str], point: str, sig: str, how: str = "") -> dict[str, object]:
    """Run one case in ``folder``; return what the checks need (and kill anything left, whatever happened)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "home").mkdir(exist_ok=True)
    tag = secrets.token_hex(8)
    env = subprocess_env()
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "EMBERBENCH_RAY_OWNER"):
        env.pop(name, None)
    env.update({"PYTHONPATH": os.pathsep.join([str(HOOK), env["PYTHONPATH"]]), "HOME": str(folder / "home"),
                "EMBERBENCH_TEST_SIGNAL_AT": point, "EMBERBENCH_TEST_SIGNAL": sig, "EMBERBENCH_TEST_SIGNAL_IN": how,
                TAG: tag})
    child = subprocess.Popen([*_command(), *args], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = child.communicate(timeout=CHILD_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    left = _wait_gone(tag)
    for pid in left:  # never leave them running, even when the test fails
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return {"code": child.returncode, "stderr": err.decode("utf-8", "replace"), "left": left}


def _check(result: dict[str, object], sig: str, folder: Path, suite) -> None:  # noqa: ANN001
    expected = {"TERM": (143, "terminated"), "INT": (130, "interrupted")}[sig]
    lines = [line for line in str(result["stderr"]).splitlines() if line.strip()]
    assert (result["code"], lines) == (expected[0], [expected[1]]), result["stderr"]
    assert result["left"] == [], f"still running: {result['left']}"
    stray = sorted(p.name for p in folder.iterdir() if p.name.startswith(".o.json"))
    assert stray == [], stray
    if (folder / "o.json").exists():
        from emberbench.results.stream import verify_artifact

        verify_artifact(folder / "o.json", suite)  # complete (possibly with fewer episodes): never torn


def _fill(args: tuple[str, ...], values: dict[str, str]) -> list[str]:
    return [a.format(**values) if "{" in a else a for a in args]


@pytest.fixture(scope="module")
def manifest_file(tmp_path_factory: pytest.TempPathFactory, suite) -> Path:  # noqa: ANN001
    path = tmp_path_factory.mktemp("signals") / "m.json"
    write_manifest(build_manifest(suite, [0], scenario_ids=SCENARIOS), path)
    return path


@pytest.fixture(scope="module")
def local_results(tmp_path_factory: pytest.TempPathFactory, manifest_file: Path) -> dict:
    """Every in-process case, run four at a time; (point, signal) -> (result, folder)."""
    base = tmp_path_factory.mktemp("local-signals")

    def one(case: tuple[str, str, str]) -> tuple[tuple[str, str, str], tuple[dict[str, object], Path]]:
        folder = base / f"{LOCAL_CASES.index(case):02d}"
        args = _fill(RUN, {"m": str(manifest_file), "out": "o.json"}) + ["--executor", "local", "--store", "store"]
        return case, (_run_case(folder, args, *case), folder)

    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(one, LOCAL_CASES))


@pytest.mark.parametrize(("point", "sig", "how"), LOCAL_CASES, ids=["-".join(filter(None, c)) for c in LOCAL_CASES])
def test_a_signal_at_any_start_up_point_ends_an_in_process_run_cleanly(point: str, sig: str, how: str,
                                                                       local_results: dict, suite) -> None:  # noqa: ANN001
    """Issue 22 (defect 5): a signal during the imports at start-up found the interpreter's defaults (SIGTERM
    ended the process without a word, SIGINT printed a traceback out of an import), and one whose handler ran
    inside a finalizer was lost; the handlers are now installed before anything slow, a lost signal is
    delivered again, and every point of an in-process run ends with 143/130 and one line."""
    result, folder = local_results[point, sig, how]
    _check(result, sig, folder, suite)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory, suite, manifest_file: Path) -> tuple[Path, str]:  # noqa: ANN001
    """A store holding one complete run (for `runs verify`), and the run's short id."""
    from emberbench.runs.catalog import iter_catalog
    from emberbench.results.manifest import load_manifest
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store

    folder = tmp_path_factory.mktemp("stored")
    store = open_store(folder / "store")
    run_evaluation(load_manifest(manifest_file), suite, "greedy", "g", folder / "r.json", store=store)
    (row,) = iter_catalog(store)
    return folder / "store", row.hex_id[:8]


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize(("command", "point", "sig", "how"), RAY_CASES, ids=["-".join(filter(None, c)) for c in RAY_CASES])
def test_a_signal_at_any_start_up_point_ends_a_ray_command_cleanly(command: str, point: str, sig: str, how: str,
                                                                   tmp_path: Path, manifest_file: Path,
                                                                   stored_run: tuple[Path, str], suite) -> None:  # noqa: ANN001
    """Issue 22 (defect 5): `runs verify --executor ray` given SIGTERM during its imports printed "Exception
    ignored in ... Terminated" and went on to exit 0; `run --executor ray` given SIGINT at start-up also
    finished with exit 0. At every point of Ray's start-up both now end with 143/130, one line, and no
    process of the embedded instance left."""
    store, run_id = stored_run
    if command == "run":
        args = _fill(RUN, {"m": str(manifest_file), "out": "o.json"}) + ["--executor", "ray", "--workers", "1",
                                                                         "--no-store"]
    else:
        args = ["runs", "verify", run_id, "--store", str(store), "--executor", "ray", "--workers", "1"]
    result = _run_case(tmp_path / "case", args, point, sig, how)
    _check(result, sig, tmp_path / "case", suite)
