"""EMBERBench: a reference benchmark for evacuation decision-making under fire.

The package's public surface is re-exported lazily so that importing
``emberbench`` stays cheap and pulls in neither numpy, ray nor the store.
"""

from __future__ import annotations

__version__ = "0.2.0"

__all__ = ["__version__"]
