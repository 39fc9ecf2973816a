#!/usr/bin/env python3
"""Recompute a task-grouped rates report with the Python standard library only.

Usage, from anywhere:

    python3 scripts/check_grouped_rates.py --input IN [--expect REPORT] [--output OUT]

This file only puts the repository root on ``sys.path`` and runs
:func:`emberbench.grouped_rates.main`; it is not itself part of the bound
reader source (see ``docs/grouped-rates.md``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from emberbench.grouped_rates import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
