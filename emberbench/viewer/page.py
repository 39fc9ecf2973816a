"""The self-contained viewer page: which episodes it embeds, and the HTML around them.

A page is one HTML file with its style, its script and its data inline; it
never fetches anything, so it works from ``file://`` and offline. A record
gives a page of one episode. A result may hold 10^5 episodes, so its page
lists every episode in the picker (a compact row each: index, scenario,
seed, counts) but embeds the frames of a bounded set only:

1. the requested episode (``--episode`` or ``--scenario``/``--seed``);
2. then, scenario by scenario in suite order and round after round, the
   episode with the most casualties, the most stranded, the most steps and
   the lowest index (each episode once);
3. then every other episode in manifest order,

until :data:`DEFAULT_EMBED` episodes (``--embed``, at most :data:`MAX_EMBED`)
or :data:`MAX_EMBED_BYTES` of episode data are reached, so a result of up to
``--embed`` episodes is embedded whole. Picking an episode that is not
embedded shows the command that makes a page for it
(:func:`episode_page_name` says where that page goes) and draws nothing
else in its place.

Memory: the builder keeps one small row per episode for the picker, at most
four candidate records per scenario, and the encoded frames of the first
episodes in manifest order (at most ``--embed`` of them and
:data:`MAX_EMBED_BYTES` in all), whatever the number of episodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..errors import PresentationError
from ..io.input_policy import MiB
from ..sim.suite import Suite
from .frames import episode_frames
from .payload import ScenarioTable, episode_payload, page_document, script_json
from .source import AuthenticatedEpisode

DEFAULT_EMBED = 48
MAX_EMBED = 1000
MAX_EMBED_BYTES = 8 * MiB
_KINDS: tuple[tuple[str, Callable[[AuthenticatedEpisode], tuple[int, int]]], ...] = (
    ("casualties", lambda e: (-len(e.record.casualties), e.index or 0)),
    ("stranded", lambda e: (-len(e.record.stranded), e.index or 0)),
    ("steps", lambda e: (-e.record.steps, e.index or 0)),
    ("first", lambda e: (0, e.index or 0)),
)


def asset_text(name: str) -> str:
    """One file of the viewer's package data (``assets/NAME``)."""
    return (resources.files("emberbench.viewer") / "assets" / name).read_text(encoding="utf-8")


def render_html(template: str, document: dict[str, Any], *, script: str, style: str) -> bytes:
    """Fill an HTML template's ``@@TITLE@@``, ``@@STYLE@@``, ``@@SCRIPT@@`` and ``@@DATA@@`` slots."""
    import html

    out = template.replace("@@TITLE@@", html.escape(str(document.get("title", "EMBERBench"))))
    out = out.replace("@@STYLE@@", style).replace("@@SCRIPT@@", script)
    return out.replace("@@DATA@@", script_json(document)).encode("utf-8")


def viewer_html(document: dict[str, Any]) -> bytes:
    """The viewer page for a page document (:func:`emberbench.viewer.payload.page_document`)."""
    return render_html(asset_text("viewer.html"), document, script=asset_text("viewer.js"),
                       style=asset_text("viewer.css"))


def record_page(episode: AuthenticatedEpisode, *, source_name: str) -> bytes:
    """The page of one authenticated run record."""
    frames = episode_frames(episode.scenario, episode.record, episode.metrics)
    table = ScenarioTable()
    payload = episode_payload(frames, table.slot(episode.scenario))
    title = f"{episode.scenario.id} seed {episode.record.seed}"
    source = {"kind": "record", "name": source_name, "record_digest": episode.record.digest()}
    return viewer_html(page_document(title=title, source=source, scenarios=table, episodes=[payload],
                                     listing=None, start=0, regenerate=None))


@dataclass(frozen=True, slots=True)
class Wanted:
    """The episode a page opens on: by manifest index, or by (scenario id, seed); none means the default."""

    index: int | None = None
    scenario_id: str | None = None
    seed: int | None = None

    def matches(self, episode: AuthenticatedEpisode) -> bool:
        """True for the wanted episode."""
        if self.index is not None:
            return episode.index == self.index
        return (self.scenario_id is not None and episode.record.scenario_id == self.scenario_id
                and episode.record.seed == self.seed)

    @property
    def given(self) -> bool:
        """True when an episode was asked for."""
        return self.index is not None or self.scenario_id is not None


