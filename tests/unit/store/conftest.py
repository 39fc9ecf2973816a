"""Fixtures for the store's unit tests: a fresh store in a temporary folder."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from emberbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty store in its own temporary folder."""
    return Store.open(tmp_path / "store", create=True)


def age(st: Store, key: str, seconds: float) -> None:
    """Make object ``key`` look ``seconds`` old to gc."""
    past = time.time() - seconds
    os.utime(st.layout.object_path(key), (past, past))
