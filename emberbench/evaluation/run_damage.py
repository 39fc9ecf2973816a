"""Structural damage of one run in a store: the checks a rerun, ``store fsck``, ``store audit`` and repair share.

A run is its journal ``run-<hash>`` and its refs ``runs/<run>`` (the
run-info) and ``results/<run>`` (the complete result). Whatever else is
true of it, a run is damaged when:

* one of its refs exists but does not hold one valid key (or is not a
  regular file);
* its journal is missing while a ref of the run exists, or cannot be read
  (not a regular file, damaged before its end, not a journal);
* its first entry is not a valid run header, or an entry after it is not an
  episode of the run's manifest (an index in range, a digest that is a key,
  the entry referencing exactly that key, one digest per index);
* it is finished but does not journal every episode of its manifest, or its
  finish marker names another result than its ``results/`` ref; it is
  finished without a ``results/`` ref, or unfinished with one;
* its ``runs/`` ref does not name this run's run-info (not a run-info,
  another run's), or is missing although the run is finished.

These checks read refs, the journal, the run-info and the small manifest
object only, never a record or a result: ``store fsck`` runs them on every run, ``store
audit`` runs them before its full verification, a rerun runs them before it
trusts its journal, and ``fsck --repair`` runs them to know what to rebuild.
Each finding is a :class:`RunDamage`: an integrity error naming the object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import RunIntegrityError
from .run_info import JournalHeader, is_header_entry, run_info_ref

RESULT_REF_PREFIX = "results/"


@dataclass(frozen=True, slots=True)
class RunDamage:
    """One structural damage of a run.

    Attributes:
        run: the run's name (its journal name).
        subject: the damaged object: ``ref runs/<run>``, ``ref results/<run>`` or ``journal <run>``.
        reason: what is wrong with it, in a few words.
    """

    run: str
    subject: str
    reason: str

    @property
    def in_journal(self) -> bool:
        """Whether the journal (rather than a ref) is what is damaged."""
        return self.subject.startswith("journal ")

    def __str__(self) -> str:
        return f"integrity error: {self.subject} is damaged: {self.reason}"

    def error(self, store_name: str) -> RunIntegrityError:
        """The error a run raises when it finds this damage (nothing repaired; the way out named)."""
        return RunIntegrityError(f"{self} (store {store_name}); nothing was repaired: `emberbench store fsck "
                                 f"--repair` rebuilds it from what it can verify, `emberbench store rm-run "
                                 f"{self.run}` removes the run", subject=self.subject.split(" ", 1)[1])


def run_refs(run: str) -> tuple[str, str]:
    """The refs of ``run``: its run-info ref and its result ref."""
    return run_info_ref(run), f"{RESULT_REF_PREFIX}{run}"


def ref_damage(store: Any, run: str) -> RunDamage | None:
    """The first ref of ``run`` that exists but cannot be read as one key, or None.

    Raises:
        StoreIOError: the store cannot be read (not a verdict on the run).
    """
    from emberbench.store import RefError, StoreIOError, StoreLayoutError

    for ref in run_refs(run):
        try:
            store.refs.get(ref)
        except StoreIOError:
            raise
        except RefError as exc:
            if exc.reason != "no such ref":
                return RunDamage(run, f"ref {ref}", exc.reason)
        except StoreLayoutError as exc:
            return RunDamage(run, f"ref {ref}", exc.reason)
    return None


def journaled_episodes(entries: Sequence[Any], episodes: int | None, *, finished: bool = False) -> dict[int, str]:
    """The episodes a run journal records, ``{index: digest}``: the one rule for its entries.

    Args:
        entries: the journal's entries (a first entry that is a run header is checked and skipped).
        episodes: how many episodes the run's manifest schedules (None: unknown, indices are not bounded).
        finished: the journal is finished, so it must record every scheduled episode.

    Raises:
        ValueError: naming the first entry that breaks the rule, or the first episode a finished journal lacks.
    """
    from emberbench.store import validate_key

    start = 0
    if entries and is_header_entry(entries[0].data):
        JournalHeader.from_dict(entries[0].data)  # RunInfoError (a ValueError) when it is not a valid header
        start = 1
    elif entries or finished:
        # Every run journal starts with its header (the policy it runs); without it the journal was cut or
        # damaged (or written before headers existed, which no rerun resumes either).
        raise ValueError("its first entry is not a run header (the run's policy spec is lost)")
    journaled: dict[int, str] = {}
    for position in range(start, len(entries)):
        entry = entries[position]
        data = entry.data
        index, digest = data.get("index"), data.get("digest")
        try:
            validate_key(digest)
        except ValueError:
            index = None
        if (not isinstance(index, int) or isinstance(index, bool) or index < 0
                or (episodes is not None and index >= episodes)
                or journaled.get(index, digest) != digest or tuple(entry.keys) != (digest,)):
            raise ValueError(f"entry {position} is not an episode of this manifest")
        journaled[index] = digest
    if finished and episodes is not None and len(journaled) != episodes:
        first = next(i for i in range(episodes) if i not in journaled)
        raise ValueError(f"it is finished but journals {len(journaled)} of the manifest's {episodes} episodes "
                         f"(episode {first} is missing)")
    return journaled


def manifest_size(store: Any, state: Any) -> int | None:
    """How many episodes the manifest named by a journal's header schedules, or None if it cannot be read."""
    from emberbench.store import StoreError

    from ..io.input_policy import parse_json
    from ..results.manifest import manifest_from_dict

    entries = state.entries
    if not entries or not is_header_entry(entries[0].data) or len(entries[0].keys) != 1:
        return None
    key = entries[0].keys[0]
    try:
        manifest = manifest_from_dict(parse_json(store.get(key, verify_data=True), where=f"manifest {key}"),
                                      where=f"manifest {key}")
    except (StoreError, ValueError):
        return None  # lost or damaged: fsck reports the object; repair restores it
    return len(manifest.episodes) if manifest.hash == key else None


