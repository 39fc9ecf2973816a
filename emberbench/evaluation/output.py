"""A run's output path: whether there is an artifact there to resume, and whether it may be resumed.

Both sinks of the coordinator (:mod:`emberbench.evaluation.runner` without a
store, :mod:`emberbench.evaluation.store_runner` with one) and the adoption of
an artifact into a store-backed run (:mod:`emberbench.evaluation.store_adopt`)
ask these two questions the same way.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ResultError, ResumeError
from ..io.atomic import check_output_path
from ..results.manifest import EvaluationManifest


def output_exists(out: Path, resume: bool) -> bool:
    """Whether there is an artifact to resume at ``out``.

    The output policy is applied first, before anything is read: ``out`` must
    be nothing or a regular file (a device or FIFO given as ``--out`` would
    otherwise be read as an artifact to resume, without end).

    Raises:
        OutputPathError: ``out`` is a link, FIFO, device, socket or folder.
        ResumeError: it exists and ``resume`` is False (it is never overwritten).
        ResultError: it does not exist and neither does its folder.
    """
    if not out.parent.exists():
        raise ResultError(f"{out.parent}: output folder does not exist")
    check_output_path(out)
    if out.exists():
        if not resume:
            raise ResumeError(f"{out} exists and resume is off; an existing artifact is never overwritten")
        return True
    return False


def check_resumable(found_hash: str, found_model: str, manifest: EvaluationManifest, model_id: str,
                    where: Path | str) -> None:
    """Refuse to resume an artifact of another manifest or model id."""
    if found_hash != manifest.hash:
        raise ResumeError(
            f"{where} belongs to evaluation manifest {found_hash}, not {manifest.hash}; "
            "a changed schedule, seed order, scenario, suite or version cannot be resumed"
        )
    if found_model != model_id:
        raise ResumeError(f"{where} belongs to model id {found_model!r}, not {model_id!r}")


__all__ = ["check_resumable", "output_exists"]
