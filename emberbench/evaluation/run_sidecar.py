"""The run sidecar: what a result artifact's run was, in a small file beside the artifact.

A result artifact's format is fixed by the specification (exact keys), so
the run's identity cannot go inside it. Every run writes it next to its
output instead, in ``<name>.run`` (format version :data:`RUN_SIDECAR_VERSION`):
the policy spec, the model id and the manifest hash the artifact was begun
with, the EMBERBench version and the start time. It is written atomically,
through the output policy, before the artifact's first write, and only
then: episodes added later are played under the same spec, because a
resume under another spec is refused against it.

**Resume.** Before anything else is read, a run on an existing artifact
reads the sidecar strictly (input policy, a 64 KiB cap, exact keys, known
version) and refuses another policy spec, model id or manifest
(:func:`check_sidecar`), with a store or without, on every executor.

**No sidecar** (an artifact written before sidecars existed, or copied
without one): the policy of its episodes is unknown. An artifact holding no
episode is taken over (nothing can mix) and gets a sidecar; one holding
episodes is resumed only by a store run whose journal lists every one of
them (the journal header names their policy). Otherwise the resume is
refused (:func:`refuse_unknown_policy`): start over under another ``--out``.

Nothing secret is written; the policy spec is recorded as given, like the
store's run-info (docs/formats.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_bytes, check_output_path
from ..io.canonical import canonical_bytes, is_sha256_hex
from ..errors import ResumeError, RunInfoError
from ..io.input_policy import KiB, InputKind, load_json
from ..io.versions import RUN_SIDECAR_VERSION

SIDECAR_SUFFIX = ".run"
SIDECAR_KEYS = frozenset({"run_sidecar_version", "policy", "model_id", "manifest_hash", "emberbench_version",
                          "started"})
_EPISODE_START = b'{"episodes":[{'
SIDECAR_INPUT = InputKind("run sidecar", 64 * KiB, max_values=1_000)
"""The input policy's limits for a sidecar (it holds six short values)."""


def sidecar_path_of(output: str | os.PathLike[str]) -> Path:
    """The sidecar of the artifact ``output``: ``<name>.run`` in the same folder."""
    out = Path(output)
    return out.with_name(out.name + SIDECAR_SUFFIX)


@dataclass(frozen=True, slots=True)
class RunSidecar:
    """The run information of one result artifact (format version :data:`RUN_SIDECAR_VERSION`).

    Attributes:
        policy: the policy spec the run plays (as given: ``greedy``, ``pkg.mod:make``, ``cmd:...``).
        model_id: the artifact's model id.
        manifest_hash: the artifact's evaluation manifest hash.
        emberbench_version: the EMBERBench that began the artifact.
        started: when it was begun (ISO 8601 UTC, to the second).
    """

    policy: str
    model_id: str
    manifest_hash: str
    emberbench_version: str
    started: str

    def __post_init__(self) -> None:
        from ..errors import ResultError
        from ..results.model_id import validate_model_id
        from .run_info import JournalHeader

        JournalHeader(self.policy, self.emberbench_version, self.started)  # the same rules as the journal's
        try:
            validate_model_id(self.model_id)
        except ResultError as exc:
            raise RunInfoError(str(exc)) from None
        if not is_sha256_hex(self.manifest_hash):
            raise RunInfoError(f"manifest_hash must be a lowercase SHA-256 hex digest, got {self.manifest_hash!r:.80}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (``run_sidecar_version`` included)."""
        return {"run_sidecar_version": RUN_SIDECAR_VERSION, "policy": self.policy, "model_id": self.model_id,
                "manifest_hash": self.manifest_hash, "emberbench_version": self.emberbench_version,
                "started": self.started}

    def to_bytes(self) -> bytes:
        """The file's bytes: canonical JSON and a newline."""
        return canonical_bytes(self.to_dict()) + b"\n"

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "run sidecar") -> RunSidecar:
        """Validate and build; refuses another version first, then unknown or missing keys.

        Raises:
            RunInfoError: naming ``where`` and the first problem.
        """
        if not isinstance(data, dict):
            raise RunInfoError(f"{where}: a run sidecar must be a JSON object")
        version = data.get("run_sidecar_version")
        if version != RUN_SIDECAR_VERSION:
            raise RunInfoError(f"{where}: run_sidecar_version {version!r:.40} is not supported "
                               f"(this code reads {RUN_SIDECAR_VERSION!r})")
        unknown, missing = sorted(set(data) - SIDECAR_KEYS), sorted(SIDECAR_KEYS - set(data))
        if unknown or missing:
            raise RunInfoError(f"{where}: unknown key(s) {unknown}, missing key(s) {missing}")
        try:
            return cls(data["policy"], data["model_id"], data["manifest_hash"], data["emberbench_version"],
                       data["started"])
        except RunInfoError as exc:
            raise RunInfoError(f"{where}: {exc}") from None


def new_sidecar(policy: str, model_id: str, manifest_hash: str) -> RunSidecar:
    """The sidecar of a run beginning an artifact now, with this EMBERBench."""
    from .run_info import software_versions, utc_now

    return RunSidecar(policy, model_id, manifest_hash, str(software_versions()["emberbench_version"]), utc_now())


