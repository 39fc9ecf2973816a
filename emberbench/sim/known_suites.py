"""Suites given once by their folder: how a manifest's suite is found when it is not shipped.

A manifest names its suite by id, version and hash, never by a path, so the
same manifest stays valid wherever the suite is kept. A suite shipped with
EMBERBench is found by its id. Any other suite (one made by ``suite
generate``, or a folder of one's own) is found in the *known-suites list*:
a small file (the command line keeps it at ``.emberbench/suites.json`` in the
working folder) that records, for each suite hash, the folder where that
suite was given. :func:`remember_suite` adds a folder; :func:`suite_for`
decides which suite a manifest uses:

1. the suite given explicitly (``--suite``), if any;
2. else the shipped suite of the manifest's id;
3. else the folder the known-suites list records for the manifest's suite
   hash, loaded and checked to still hold that suite;
4. else :class:`~emberbench.errors.SuiteError`, saying to give the folder.

The list is format ``known_suites_version`` 1.0 (docs/formats.md):
``{"known_suites_version": "1.0", "suites": [{"folder", "suite_hash",
"suite_id", "suite_version"}, ...]}``, canonical JSON, one entry per suite
hash, sorted by id, version and hash, at most :data:`MAX_KNOWN_SUITES`
entries. It is read strictly (input policy, exact keys, known version) and
written atomically; a folder is stored absolute, so the list works from any
working folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SuiteError
from ..io.canonical import canonical_bytes, is_sha256_hex
from ..io.input_policy import InputKind, MiB, load_json
from ..io.versions import KNOWN_SUITES_VERSION
from .suite import SEMVER_RE, SHIPPED_SUITES, SUITE_ID_RE, Suite, load_suite, suite_folder

MAX_KNOWN_SUITES = 1000
"""Most suites the list remembers; adding one more forgets the entry listed first."""
KNOWN_SUITES = InputKind("known-suites list", 1 * MiB, max_values=20_000)
TOP_KEYS = frozenset({"known_suites_version", "suites"})
ENTRY_KEYS = frozenset({"folder", "suite_hash", "suite_id", "suite_version"})
MAX_FOLDER = 4096


@dataclass(frozen=True, slots=True)
class KnownSuite:
    """One remembered suite: which suite, and the (absolute) folder it was given as."""

    suite_id: str
    suite_version: str
    suite_hash: str
    folder: str

    def to_dict(self) -> dict[str, str]:
        return {"folder": self.folder, "suite_hash": self.suite_hash, "suite_id": self.suite_id,
                "suite_version": self.suite_version}


def _entry(value: Any, where: str) -> KnownSuite:
    if not isinstance(value, dict) or set(value) != ENTRY_KEYS:
        raise SuiteError(f"{where}: must be an object with exactly the keys {', '.join(sorted(ENTRY_KEYS))}")
    sid, version, digest, folder = value["suite_id"], value["suite_version"], value["suite_hash"], value["folder"]
    if not isinstance(sid, str) or not SUITE_ID_RE.match(sid):
        raise SuiteError(f"{where}: suite_id {sid!r} is not well formed")
    if not isinstance(version, str) or not SEMVER_RE.match(version):
        raise SuiteError(f"{where}: suite_version {version!r} is not MAJOR.MINOR.PATCH")
    if not isinstance(digest, str) or not is_sha256_hex(digest):
        raise SuiteError(f"{where}: suite_hash is not a lowercase SHA-256 hex digest")
    if (not isinstance(folder, str) or not folder.startswith("/") or len(folder) > MAX_FOLDER
            or not folder.isprintable()):
        raise SuiteError(f"{where}: folder must be an absolute path of at most {MAX_FOLDER} printable characters")
    return KnownSuite(sid, version, digest, folder)


def read_known_suites(path: str | os.PathLike[str]) -> tuple[KnownSuite, ...]:
    """The suites the list at ``path`` remembers (none when there is no file).

    Raises:
        SuiteError: the file breaks the input policy, is not strict JSON, is
            of another version or has unknown, missing or malformed fields
            (the message names the file).
    """
    where = os.fspath(path)
    if not os.path.lexists(where):
        return ()
    data = load_json(where, KNOWN_SUITES, error=SuiteError)
    if "known_suites_version" in data and data["known_suites_version"] != KNOWN_SUITES_VERSION:
        raise SuiteError(f"{where}: unsupported known_suites_version {data['known_suites_version']!r} "
                         f"(this version reads {KNOWN_SUITES_VERSION!r})")
    if set(data) != TOP_KEYS:
        from ..schemas.kinds import not_what_was_wanted

        raise SuiteError(not_what_was_wanted(where, data, "known-suites")
                         or f"{where}: keys must be exactly {', '.join(sorted(TOP_KEYS))}")
    suites = data["suites"]
    if not isinstance(suites, list) or len(suites) > MAX_KNOWN_SUITES:
        raise SuiteError(f"{where}: suites must be a list of at most {MAX_KNOWN_SUITES} entries")
    entries = tuple(_entry(value, f"{where}: suites[{i}]") for i, value in enumerate(suites))
    if len({e.suite_hash for e in entries}) != len(entries):
        raise SuiteError(f"{where}: a suite hash is listed twice")
    return entries


def known_suites_bytes(entries: tuple[KnownSuite, ...] | list[KnownSuite]) -> bytes:
    """The canonical bytes of a list holding ``entries`` (sorted by id, version and hash)."""
    ordered = sorted(entries, key=lambda e: (e.suite_id, e.suite_version, e.suite_hash))
    return canonical_bytes({"known_suites_version": KNOWN_SUITES_VERSION,
                            "suites": [e.to_dict() for e in ordered]}) + b"\n"


def remember_suite(path: str | os.PathLike[str], suite_id: str, suite_version: str, suite_hash: str,
                   given: str | os.PathLike[str]) -> bool:
    """Record in the list at ``path`` that the suite (id, version, hash) is the folder ``given``.

    A shipped suite is not recorded (it is found by its id). The folder (made
    absolute) replaces what the list held for the same suite hash. The list's
    folder is created if needed; the file is written atomically. Returns
    whether the list changed.

    Raises:
        SuiteError: the existing list cannot be read (it is left as it is).
        OutputPathError, OSError: the list cannot be written.
    """
    from ..io.atomic import atomic_write_bytes

    if suite_id in SHIPPED_SUITES:  # found by its id: nothing to remember
        return False
    folder = str(suite_folder(given).absolute())
    if len(folder) > MAX_FOLDER or not folder.isprintable():
        return False  # such a folder cannot be listed; --suite still names it
    before = read_known_suites(path)
    new = _entry(KnownSuite(suite_id, suite_version, suite_hash, folder).to_dict(), "suite")
    if new in before:
        return False
    entries = [e for e in before if e.suite_hash != suite_hash] + [new]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, known_suites_bytes(entries[-MAX_KNOWN_SUITES:]))
    return True


def suite_for(suite_id: str | None, suite_hash: str | None = None, *, given: str | os.PathLike[str] | None = None,
              known: str | os.PathLike[str] | None = None, where: str = "the manifest") -> Suite:
    """The suite a manifest of suite ``suite_id`` (hash ``suite_hash``) uses; the rule is in the module docstring.

    ``suite_id`` None (nothing to go by) means the public suite. The suite
    found is not checked against the manifest here: the manifest's reader
    does that, so a mismatch is reported the same way whichever rule chose
    the suite.

    Raises:
        SuiteError: the suite is not shipped and neither given nor known, or
            the remembered folder now holds another suite; or the known-suites
            list cannot be read.
    """
    if given is not None:
        return load_suite(given)
    if suite_id is None or suite_id in SHIPPED_SUITES:
        return load_suite(suite_id)
    remembered = None
    if known is not None and suite_hash is not None:
        remembered = next((e for e in read_known_suites(known) if e.suite_hash == suite_hash), None)
    if remembered is None:
        raise SuiteError(f"{where}: its manifest names suite {suite_id!r}, which is not shipped with EMBERBench "
                         "and has not been given here before; give the suite's folder with --suite FOLDER "
                         "(`manifest build --suite FOLDER` and `suite generate` remember it)")
    try:
        suite = load_suite(remembered.folder)
    except SuiteError as exc:
        raise SuiteError(f"{where}: suite {suite_id!r} was given as folder {remembered.folder} (remembered in "
                         f"{os.fspath(known)}), which cannot be loaded now: {exc}; give it with --suite FOLDER") from None
    if suite.hash != suite_hash:
        raise SuiteError(f"{where}: suite {suite_id!r} was given as folder {remembered.folder} (remembered in "
                         f"{os.fspath(known)}), which now holds suite {suite.id} {suite.version} of another hash; "
                         "give the manifest's suite with --suite FOLDER")
    return suite


def known_suite_folders(known: str | os.PathLike[str] | None) -> list[str]:
    """The folders the list at ``known`` remembers (none for None or no file), in the list's order."""
    return [] if known is None else [e.folder for e in read_known_suites(known)]


