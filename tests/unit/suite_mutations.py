"""A corpus of broken suite manifests (edits of the public suite's ``suite.json``), shared by the tests.

``tests/golden/suite-error-messages.json`` holds the message the suite loader
gave for each case before its checks became collectable (paths replaced by
``<suite>``); the tests hold later versions to exactly those messages.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Edit = Callable[[dict[str, Any]], Any]


def _entry(i: int, **change: Any) -> Edit:
    return lambda d: d["scenarios"][i].update(change)


def _family(i: int, **change: Any) -> Edit:
    return lambda d: d["families"][i].update(change)


REPLACED = {"not an object": [1]}
"""Cases whose whole ``suite.json`` is replaced by a value."""

CASES: dict[str, Edit] = {
    "not an object": lambda d: None,
    "unknown key": lambda d: d.update(extra=1),
    "missing key": lambda d: d.pop("families"),
    "format": lambda d: d.update(suite_format="2.0"),
    "suite id": lambda d: d.update(suite_id="Bad Id"),
    "suite version": lambda d: d.update(suite_version="1.0"),
    "scenarios not a list": lambda d: d.update(scenarios={}),
    "scenarios empty": lambda d: d.update(scenarios=[]),
    "entry shape": _entry(1, extra=1),
    "entry bad id": _entry(1, id="Bad"),
    "entry duplicate id": _entry(1, id="v1-pub-01-single-exit-sparse"),
    "entry hash": _entry(2, scenario_hash="abc"),
    "entry absolute file": _entry(2, file="/etc/passwd"),
    "entry dotdot file": _entry(2, file="../x.json"),
    "entry missing file": _entry(2, file="scenarios/missing.json"),
    "entry id mismatch": _entry(2, id="v1-pub-99-other"),
    "entry hash mismatch": _entry(2, scenario_hash="0" * 64),
    "description": lambda d: d.update(description=3),
    "families not a list": lambda d: d.update(families={}),
    "family shape": _family(0, extra=1),
    "family bad id": _family(0, id="Bad"),
    "family duplicate id": _family(1, id="single-exit"),
    "family description": _family(0, description=None),
    "family members repeated": _family(0, scenarios=["v1-pub-01-single-exit-sparse"] * 2),
    "family members not a list": _family(0, scenarios="v1-pub-01-single-exit-sparse"),
    "family unknown member": _family(0, scenarios=["v1-pub-77"]),
    "family int member": _family(0, scenarios=[7]),
    "two problems": lambda d: (d.update(suite_version="x"), d["families"][0].update(id="Bad")),
}


def broken_suite(source: Path, target: Path, label: str) -> Path:
    """Copy the suite at ``source`` to ``target`` and apply case ``label`` to its ``suite.json``."""
    shutil.copytree(source, target)
    data = json.loads((target / "suite.json").read_text())
    CASES[label](data)
    (target / "suite.json").write_text(json.dumps(REPLACED.get(label, data)))
    return target