def journal_damage(store: Any, run: str, state: Any, *, against_ref: bool = True) -> RunDamage | None:
    """The structural damage of the journal ``state`` of ``run`` (see the module docstring), or None.

    The manifest's size comes from the object the header references; when
    that object cannot be read, indices are checked without an upper bound.
    ``against_ref=False`` leaves out the comparison of the finish marker with
    the ``results/`` ref (``store audit`` makes it after verifying the result).
    """
    from emberbench.store import RefError

    try:
        journaled_episodes(state.entries, manifest_size(store, state), finished=state.finish is not None)
    except ValueError as exc:
        return RunDamage(run, f"journal {run}", str(exc))
    if against_ref and state.finish is not None:
        result = state.finish.data.get("result")
        ref = f"{RESULT_REF_PREFIX}{run}"
        try:
            held = store.refs.get(ref)
        except RefError:
            held = None  # no ref (audit names that), or a damaged one (ref_damage names that)
        if isinstance(result, str) and held is not None and held != result:
            return RunDamage(run, f"journal {run}", f"it finished with result {result}, but ref {ref} holds {held}")
    return None


def read_state(store: Any, run: str) -> tuple[Any, RunDamage | None]:
    """``(journal state, None)``, ``(None, damage)`` when it cannot be read, ``(None, None)`` when there is none.

    Raises:
        StoreIOError: the store cannot be read.
    """
    from emberbench.store import JournalError, StoreError, StoreIOError

    try:
        return store.read_journal(run), None
    except StoreIOError:
        raise
    except JournalError as exc:
        if exc.reason == "no such journal":
            return None, None
        return None, RunDamage(run, f"journal {run}", f"it cannot be read: {exc.reason}")
    except StoreError as exc:
        return None, RunDamage(run, f"journal {run}", f"it cannot be read: {getattr(exc, 'reason', exc)}")


