"""Retention: which runs ``store gc --keep`` keeps, and which it removes before collecting their objects.

Rules (``--keep``, repeatable; a run is kept when any rule keeps it):

* ``last=N``: the N most recently started runs of each model id;
* ``younger=D``: runs whose last sign of life (end, else heartbeat, else
  start) is less than D ago on the store's clock (``D`` is a number and a
  unit: ``s``, ``m``, ``h``, ``d`` or ``w``, e.g. ``30d``);
* ``tagged``: runs whose run-info carries at least one tag; ``tag=NAME``:
  runs tagged NAME (a run-info's ``tags``, given with ``run --tag``; a
  run-info older than 1.2 has none).

Whatever the rules say, a run that is alive (running with a fresh
heartbeat), whose run-info cannot be read, or that has none, is kept, with
the reason: retention never removes what it cannot judge. Removing a run is
``store rm-run``: its journal and its refs go, then gc collects the objects
nothing else references. Without any ``--keep`` rule, gc removes no run.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..errors import StoreUsageError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_RE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?)([smhdw])")
_TAG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:=+-]{0,63}")  # a tag as run --tag takes it (run_info)
MAX_LAST = 1_000_000


def _duration(seconds: float) -> str:
    """``seconds`` in the largest unit that divides it (``30d``, ``36h``, ``90s``)."""
    for unit in "wdhm":
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{seconds / _UNITS[unit]:g}{unit}"
    return f"{seconds:g}s"


@dataclass(frozen=True, slots=True)
class KeepRules:
    """The ``--keep`` rules of one gc (see the module docstring); empty means: remove no run."""

    last: int | None = None
    younger: float | None = None
    tagged: bool = False
    tags: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return self.last is not None or self.younger is not None or self.tagged or bool(self.tags)

    def describe(self) -> str:
        parts = ([f"the last {self.last} per model"] if self.last is not None else []) \
            + ([f"runs younger than {_duration(self.younger)}"] if self.younger is not None else []) \
            + (["tagged runs"] if self.tagged else []) + [f"runs tagged {t}" for t in self.tags]
        return ", ".join(parts)


def parse_keep(values: list[str]) -> KeepRules:
    """Rules from ``--keep`` values (``last=N``, ``younger=D``, ``tagged``, ``tag=NAME``).

    Raises:
        StoreUsageError: a value is not one of these forms, or a rule is given twice.
    """
    last: int | None = None
    younger: float | None = None
    tagged = False
    tags: list[str] = []
    for value in values:
        name, _, arg = value.partition("=")
        if name == "last" and arg:
            if not arg.isascii() or not arg.isdigit() or not 1 <= int(arg) <= MAX_LAST or last is not None:
                raise StoreUsageError(f"--keep last=N takes one whole number from 1 to {MAX_LAST}, got {value!r:.80}")
            last = int(arg)
        elif name == "younger" and arg:
            match = _DURATION_RE.fullmatch(arg)
            if match is None or younger is not None or float(match.group(1)) <= 0:
                raise StoreUsageError(f"--keep younger=D takes one positive duration such as 36h or 30d (units s, "
                                      f"m, h, d, w), got {value!r:.80}")
            younger = float(match.group(1)) * _UNITS[match.group(2)]
        elif value == "tagged":
            tagged = True
        elif name == "tag" and _TAG_RE.fullmatch(arg):
            tags.append(arg)
        else:
            raise StoreUsageError(f"--keep takes last=N, younger=D, tagged or tag=NAME, got {value!r:.80}")
    return KeepRules(last, younger, tagged, tuple(sorted(set(tags))))


@dataclass(frozen=True, slots=True)
class Decision:
    """What retention decided for one run, and why (``kept`` by a rule or a safety, else removed)."""

    run: str
    kept: bool
    reason: str


def plan_retention(store: Any, rules: KeepRules) -> list[Decision]:
    """One decision per run of ``store``, in run-name order (nothing is changed)."""
    from ..evaluation.liveness import effective_state, last_beat, seconds_of
    from ..evaluation.store_names import run_names
    from .catalog import read_row

    now = store.now()
    rows = [read_row(store, run) for run in run_names(store)]
    newest: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in rows:
        if row.info is not None:
            newest[row.info.model_id].append((row.info.started, row.run))
    recent = {run for runs in newest.values()
              for _, run in sorted(runs, key=lambda r: (r[0], r[1]), reverse=True)[:rules.last or 0]}
    decisions = []
    for row in rows:
        info = row.info
        if info is None:
            decisions.append(Decision(row.run, True, f"kept: its run-info cannot be judged ({row.damage})"))
            continue
        tags = info.tags
        age = now - seconds_of(info.ended or last_beat(info))
        why = []
        if effective_state(info, now) == "running":
            why.append("it is running")
        if row.run in recent:
            why.append(f"among the last {rules.last} of model {info.model_id!r}")
        if rules.younger is not None and age < rules.younger:
            why.append(f"younger than {_duration(rules.younger)}")
        if rules.tagged and tags:
            why.append(f"tagged {', '.join(tags)}")
        matched = sorted(set(tags) & set(rules.tags))
        if matched:
            why.append(f"tagged {', '.join(matched)}")
        if why:
            decisions.append(Decision(row.run, True, "kept: " + "; ".join(why)))
        else:
            decisions.append(Decision(row.run, False, f"model {info.model_id!r}, {info.state}, started "
                                                      f"{info.started}, last seen {int(age)} s ago"))
    return decisions


def dropped_roots(store: Any, decisions: list[Decision]) -> tuple[list[str], list[str]]:
    """The journals and refs the runs to remove hold (what gc may treat as gone in a dry run)."""
    from ..evaluation.run_damage import run_refs
    from ..provenance.attest import attestation_ref

    journals = frozenset(store.journal_names())
    gone_journals, gone_refs = [], []
    for decision in decisions:
        if decision.kept:
            continue
        if decision.run in journals:
            gone_journals.append(decision.run)
        gone_refs.extend(ref for ref in (*run_refs(decision.run), attestation_ref(decision.run))
                         if store.refs.exists(ref))
    return gone_journals, gone_refs


__all__ = ["Decision", "KeepRules", "dropped_roots", "parse_keep", "plan_retention"]
