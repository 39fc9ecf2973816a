"""``emberbench view``: watch an authenticated episode in a browser page or in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import suite_for_input, user_errors
from .args import parse_count, parse_embed, parse_frames_per_second, parse_output_file, parse_seed
from .suite_cmd import SuiteOption

ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing output.")]


def register(app: typer.Typer) -> None:
    """Add ``view`` to ``app``."""
    app.command("view")(view)


@user_errors
def view(
    path: Annotated[Path, typer.Argument(help="A run record or a result artifact.")],
    episode: Annotated[Optional[int], typer.Option("--episode", parser=parse_count, metavar="INDEX", help="Manifest index of the episode to open (results).")] = None,
    scenario: Annotated[Optional[str], typer.Option("--scenario", help="Open the episode of this scenario (with --seed).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", parser=parse_seed, metavar="SEED", help="Open the episode with this seed, in [0, 2**64 - 1] (with --scenario).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file, metavar="FILE", help="HTML page to write (default: beside PATH, NAME.view.html, or NAME.episode-N.view.html for --episode N).")] = None,
    force: ForceOption = False,
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in the default browser.")] = False,
    embed: Annotated[int, typer.Option("--embed", parser=parse_embed, metavar="N", help="Most episodes of a result to embed in the page, in [1, 1000].")] = 48,
    terminal: Annotated[bool, typer.Option("--terminal", help="Play the episode as text here instead of writing a page.")] = False,
    fps: Annotated[float, typer.Option("--fps", parser=parse_frames_per_second, metavar="FPS", help="Frames per second of --terminal (at most 1000).")] = 10.0,
    suite: SuiteOption = None,
) -> None:
    """Write a self-contained HTML page that animates an episode (or play it in the terminal)."""
    from ..api.presentation import view as write_view
    from ..viewer import Wanted, play_in_terminal, view_frames
    from ._common import KNOWN_SUITES_FILE

    if terminal:
        wanted = Wanted(index=episode, scenario_id=scenario, seed=seed)
        play_in_terminal(view_frames(path, suite_for_input(suite, path), wanted=wanted), fps=fps)
        return
    target = write_view(path, out, suite=suite, episode=episode, scenario=scenario, seed=seed, embed=embed,
                        force=force, known=KNOWN_SUITES_FILE)
    typer.echo(f"viewer written to {target} ({target.stat().st_size} bytes)")
    if open_page:
        import webbrowser

        webbrowser.open(target.resolve().as_uri())
