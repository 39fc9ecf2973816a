"""The policy code digest: a SHA-256 that names the code a run's policy ran.

The digest is taken over a *listing* of the policy's source files, one line
per file, sorted by name (UTF-8 byte order)::

    <lowercase hex SHA-256 of the file's bytes> SP SP <name> LF

and is the SHA-256 of that listing. Names are relative (below), so the
digest does not depend on where the code is installed, on the working
folder, or on the order a folder lists its files. Which files, by policy spec:

* **A built-in policy** (``stay``, ``greedy``, ``fire-aware``, ``random``)
  and **a served model** (``openai:MODEL``, whose adapter is EMBERBench's
  own code; the model's weights are the server's, not covered): rule
  ``emberbench``, every ``.py`` file of the EMBERBench package, the store and
  the Ray runner included, named ``emberbench/<path>`` (the same names from
  a source tree and from an installed wheel).
* **A Python file** ``path/to/file.py:factory``: rule ``python-module``, that
  file (relative to the working folder unless absolute), named by its file
  name, as a single-file module found on the import path.
* **A Python policy** ``module:factory``: the *top-level* package of
  ``module`` (``mylab`` for ``mylab.agents.fire:make``), because a policy
  module imports its siblings. For a package folder (rule
  ``python-package``): every ``.py`` file below it, recursively, named
  ``<package>/<path>``; for a namespace package spread over several folders,
  the first folder holding a name wins, as in an import. For a single
  module file (rule ``python-module``): that file, named by its file name. A
  module of the ``emberbench`` package is rule ``emberbench``.
* **An entry point** (a name in the ``emberbench.policies`` group): rule
  ``entry-point``, the ``RECORD`` file of the installed distribution that
  provides it (which lists the SHA-256 of each installed file), named
  ``<distribution>/RECORD``. An editable install's RECORD lists only the
  link to the source folder, not the source: use ``module:factory`` then.
* **An external agent** ``cmd:COMMAND``: rule ``command``. The command is
  split as the runner splits it (:func:`shlex.split`); its first word is the
  executable (looked up on ``PATH`` when it has no ``/``, as the operating
  system does), and every later word that names an existing regular file
  (relative to the working folder) is a script or data file of the agent.
  Each is named by the word as written. Code that the agent loads by other
  means (``python -m pkg``, imports) is not covered: name the script file.

Everywhere ``__pycache__`` folders and folders or files whose name starts
with ``.`` are skipped; folder links are not followed, file links are read.
Files are read through the input policy (regular files only), hashed
piece by piece; at most :data:`MAX_FILES` files and :data:`MAX_BYTES` bytes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PolicyError
from ..io.input_policy import GiB, InputKind, open_input

RULES = ("emberbench", "python-package", "python-module", "entry-point", "command")
MAX_FILES = 20_000
MAX_BYTES = 4 * GiB
SOURCE_FILE = InputKind("policy source file", 2 * GiB, json_object=False)


@dataclass(frozen=True, slots=True)
class PolicyCode:
    """The code digest of a policy.

    Attributes:
        rule: which files were listed (:data:`RULES`).
        digest: SHA-256 (hex) of the listing.
        files: how many files the listing names.
    """

    rule: str
    digest: str
    files: int

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "digest": self.digest, "files": self.files}


def listing_digest(files: dict[str, Path], rule: str, *, where: str) -> PolicyCode:
    """The digest of the listing of ``files`` (name -> path), as the module docstring defines it.

    Raises:
        PolicyError: a file cannot be read, or there are none, or too many or too large.
    """
    if not files:
        raise PolicyError(f"{where}: no source file to digest")
    if len(files) > MAX_FILES:
        raise PolicyError(f"{where}: {len(files)} source files exceed the cap of {MAX_FILES}")
    listing = hashlib.sha256()
    total = 0
    for name in sorted(files, key=lambda n: n.encode("utf-8", "surrogateescape")):
        path = files[name]
        try:
            with open_input(path, SOURCE_FILE, error=PolicyError) as handle:
                total += os.fstat(handle.fileno()).st_size
                if total > MAX_BYTES:
                    raise PolicyError(f"{where}: source files exceed the cap of {MAX_BYTES} bytes")
                file_digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError as exc:
            raise PolicyError(f"{path}: cannot read a source file of the policy: {exc.strerror or exc}") from None
        listing.update(f"{file_digest}  {name}\n".encode("utf-8", "surrogateescape"))
    return PolicyCode(rule, listing.hexdigest(), len(files))


def _python_files(folder: Path, prefix: str, into: dict[str, Path]) -> None:
    """Add every ``.py`` below ``folder`` as ``prefix/<path>`` (names already present are kept)."""
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        rel = Path(top).relative_to(folder)
        for name in names:
            if name.endswith(".py") and not name.startswith("."):
                into.setdefault("/".join((prefix, *rel.parts, name)), Path(top) / name)


def emberbench_files() -> dict[str, Path]:
    """Every ``.py`` file of EMBERBench (store and Ray runner included), named ``emberbench/<path>``."""
    import importlib.util

    import emberbench

    files: dict[str, Path] = {}
    _python_files(Path(emberbench.__file__).resolve().parent, "emberbench", files)
    for sub in ("store", "cluster"):
        spec = importlib.util.find_spec(f"emberbench.{sub}")  # finds; does not import (ray stays out)
        if spec is not None and spec.origin:
            _python_files(Path(spec.origin).resolve().parent, f"emberbench/{sub}", files)
    return files


def _python_policy(module: str, spec_text: str) -> PolicyCode:
    import importlib.util

    top = module.split(".")[0]
    if top == "emberbench":
        return listing_digest(emberbench_files(), "emberbench", where=f"policy {spec_text!r}")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        raise PolicyError(f"policy {spec_text!r}: cannot find package {top!r}: {exc}") from None
    if spec is None:
        raise PolicyError(f"policy {spec_text!r}: cannot find package {top!r}")
    files: dict[str, Path] = {}
    if spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            _python_files(Path(location), top, files)
        return listing_digest(files, "python-package", where=f"policy {spec_text!r}")
    if not spec.origin or not os.path.isfile(spec.origin):
        raise PolicyError(f"policy {spec_text!r}: module {top!r} has no source file ({spec.origin})")
    return listing_digest({Path(spec.origin).name: Path(spec.origin)}, "python-module", where=f"policy {spec_text!r}")


def _entry_point_policy(name: str) -> PolicyCode | None:
    from importlib.metadata import entry_points

    from ..policies.spec import ENTRY_POINT_GROUP

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        if ep.name != name:
            continue
        dist = ep.dist
        record = None if dist is None else dist.locate_file(_record_path(dist))
        if dist is None or record is None or not os.path.isfile(record):
            raise PolicyError(f"policy {name!r}: the distribution of entry point {ep.value!r} has no RECORD file")
        return listing_digest({f"{dist.metadata['Name']}/RECORD": Path(record)}, "entry-point",
                              where=f"policy {name!r}")
    return None


def _record_path(dist: Any) -> str:
    """The RECORD file's path relative to the distribution's location (``<name>.dist-info/RECORD``)."""
    for file in dist.files or ():
        if file.name == "RECORD" and file.parent.name.endswith(".dist-info"):
            return str(file)
    return ""


def _command_policy(command: str, cwd: Path) -> PolicyCode:
    where = f"policy 'cmd:{command}'"
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise PolicyError(f"{where}: cannot split the command line: {exc}") from None
    if not argv:
        raise PolicyError(f"{where}: the command line is empty")
    executable = argv[0]
    if "/" in executable:
        found: str | None = str(cwd / executable)
    else:
        found = shutil.which(executable)
    if found is None or not os.path.isfile(found):
        raise PolicyError(f"{where}: executable {executable!r} not found")
    files = {executable: Path(found)}
    for word in argv[1:]:
        path = cwd / word
        if word not in files and os.path.isfile(path):
            files[word] = path
    return listing_digest(files, "command", where=where)


def policy_code_digest(spec: str, *, cwd: str | os.PathLike[str] | None = None) -> PolicyCode:
    """The code digest of the policy named by ``spec`` (the rules are in the module docstring).

    Args:
        spec: a policy spec, as ``--policy`` takes it.
        cwd: the folder relative ``cmd:`` paths are taken from (default: the working folder).

    Raises:
        PolicyError: the policy's code cannot be found or read.
    """
    from ..policies.baselines import BUILTIN_POLICIES
    from ..policies.spec import _IMPORT_RE, FILE_SPEC_RE

    if spec in BUILTIN_POLICIES or spec.startswith("openai:"):
        return listing_digest(emberbench_files(), "emberbench", where=f"policy {spec!r}")
    if spec.startswith("cmd:"):
        return _command_policy(spec[4:], Path(os.getcwd() if cwd is None else cwd))
    file_spec = FILE_SPEC_RE.fullmatch(spec)
    if file_spec is not None:
        path = Path(os.getcwd() if cwd is None else cwd) / file_spec.group("path")
        return listing_digest({path.name: path}, "python-module", where=f"policy {spec!r}")
    if _IMPORT_RE.fullmatch(spec):
        return _python_policy(spec.split(":", 1)[0], spec)
    found = _entry_point_policy(spec)
    if found is None:
        raise PolicyError(f"policy {spec!r}: not a built-in, module:factory, entry point or cmd: spec, so its "
                          "code cannot be digested")
    return found


__all__ = ["MAX_BYTES", "MAX_FILES", "RULES", "PolicyCode", "emberbench_files", "listing_digest",
           "policy_code_digest"]
