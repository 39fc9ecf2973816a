"""The suite a file needs: a result's manifest names it, a run record names its scenario.

The rules are :func:`emberbench.sim.known_suites.suite_for`'s: a suite given
explicitly wins; else a shipped suite by the manifest's id; else a folder the
known-suites list ``known`` remembers for the manifest's hash (the command
line passes ``.emberbench/suites.json``; the library passes none unless
asked). The command line and the Python API both choose suites here.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import EmberError, ResultError
from ..sim.known_suites import suite_for, suite_of_record
from ..sim.suite import Suite, load_suite

SuiteArg = Suite | str | os.PathLike[str] | None
Known = str | os.PathLike[str] | None


def given_suite(suite: SuiteArg) -> Suite | None:
    """``suite`` as a loaded suite (a folder or a shipped id is loaded), or None."""
    return suite if isinstance(suite, Suite) or suite is None else load_suite(suite)


def suite_of_result(path: str | os.PathLike[str], suite: SuiteArg = None, *, known: Known = None) -> Suite:
    """The suite of the result artifact at ``path``: ``suite`` if given, else the one its manifest names.

    Raises:
        ResultError: the artifact's header is refused (read from its end; nothing is replayed).
        SuiteError: the manifest's suite is neither shipped nor known (:func:`suite_for`).
    """
    explicit = given_suite(suite)
    if explicit is not None:
        return explicit
    from ..results.stream import read_header

    header = read_header(path)
    return suite_for(header.manifest.suite_id, header.manifest.suite_hash, known=known, where=header.where)


def suite_of_file(path: str | os.PathLike[str], suite: SuiteArg = None, *, known: Known = None) -> Suite:
    """The suite for a file that is a result artifact or a run record (``view``, ``replay``).

    A result is :func:`suite_of_result`. A run record names its scenario by
    id and content hash: the shipped or known suite that holds exactly that
    scenario. Anything else (a file that is neither, or a record of a
    scenario no such suite holds) gets the public suite, and the reader the
    command uses then says what is wrong with the file.
    """
    explicit = given_suite(suite)
    if explicit is not None:
        return explicit
    from ..io.input_policy import RESULT, open_input

    try:
        with open_input(path, RESULT) as handle:
            start = handle.read(16)
    except EmberError:
        start = b""
    if start.startswith(b'{"episodes":'):
        try:
            return suite_of_result(path, known=known)
        except ResultError:
            pass  # not a result after all (a manifest starts the same way)
    if start.startswith(b'{"actions":'):
        found = suite_of_record(path, known=known)
        if found is not None:
            return found
    return load_suite()


def suite_of_manifest(manifest: Any, suite: SuiteArg = None, *, known: Known = None, where: str = "the manifest") -> Suite:
    """The suite of an :class:`~emberbench.results.manifest.EvaluationManifest` (not yet checked against it)."""
    explicit = given_suite(suite)
    if explicit is not None:
        return explicit
    return suite_for(manifest.suite_id, manifest.suite_hash, known=known, where=where)


__all__ = ["given_suite", "suite_of_file", "suite_of_manifest", "suite_of_result"]