class ResultPageBuilder:
    """Builds the viewer page of a result from its authenticated episodes, fed one at a time.

    Args:
        suite: the suite (scenario order for the selection).
        source_name: how the page names the result file (and in its
            regenerate command).
        wanted: the episode to open on.
        embed: most episodes to embed, in ``[1, MAX_EMBED]``.
        episode_pages: where, relative to this page, the page of a
            non-embedded episode is written by the regenerate command
            (``{index}`` stands for the episode), or None when unknown.
    """

    def __init__(self, suite: Suite, *, source_name: str, wanted: Wanted = Wanted(),
                 embed: int = DEFAULT_EMBED, episode_pages: str | None = None) -> None:
        if not 1 <= embed <= MAX_EMBED:
            raise PresentationError(f"--embed must be in [1, {MAX_EMBED}], got {embed}")
        self.suite = suite
        self.source_name = source_name
        self.wanted = wanted
        self.embed = embed
        self.columns: dict[str, list[Any]] = {k: [] for k in
                                              ("index", "scenario", "seed", "evacuated", "casualties",
                                               "stranded", "steps")}
        self._scenario_slot: dict[str, int] = {}
        self._best: dict[tuple[str, str], AuthenticatedEpisode] = {}
        self._wanted: AuthenticatedEpisode | None = None
        self.episode_pages = episode_pages
        self.embedded: tuple[int | None, ...] = ()
        self._fill: dict[int, tuple[str, dict[str, Any], int]] = {}  # index -> (scenario id, payload, size)
        self._fill_bytes = 0

    def add(self, episode: AuthenticatedEpisode) -> None:
        """Take one authenticated episode of the result (manifest order)."""
        rec = episode.record
        sid = rec.scenario_id
        slot = self._scenario_slot.setdefault(sid, len(self._scenario_slot))
        c = self.columns
        c["index"].append(episode.index)
        c["scenario"].append(slot)
        c["seed"].append(str(rec.seed))
        c["evacuated"].append(len(rec.evacuations))
        c["casualties"].append(len(rec.casualties))
        c["stranded"].append(len(rec.stranded))
        c["steps"].append(rec.steps)
        for kind, key in _KINDS:
            held = self._best.get((sid, kind))
            if held is None or key(episode) < key(held):
                self._best[(sid, kind)] = episode
        if self._wanted is None and self.wanted.matches(episode):
            self._wanted = episode
        if len(self._fill) < self.embed and self._fill_bytes < MAX_EMBED_BYTES and episode.index is not None:
            payload = self._payload(episode, slot)
            cost = len(script_json(payload))
            if self._fill_bytes + cost <= MAX_EMBED_BYTES:
                self._fill[episode.index] = (sid, payload, cost)
                self._fill_bytes += cost
            else:
                self._fill_bytes = MAX_EMBED_BYTES  # full: later episodes are not encoded

    @staticmethod
    def _payload(episode: AuthenticatedEpisode, slot: int) -> dict[str, Any]:
        frames = episode_frames(episode.scenario, episode.record, episode.metrics, index=episode.index)
        return episode_payload(frames, slot)

    def representative(self, scenario_id: str) -> int | None:
        """The index of the episode the page shows first for ``scenario_id`` (most casualties)."""
        held = self._best.get((scenario_id, "casualties"))
        return None if held is None else held.index

    def selection(self) -> list[AuthenticatedEpisode]:
        """The episodes to embed, in page order (see the module docstring)."""
        if self.wanted.given and self._wanted is None:
            w = self.wanted
            what = f"episode index {w.index}" if w.index is not None else \
                f"episode of scenario {w.scenario_id!r} seed {w.seed}"
            raise PresentationError(f"{self.source_name}: the result has no {what}")
        chosen: list[AuthenticatedEpisode] = [] if self._wanted is None else [self._wanted]
        seen = {e.index for e in chosen}
        order = [s.id for s in self.suite.scenarios if s.id in self._scenario_slot]
        for kind, _ in _KINDS:
            for sid in order:
                held = self._best.get((sid, kind))
                if held is not None and held.index not in seen:
                    chosen.append(held)
                    seen.add(held.index)
        return chosen

    def build(self, *, model_id: str, manifest_hash: str, result_digest: str) -> bytes:
        """The page's HTML (call after the last episode was added)."""
        if not self.columns["index"]:
            raise PresentationError(f"{self.source_name}: the result has no episodes to show")
        table = ScenarioTable()
        # Scenario slots of the listing follow first appearance; keep the table in that order.
        by_id = {s.id: s for s in self.suite.scenarios}
        for sid in self._scenario_slot:
            table.slot(by_id[sid])
        payloads: list[dict[str, Any]] = []
        size = 0
        chosen = self.selection()
        seen = {e.index for e in chosen}
        # then the rest in manifest order, from the frames encoded while reading
        order: list[tuple[AuthenticatedEpisode | None, int | None]] = [(e, e.index) for e in chosen]
        order += [(None, i) for i in self._fill if i not in seen]
        for episode, index in order:
            if len(payloads) >= self.embed:
                break
            held = self._fill.get(index) if index is not None else None
            if held is not None:
                sid, payload, cost = held
                payload = {**payload, "scenario": table.slot(by_id[sid])}
            else:
                assert episode is not None
                payload = self._payload(episode, table.slot(episode.scenario))
                cost = len(script_json(payload))
            if payloads and size + cost > MAX_EMBED_BYTES:
                continue
            payloads.append(payload)
            size += cost
        self.embedded = tuple(p["index"] for p in payloads)
        source = {"kind": "result", "name": self.source_name, "model_id": model_id,
                  "manifest_hash": manifest_hash, "result_digest": result_digest,
                  "suite": f"{self.suite.id} {self.suite.version}", "suite_hash": self.suite.hash}
        title = f"{model_id}: {len(self.columns['index'])} episodes"
        regenerate = f"emberbench view {_shell_word(self.source_name)} --episode {{index}}"
        return viewer_html(page_document(title=title, source=source, scenarios=table, episodes=payloads,
                                         listing=self.columns, start=0, regenerate=regenerate,
                                         regenerate_page=self.episode_pages))


def _shell_word(text: str) -> str:
    """``text`` as one word of a POSIX shell command (quoted only when it needs to be)."""
    import shlex

    return shlex.quote(text)


def episode_page_name(result_name: str, wanted: Wanted) -> str:
    """The file name ``view`` writes by default for a result: ``NAME.view.html``, or one per chosen episode.

    ``NAME.episode-29.view.html`` for ``--episode 29`` and
    ``NAME.SCENARIO.seed-4.view.html`` for ``--scenario``/``--seed``, so the
    command a page shows for an episode it does not embed writes a new file
    beside the result instead of meeting the page it came from.
    """
    import re
    from pathlib import PurePath

    stem = PurePath(result_name).stem
    if wanted.index is not None:
        return f"{stem}.episode-{wanted.index}.view.html"
    if wanted.scenario_id is not None:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", wanted.scenario_id).strip("-.") or "scenario"
        return f"{stem}.{safe}.seed-{wanted.seed}.view.html"
    return f"{stem}.view.html"