def suite_with_scenario(scenario_id: str, scenario_hash: str | None = None, *,
                        known: str | os.PathLike[str] | None = None) -> Suite | None:
    """The first shipped suite, then remembered suite, that holds scenario ``scenario_id`` (with that content hash,
    when given); None when none does. A remembered folder that cannot be loaded is passed over.
    """
    def holds(suite: Suite) -> bool:
        return any(s.id == scenario_id and (scenario_hash is None or s.content_hash == scenario_hash)
                   for s in suite.scenarios)

    for name in SHIPPED_SUITES:
        suite = load_suite(name)
        if holds(suite):
            return suite
    for folder in known_suite_folders(known):
        try:
            suite = load_suite(folder)
        except SuiteError:
            continue
        if holds(suite):
            return suite
    return None


def suite_of_record(path: str | os.PathLike[str], *, known: str | os.PathLike[str] | None = None) -> Suite | None:
    """:func:`suite_with_scenario` for the scenario a run record file names in its header (None when unreadable)."""
    from ..errors import EmberError
    from ..io.input_policy import RECORD

    try:
        header = load_json(path, RECORD, error=SuiteError).get("header")
    except EmberError:
        return None
    if not isinstance(header, dict) or not isinstance(header.get("scenario_id"), str):
        return None
    digest = header.get("scenario_hash")
    return suite_with_scenario(header["scenario_id"], digest if isinstance(digest, str) else None, known=known)


__all__ = ["KNOWN_SUITES", "MAX_KNOWN_SUITES", "KnownSuite", "known_suite_folders", "known_suites_bytes",
           "read_known_suites", "remember_suite", "suite_for", "suite_of_record", "suite_with_scenario"]
