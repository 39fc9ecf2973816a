"""``python -m emberbench``: the same command line as the ``emberbench`` script."""

from __future__ import annotations

from .cli.entry import main

main()
