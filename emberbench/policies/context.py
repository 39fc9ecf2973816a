"""What a run offers the policies it resolves, beyond the spec string.

Most policies need nothing but their spec. A served model (``openai:MODEL``)
also uses the run's store, for its response cache, and reads its server's
address and limits from the environment. :class:`PolicyContext` carries both
to :func:`~emberbench.policies.spec.resolve_policy`, so that the run path
hands them over in one place: where it resolves the spec (the CLI, each Ray
worker, a repair). A policy never sees the context; only its factory does,
and nothing in it describes an episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PolicyContext:
    """The run's resources for policy factories.

    Attributes:
        store: the run's content-addressed store (a :class:`store.Store`), or None
            (a run without a store: no response cache).
        environ: the environment to read settings from (None: the process's ``os.environ``).
    """

    store: Any = None
    environ: Mapping[str, str] | None = None


__all__ = ["PolicyContext"]
