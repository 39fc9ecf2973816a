"""Identifier and version patterns match the whole text: a trailing newline is refused (issue 16).

``re.match`` with a pattern ending in ``$`` accepts ``"name\\n"`` because
``$`` also matches before a final newline. Every pattern below is used with
``fullmatch``; each row feeds one pattern's validator a valid value plus
``"\\n"`` and expects the refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from emberbench.errors import EmberError
from emberbench.generate.build import generate_suite
from emberbench.generate.recipe import load_recipe, recipe_from_dict, recipes_path
from emberbench.results.manifest import build_manifest, manifest_from_dict
from tests.helpers import make_scenario


def _manifest_with(field: str, value: str) -> Callable[[], object]:
    def call() -> object:
        from emberbench.sim.suite import load_suite

        data = build_manifest(load_suite(), [0]).to_dict()
        data[field] = value
        return manifest_from_dict(data)

    return call


def _recipe_named(name: str) -> Callable[[], object]:
    def call() -> object:
        data = json.loads((recipes_path() / "dev.json").read_text())
        data["name"] = name
        return recipe_from_dict(data)

    return call


CASES: list[tuple[str, Callable[[], object]]] = [
    ("ID_RE (scenario id)", lambda: make_scenario(["PE"], sid="tiny\n")),
    ("SUITE_ID_RE (manifest suite_id)", _manifest_with("suite_id", "emberbench-v1-public\n")),
    ("SEMVER_RE (manifest suite_version)", _manifest_with("suite_version", "1.0.0\n")),
    ("manifest version pattern (simulator_version)", _manifest_with("simulator_version", "0.2.0\n")),
    ("SUITE_ID_RE (generated suite id)",
     lambda: generate_suite(load_recipe("dev"), 1, 0, suite_id="generated-dev\n")),
    ("SEMVER_RE (generated suite version)",
     lambda: generate_suite(load_recipe("dev"), 1, 0, suite_version="1.0.0\n")),
    ("recipe NAME_RE", _recipe_named("dev\n")),
]


@pytest.mark.parametrize(("pattern", "call"), CASES, ids=[c[0] for c in CASES])
def test_trailing_newline_is_refused(pattern: str, call: Callable[[], object]) -> None:
    """A valid identifier followed by a newline is not that identifier."""
    with pytest.raises(EmberError):
        call()


def test_the_same_values_without_newline_are_accepted() -> None:
    """The rows above fail only because of the newline: the bare values pass."""
    assert make_scenario(["PE"], sid="tiny").id == "tiny"
    assert _manifest_with("suite_version", "1.0.0")() is not None
    assert _recipe_named("dev")() is not None
