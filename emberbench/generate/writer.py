"""Writing a generated suite folder: scenario files, ``generation.json``, then ``suite.json``.

Every file goes through the output policy (:func:`emberbench.io.atomic.atomic_write_bytes`).
``suite.json`` is written last, so an interrupted write never leaves a suite
manifest that names a missing file. The folder must be new or empty; with
``force`` an existing suite is replaced: its ``suite.json``,
``generation.json`` and ``scenarios/*.json`` files (stale scenario files are
removed), and nothing else in the folder is touched.

Files are indented JSON with sorted keys, one map row, exit or person per
line, so they read well and diff well; a scenario's hash is taken over its
canonical JSON, so the layout of the file does not change it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_bytes
from ..io.canonical import canonical_bytes
from ..errors import OutputPathError
from ..sim.scenario import Scenario
from .build import GeneratedSuite

_ONE_PER_LINE = ("map", "exits", "people")


def _item(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(", ", ": "))


def scenario_file_bytes(scenario: Scenario) -> bytes:
    """A scenario file for people to read; it parses back to the scenario's canonical JSON."""
    obj = scenario.to_dict()
    lines = []
    for key in sorted(obj):
        value = obj[key]
        if key in _ONE_PER_LINE and value:
            inner = ",\n".join(f"  {_item(v)}" for v in value)
            lines.append(f" {_item(key)}: [\n{inner}\n ]")
        else:
            lines.append(f" {_item(key)}: {_item(value)}")
    text = "{\n" + ",\n".join(lines) + "\n}\n"
    if canonical_bytes(json.loads(text)) != canonical_bytes(obj):
        raise AssertionError(f"scenario {scenario.id}: the readable form does not parse back to the same JSON")
    return text.encode("ascii")


def json_file_bytes(obj: Any) -> bytes:
    """Indented JSON with sorted keys (``suite.json``, ``generation.json``), as the public suite is written."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=True).encode("ascii") + b"\n"


def check_suite_output(out: str | os.PathLike[str], force: bool) -> None:
    """Refuse an output folder before any work: it must be absent, an empty folder, or (with ``force``) a folder.

    Raises:
        OutputPathError: anything else.
    """
    path = Path(out)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        from ..io.input_policy import describe_path

        raise OutputPathError(f"{path} is {describe_path(path)}; a suite is written into a folder")
    if not force and any(path.iterdir()):
        raise OutputPathError(f"{path} is not empty; use --force to replace the suite in it")


def write_suite(suite: GeneratedSuite, out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write ``suite`` into the folder ``out``; return the path of its ``suite.json``.

    Raises:
        OutputPathError: ``out`` is not a folder, or is a non-empty folder
            and ``force`` is false, or a file to write is not a regular file.
    """
    folder = Path(out)
    check_suite_output(folder, force)
    folder.mkdir(parents=True, exist_ok=True)
    scenarios = folder / "scenarios"
    if not scenarios.exists():
        scenarios.mkdir()
    elif scenarios.is_symlink() or not scenarios.is_dir():
        raise OutputPathError(f"{scenarios} is not a folder; a suite keeps its scenario files there")
    names = set()
    for scenario in suite.scenarios:
        names.add(f"{scenario.id}.json")
        atomic_write_bytes(scenarios / f"{scenario.id}.json", scenario_file_bytes(scenario))
    for stale in sorted(scenarios.glob("*.json")):
        if stale.name not in names and stale.is_file() and not stale.is_symlink():
            stale.unlink()
    atomic_write_bytes(folder / "generation.json", json_file_bytes(suite.generation))
    atomic_write_bytes(folder / "suite.json", json_file_bytes(suite.manifest))
    return folder / "suite.json"