def info_damage(store: Any, run: str, *, finished: bool, result: str | None = None) -> RunDamage | None:
    """The damage of the run-info of ``run`` (its ``runs/`` ref holds a key: :func:`ref_damage` came first), or None.

    The ref must name a readable run-info of this very run (its own name, and
    a manifest and model that give that name); a finished run must have one,
    and when its journal finished with ``result``, the run-info must say so
    (state ``complete``, that result, every episode done): a ref moved back
    to an earlier run-info of the run is damage too.

    Raises:
        StoreIOError: the store cannot be read.
    """
    from emberbench.store import StoreError, StoreIOError, journal_name

    from ..errors import RunInfoError
    from .run_info import read_run_info

    ref = run_info_ref(run)
    try:
        info = read_run_info(store, run)
    except StoreIOError:
        raise
    except (RunInfoError, StoreError) as exc:
        return RunDamage(run, f"ref {ref}", f"it does not name a readable run-info: {' '.join(str(exc).split())}")
    if info is None:
        return RunDamage(run, f"ref {ref}", "it is missing, but the run is finished") if finished else None
    if info.run != run:
        return RunDamage(run, f"ref {ref}", f"it names the run-info of another run ({info.run})")
    if journal_name(info.manifest_hash, info.model_id) != run:
        return RunDamage(run, f"ref {ref}", f"its run-info's manifest and model ({info.model_id!r}) name another run")
    if result is not None and (info.state != "complete" or info.result != result
                               or info.episodes_done != info.episodes_scheduled):
        return RunDamage(run, f"ref {ref}", f"its run-info says {info.state} {info.episodes_done}/"
                                            f"{info.episodes_scheduled}, result {info.result}, but the journal "
                                            f"finished with result {result}")
    return None


def _held(store: Any, ref: str) -> str | None:
    """The key ``ref`` holds, or None when there is none (:func:`ref_damage` has vouched for its bytes)."""
    from emberbench.store import RefError

    try:
        return store.refs.get(ref)
    except RefError:
        return None


def run_damage(store: Any, run: str, *, journals: frozenset[str] | None = None, against_ref: bool = True,
               present: frozenset[str] | None = None) -> RunDamage | None:
    """The first structural damage of ``run`` (refs first, then its journal, then its run-info), or None.

    ``journals`` (the store's journal names) saves listing them again;
    ``against_ref=False`` leaves out the comparison of the finish marker with
    the ``results/`` ref (``store audit`` makes it after verifying the result);
    ``present`` (the keys the store holds intact, from one listing) adds the
    check that every object the journal and the refs reference is stored.

    Raises:
        StoreIOError: the store cannot be read (not a verdict on the run).
    """
    damage = ref_damage(store, run)
    if damage is not None:
        return damage
    info_ref, result_ref = run_refs(run)
    result = _held(store, result_ref)
    state = None
    if run in (journals if journals is not None else frozenset(store.journal_names())):
        state, damage = read_state(store, run)
        if damage is not None:
            return damage
    if state is None:
        present = [ref for ref in (result_ref, info_ref) if store.refs.exists(ref)]
        if present:
            return RunDamage(run, f"journal {run}", f"it is missing, but ref {present[0]} exists")
        return None
    damage = journal_damage(store, run, state, against_ref=against_ref)
    if damage is not None:
        return damage
    if state.finish is None and result is not None:
        return RunDamage(run, f"journal {run}", f"it is unfinished, but ref {result_ref} names a complete result")
    if state.finish is not None and result is None:
        return RunDamage(run, f"ref {result_ref}", f"it is missing, but journal {run} is finished")
    if present is not None:
        wanted = set(state.referenced_keys()) | ({result} if result is not None else set())
        lost = sorted(wanted - present)
        if lost:
            what = "the run's result" if result in lost else "a record or the manifest"
            return RunDamage(run, f"journal {run}", f"{len(lost)} object(s) the run references are not stored "
                                                    f"intact (first {lost[0]}, {what})")
    finished = state.finish.data.get("result") if state.finish is not None else None
    return info_damage(store, run, finished=state.finish is not None,
                       result=finished if isinstance(finished, str) else None)


def store_damage(store: Any, *, present: frozenset[str] | None = None) -> list[RunDamage]:
    """The structural damage of every run of ``store`` (named ``run-<64 hex>`` by a journal or a ref), in order.

    ``present``: the keys the store holds intact (see :func:`run_damage`).
    """
    from .store_names import run_names

    journals = frozenset(store.journal_names())
    return [d for d in (run_damage(store, run, journals=journals, present=present) for run in run_names(store))
            if d is not None]


__all__ = ["RunDamage", "info_damage", "journal_damage", "journaled_episodes", "manifest_size", "read_state",
           "ref_damage", "run_damage", "run_refs", "store_damage"]
