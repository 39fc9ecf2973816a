"""What keeps an object alive: refs and journals (finished or not).

gc and fsck's connectivity check share this one definition of the roots, so
"referenced" means the same thing to both. A finished journal stays a root
until it is deleted: a finished run's records are what a rerun, a resume into
a new output, or an audit reads back, so only deleting the run's journal
(explicitly) lets gc collect them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import JournalError, RefError

if TYPE_CHECKING:
    from .core import Store


@dataclass(frozen=True, slots=True)
class Roots:
    """Every reference that keeps objects alive, by where it comes from.

    Attributes:
        refs: ``(ref name, key)`` for every ref.
        journals: ``(journal name, key)`` for every key referenced by an
            entry or the finish marker of any journal.
        finished_journals: names of journals that carry a finish marker (roots too).
    """

    refs: tuple[tuple[str, str], ...]
    journals: tuple[tuple[str, str], ...]
    finished_journals: tuple[str, ...]

    def keys(self) -> frozenset[str]:
        """The marked set: every key some root references."""
        return frozenset(k for _, k in self.refs) | frozenset(k for _, k in self.journals)


def collect_roots(store: Store, *, ignore_journals: frozenset[str] = frozenset(),
                  ignore_refs: frozenset[str] = frozenset()) -> Roots:
    """Read every ref and journal of ``store`` (but those named in ``ignore_journals`` and ``ignore_refs``).

    Raises:
        RefError / StoreLayoutError: a ref cannot be read.
        JournalError / JournalCorruptError: a journal cannot be read. gc must
            not guess what an unreadable root referenced, so it stops.
    """
    refs: list[tuple[str, str]] = []
    for name in store.refs.names():
        if name in ignore_refs:
            continue
        try:
            refs.append((name, store.refs.get(name)))
        except RefError as exc:
            if exc.reason != "no such ref":
                raise
    journal_refs: list[tuple[str, str]] = []
    finished: list[str] = []
    for name in store.journal_names():
        if name in ignore_journals:
            continue
        try:
            state = store.read_journal(name)
        except JournalError as exc:
            if exc.reason == "no such journal":
                continue  # deleted since it was listed
            raise
        if state.finished:
            finished.append(name)
        journal_refs.extend((name, key) for key in sorted(state.referenced_keys()))
    return Roots(tuple(refs), tuple(journal_refs), tuple(finished))