def read_sidecar(output: str | os.PathLike[str]) -> RunSidecar | None:
    """The sidecar of the artifact ``output``, or None when there is none.

    Read under the input policy: a regular file (a FIFO, device or folder is
    refused at once), at most 64 KiB, strict JSON.

    Raises:
        RunInfoError: the sidecar is unreadable, not a sidecar, or of another version.
    """
    path = sidecar_path_of(output)
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunInfoError(f"{path}: cannot read the run sidecar: {exc.strerror or exc}") from None
    return RunSidecar.from_dict(load_json(path, SIDECAR_INPUT, error=RunInfoError), where=str(path))


def write_sidecar(output: str | os.PathLike[str], sidecar: RunSidecar) -> None:
    """Write the sidecar of ``output`` atomically (only a regular file or nothing is replaced).

    Raises:
        OutputPathError: the sidecar's path is a link, FIFO, device, socket or folder.
    """
    atomic_write_bytes(sidecar_path_of(output), sidecar.to_bytes())


def check_sidecar_path(output: str | os.PathLike[str]) -> None:
    """Apply the output policy to the sidecar's path before a run writes anything.

    Raises:
        OutputPathError: something other than a regular file is there.
    """
    check_output_path(sidecar_path_of(output))


def check_sidecar(found: RunSidecar, manifest: Any, model_id: str, spec: str, out: str | os.PathLike[str]) -> None:
    """Refuse to resume ``out`` when its sidecar names another manifest, model id or policy spec.

    Raises:
        ResumeError: naming both values and the way out.
    """
    from .output import check_resumable

    where = sidecar_path_of(out)
    try:
        check_resumable(found.manifest_hash, found.model_id, manifest, model_id, out)
    except ResumeError as exc:
        raise ResumeError(f"{exc} (recorded in {where.name})") from None
    if found.policy != spec:
        raise ResumeError(
            f"{out} was begun with policy {found.policy!r} ({where.name}); this run uses policy {spec!r}, and one "
            "artifact never mixes policies: resume it with the same --policy, or choose another --out")


def output_sidecar(out: Path, exists: bool, manifest: Any, model_id: str, spec: str) -> Any:
    """The run sidecar of an existing output, checked against this run (None if there is none to check).

    Without one, its path is put through the output policy at once, since the
    run will write it.

    Raises:
        OutputPathError: the sidecar's path is not a regular file or nothing.
        RunInfoError: the sidecar cannot be read or is not one.
        ResumeError: it names another manifest, model id or policy spec.
    """
    found = read_sidecar(out) if exists else None
    if found is None:
        check_sidecar_path(out)
    else:
        check_sidecar(found, manifest, model_id, spec, out)
    return found


def refuse_unknown_policy(out: str | os.PathLike[str]) -> ResumeError:
    """The refusal for an artifact holding episodes whose policy no sidecar (or journal) records."""
    return ResumeError(
        f"{out} holds episodes but no run sidecar {sidecar_path_of(out).name} records their policy (written by an "
        "older EMBERBench, or copied without it), so resuming it could mix policies; start over under another "
        "--out (`emberbench verify` still checks what it holds)")


def policy_note(output: str | os.PathLike[str], model_id: str, manifest_hash: str) -> str | None:
    """What ``verify`` says about the policy of a verified artifact: from its sidecar, if it has one.

    Returns:
        ``policy 'greedy'`` when the sidecar describes this artifact (same
        model id and manifest); a short note when the sidecar cannot be used
        (the artifact's own verdict does not depend on it); None without one.
    """
    try:
        found = read_sidecar(output)
    except RunInfoError as exc:
        return f"policy unknown (run sidecar not readable: {exc})"
    if found is None:
        return None
    if found.model_id != model_id or found.manifest_hash != manifest_hash:
        return (f"policy unknown ({sidecar_path_of(output)} describes model {found.model_id!r} on manifest "
                f"{found.manifest_hash}, not this artifact)")
    return f"policy {found.policy!r}"


def starts_with_episode(output: str | os.PathLike[str]) -> bool:
    """Whether the file at ``output`` begins like an artifact holding episodes (``{"episodes":[{``).

    A cheap look (14 bytes) for checks made before a run starts: only such a
    file is refused there for lacking a sidecar. Anything else (an artifact
    of zero episodes, or a file that is no artifact at all) is left to the
    run's own verification of the file, which decides and names the fault.
    """
    from ..io.input_policy import RESULT, open_input

    try:
        with open_input(output, RESULT, error=ResumeError) as handle:
            return handle.read(len(_EPISODE_START)) == _EPISODE_START
    except ResumeError:
        return False


__all__ = ["SIDECAR_SUFFIX", "RunSidecar", "check_sidecar", "check_sidecar_path", "new_sidecar", "output_sidecar", "policy_note",
           "read_sidecar", "refuse_unknown_policy", "sidecar_path_of", "starts_with_episode", "write_sidecar"]
