"""Structural damage of one run in a store: the checks a rerun, ``store fsck``, ``store audit`` and repair share.

A run is its journal ``run-<hash>`` and its refs ``runs/<run>`` (the
run-info) and ``results/<run>`` (the complete result). Whatever else is
true of it, a run is damaged when:

* one of its refs exists but does not hold one valid key (or is not a
  regular file);
* its journal cannot be read (not a regular file, damaged before its end,
  not a journal);
* its header is not a valid run header, or an entry after it is not an
  episode of the run's manifest (an index in range, a digest that is a key,
  the entry referencing exactly that key, one digest per index);
* it is finished but does not journal every episode of its manifest, or its
  finish marker names another result than its ``results/`` ref.

These checks read refs, the journal and the small manifest object only,
never a record or a result: ``store fsck`` runs them on every run, ``store
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


def run_damage(store: Any, run: str, *, journals: frozenset[str] | None = None) -> RunDamage | None:
    """The first structural damage of ``run`` (refs first, then its journal), or None.

    ``journals`` (the store's journal names) saves listing them again.

    Raises:
        StoreIOError: the store cannot be read (not a verdict on the run).
    """
    damage = ref_damage(store, run)
    if damage is not None:
        return damage
    if run not in (journals if journals is not None else frozenset(store.journal_names())):
        return None
    state, damage = read_state(store, run)
    if damage is not None or state is None:
        return damage
    return journal_damage(store, run, state)


def store_damage(store: Any) -> list[RunDamage]:
    """The structural damage of every run of ``store`` (named ``run-<64 hex>`` by a journal or a ref), in order."""
    from .store_names import run_names

    journals = frozenset(store.journal_names())
    return [d for d in (run_damage(store, run, journals=journals) for run in run_names(store)) if d is not None]


__all__ = ["RunDamage", "journal_damage", "journaled_episodes", "manifest_size", "read_state", "ref_damage",
           "run_damage", "run_refs", "store_damage"]
