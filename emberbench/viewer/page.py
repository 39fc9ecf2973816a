"""The self-contained viewer page: which episodes it embeds, and the HTML around them.

A page is one HTML file with its style, its script and its data inline; it
never fetches anything, so it works from ``file://`` and offline. A record
gives a page of one episode. A result may hold 10^5 episodes, so its page
lists every episode in the picker (a compact row each: index, scenario,
seed, counts) but embeds the frames of a bounded set only:

1. the requested episode (``--episode`` or ``--scenario``/``--seed``);
2. then, scenario by scenario in suite order and round after round, the
   episode with the most casualties, the most stranded, the most steps and
   the lowest index (each episode once),

until :data:`DEFAULT_EMBED` episodes (``--embed``) or
:data:`MAX_EMBED_BYTES` of episode data are reached. Picking an episode that
is not embedded shows the command that makes a page for it.

Memory: the builder keeps one small row per episode for the picker and at
most four candidate records per scenario, whatever the number of episodes.
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
    """

    def __init__(self, suite: Suite, *, source_name: str, wanted: Wanted = Wanted(),
                 embed: int = DEFAULT_EMBED) -> None:
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
        self.embedded: tuple[int | None, ...] = ()

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
        for episode in self.selection():
            if len(payloads) >= self.embed:
                break
            frames = episode_frames(episode.scenario, episode.record, episode.metrics, index=episode.index)
            payload = episode_payload(frames, table.slot(episode.scenario))
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
        regenerate = f"emberbench view {self.source_name} --episode {{index}}"
        return viewer_html(page_document(title=title, source=source, scenarios=table, episodes=payloads,
                                         listing=self.columns, start=0, regenerate=regenerate))
