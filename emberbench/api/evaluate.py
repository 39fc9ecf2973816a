"""``evaluate``: play a manifest's episodes and return the result object, in process or on Ray, with progress.

The same episodes as :func:`emberbench.run_evaluation` and the same bytes:
the returned result's ``digest`` is that of the artifact ``emberbench run``
writes. Where the episodes play is chosen with the options ``emberbench run``
takes:

* by default, in this process, writing nothing
  (:func:`emberbench.evaluation.in_memory.evaluate`);
* ``store=`` (a folder, ``s3://...`` or an opened store): through the store
  as ``run`` does, records stored once and the run journaled, so that
  calling again after an interruption resumes (the artifact goes to a
  temporary folder and is read back into the result);
* ``executor="ray"``, ``workers=`` or ``address=``: on Ray episode workers
  (an embedded instance, or the cluster at ``address``), with a policy named
  by its spec string (a Python factory cannot travel to the workers).

``progress`` draws the bar the command line draws (rich, on stderr): by
default only when stderr is a terminal; ``True`` always (in Jupyter rich
draws it in the cell), ``False`` never, or a function ``progress(done,
total)`` of one's own.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import PolicyError
from ..evaluation.executor_choice import ExecutorKind
from ..policies.spec import PolicyFactory
from ..results.artifact import EvaluationResult
from ..results.manifest import EvaluationManifest
from ..sim.suite import Suite

Progress = Callable[[int, int], None]


def evaluate(manifest: EvaluationManifest, suite: Suite, policy: str | PolicyFactory, model_id: str, *,
             executor: str | ExecutorKind | None = None, workers: int | None = None, address: str | None = None,
             store: Any = None, progress: bool | Progress | None = None) -> EvaluationResult:
    """Play every episode of ``manifest`` and return the result (its digest is that of the artifact ``run`` writes).

    Args:
        manifest: the evaluation manifest (checked against ``suite`` first).
        suite: the suite the manifest targets.
        policy: a policy spec (``"greedy"``, ``"./mypolicy.py:make"``...) or a
            no-argument factory returning a fresh policy per episode (in
            process only).
        model_id: the label of this model in the result.
        executor: ``"local"`` (this process) or ``"ray"``; default: local,
            unless ``workers`` or ``address`` asks for Ray.
        workers: Ray episode workers (default: every CPU of the Ray instance).
        address: the Ray cluster to join (default: an embedded instance).
        store: a store (locator or opened store) to play through, as ``run``
            does (records stored, the run journaled and resumable).
        progress: the progress bar (see the module docstring).

    Raises:
        ManifestError: the manifest does not match the suite.
        ResultError: a bad model id.
        PolicyError: a factory object with Ray.
        Exception: whatever the policy raises, or InvalidActionError.
    """
    kind = _kind(executor, workers, address)
    with _bar(progress, model_id) as bar:
        if kind is ExecutorKind.LOCAL and store is None:
            from ..evaluation.in_memory import evaluate as in_process

            return in_process(manifest, suite, policy, model_id, progress=bar)
        return _through_a_file(manifest, suite, policy, model_id, kind, workers=workers, address=address,
                               store=store, progress=bar)


def _kind(executor: str | ExecutorKind | None, workers: int | None, address: str | None) -> ExecutorKind:
    if executor is None:
        return ExecutorKind.RAY if workers is not None or address is not None else ExecutorKind.LOCAL
    try:
        kind = ExecutorKind(executor.value if isinstance(executor, ExecutorKind) else executor)
    except ValueError:
        raise ValueError(f"executor must be 'local' or 'ray', not {executor!r}") from None
    if kind is ExecutorKind.LOCAL and (workers is not None or address is not None):
        raise ValueError("workers and address are for executor='ray'")
    return kind


@contextlib.contextmanager
def _bar(progress: bool | Progress | None, model_id: str) -> Iterator[Progress | None]:
    if callable(progress) and not isinstance(progress, bool):
        yield progress
        return
    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    if not enabled:
        yield None
        return
    from ..evaluation.progress import Bar

    bar = Bar(f"evaluate {model_id}", "episodes", True)
    try:
        yield bar
    finally:
        bar.close()


def _through_a_file(manifest: EvaluationManifest, suite: Suite, policy: str | PolicyFactory, model_id: str,
                    kind: ExecutorKind, *, workers: int | None, address: str | None, store: Any,
                    progress: Progress | None) -> EvaluationResult:
    """Run as ``emberbench run`` does into a temporary folder, then read the artifact back (not replayed again:
    the run authenticated what it resumed and played the rest itself)."""
    opened = _open_store(store)
    with tempfile.TemporaryDirectory(prefix="emberbench-evaluate-") as folder:
        out = Path(folder) / "result.json"
        if kind is ExecutorKind.RAY:
            if not isinstance(policy, str):
                raise PolicyError("a policy given as a Python object cannot run on Ray workers; name it by its spec "
                                  "(./mypolicy.py:make, package.module:make)")
            from emberbench.cluster import run_on_ray

            if hasattr(progress, "status"):
                progress.status("starting Ray…")  # type: ignore[union-attr]
            run_on_ray(manifest, suite, policy, model_id, out, store=opened, workers=workers, address=address,
                       progress=progress)
        else:
            from ..evaluation.runner import run_evaluation

            run_evaluation(manifest, suite, policy, model_id, out, store=opened, progress=progress)
        return _read_back(out, suite)


def _open_store(store: Any) -> Any:
    if store is None or not isinstance(store, (str, os.PathLike)):
        return store
    from ..evaluation.store_runner import open_store

    return open_store(os.fspath(store))


def _read_back(out: Path, suite: Suite) -> EvaluationResult:
    from ..records.metrics import metrics_from_dict
    from ..results.artifact import parse_result_bytes, result_from_dict

    raw = out.read_bytes()
    data = parse_result_bytes(raw, where="evaluated result")
    stored = [metrics_from_dict(e["metrics"]) for e in data["episodes"]]

    def as_run(records: list[dict[str, Any]], _suite: Suite) -> list[Any]:
        return stored  # the run's own metrics; every other check of the artifact still runs

    return result_from_dict(data, suite, raw=raw, where="evaluated result", authenticator=as_run)


__all__ = ["evaluate"]
