"""``emberbench view``: the page (or the frames) of a record or of a result's episodes."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import PresentationError
from ..sim.suite import Suite
from .frames import EpisodeFrames, episode_frames
from .page import DEFAULT_EMBED, ResultPageBuilder, Wanted, episode_page_name, record_page
from .source import AuthenticatedEpisode, find_episode, read_record, sniff_kind, stream_result


def _record_episode(path: Path, suite: Suite, wanted: Wanted) -> AuthenticatedEpisode:
    if wanted.index is not None:
        raise PresentationError(f"{path} is a run record: --episode chooses an episode of a result artifact")
    episode = read_record(path, suite)
    if wanted.scenario_id is not None and (episode.record.scenario_id, episode.record.seed) != (
            wanted.scenario_id, wanted.seed):
        raise PresentationError(f"{path} is the record of {episode.record.scenario_id!r} seed {episode.record.seed}, "
                                f"not of {wanted.scenario_id!r} seed {wanted.seed}")
    return episode


def check_wanted(wanted: Wanted) -> None:
    """Refuse a half-given or doubly-given episode choice.

    Raises:
        PresentationError: ``--scenario`` without ``--seed`` (or the reverse),
            or ``--episode`` together with them.
    """
    if (wanted.scenario_id is None) != (wanted.seed is None):
        raise PresentationError("--scenario and --seed go together")
    if wanted.index is not None and wanted.scenario_id is not None:
        raise PresentationError("choose an episode by --episode or by --scenario and --seed, not both")


def view_page(path: str | Path, suite: Suite, *, wanted: Wanted = Wanted(), embed: int = DEFAULT_EMBED,
              page_path: str | Path | None = None) -> bytes:
    """The self-contained viewer page of a run record or of a result artifact.

    ``page_path`` (where the page will be written) lets a result's page link
    to the pages its regenerate command writes for episodes it does not
    embed (see :func:`default_page_path`).

    Raises:
        PresentationError: a bad episode choice, or no such episode.
        RecordAuthenticationError, ResultError, InputFileError: the input is refused.
    """
    check_wanted(wanted)
    p = Path(path)
    if sniff_kind(p) == "record":
        return record_page(_record_episode(p, suite, wanted), source_name=p.name)
    stream = stream_result(p, suite)
    builder = ResultPageBuilder(suite, source_name=p.name, wanted=wanted, embed=embed,
                                episode_pages=None if page_path is None else episode_pages_link(p, page_path))
    for episode in stream:
        builder.add(episode)
    return builder.build(model_id=stream.model_id, manifest_hash=stream.manifest.hash, result_digest=stream.digest)


def view_frames(path: str | Path, suite: Suite, *, wanted: Wanted = Wanted()) -> EpisodeFrames:
    """The frames of one authenticated episode: the record, or the chosen (default: first) episode of a result."""
    check_wanted(wanted)
    p = Path(path)
    if sniff_kind(p) == "record":
        episode = _record_episode(p, suite, wanted)
    else:
        stream = stream_result(p, suite)
        if wanted.given:
            episode = find_episode(stream, index=wanted.index, scenario_id=wanted.scenario_id, seed=wanted.seed)
        else:
            episode = stream.first()  # type: ignore[assignment]
            if episode is None:
                raise PresentationError(f"{p}: the result has no episodes to show")
    return episode_frames(episode.scenario, episode.record, episode.metrics, index=episode.index)


def default_page_path(path: str | Path, wanted: Wanted = Wanted()) -> Path:
    """Where ``view`` writes by default: beside the input, ``NAME.view.html``.

    For a chosen episode of a result the name says which
    (``NAME.episode-29.view.html``, :func:`~.page.episode_page_name`), so
    the command a page shows for an episode it does not embed never meets an
    existing page.
    """
    p = Path(path)
    return p.with_name(episode_page_name(p.name, wanted))


def episode_pages_link(result: Path, page: str | Path) -> str:
    """The URL, relative to ``page``, of the page ``view RESULT --episode {index}`` writes by default."""
    from urllib.parse import quote

    name = episode_page_name(result.name, Wanted(index=0)).replace(".episode-0.", ".episode-@@INDEX@@.")
    target = result.absolute().parent / name
    rel = Path(os.path.relpath(target, Path(page).absolute().parent)).as_posix()
    return quote(rel, safe="/@").replace("@@INDEX@@", "{index}")
