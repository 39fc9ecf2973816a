"""Presentation: the episode viewer, the terminal view, the report and the plots.

Presentation is a leaf: it reads authenticated data through
:mod:`emberbench.viewer.source` (records and results replayed by the
library) and writes through the output policy. Nothing here is imported by
the core, and nothing here fetches anything from a network.

Public surface:

* :func:`view_page`, :func:`view_frames`, :class:`Wanted`: the ``view`` command;
* :func:`episode_frames`, :class:`EpisodeFrames`: an episode replayed as frames;
* :func:`frame_text`, :func:`play_in_terminal`: the terminal view;
* :func:`build_report`: the ``report`` command;
* :func:`claim_output_file`, :class:`ReportFolder`: the output rules.
"""

from __future__ import annotations

from .frames import EpisodeFrames, episode_frames
from .outputs import ReportFolder, claim_output_file
from .page import DEFAULT_EMBED, MAX_EMBED_BYTES, Wanted
from .terminal import frame_text, play_in_terminal
from .view import default_page_path, view_frames, view_page

__all__ = [
    "DEFAULT_EMBED",
    "MAX_EMBED_BYTES",
    "EpisodeFrames",
    "ReportFolder",
    "Wanted",
    "claim_output_file",
    "default_page_path",
    "episode_frames",
    "frame_text",
    "play_in_terminal",
    "view_frames",
    "view_page",
]
