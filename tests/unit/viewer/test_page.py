"""The viewer page: bounded embedding, the picker listing, safe inline data, no network."""

from __future__ import annotations

import json
import re

import pytest

from emberbench.errors import PresentationError
from emberbench.viewer import Wanted, view_page
from emberbench.viewer.payload import script_json


def _document(html: bytes) -> dict:
    text = html.decode("utf-8")
    data = re.search(r'<script type="application/json" id="emberbench-data">(.*?)</script>', text, re.S).group(1)
    return json.loads(data)


def test_script_json_cannot_close_its_element() -> None:
    """Data text never contains <, > or & (so a model id cannot end the script element)."""
    text = script_json({"model": "</script><script>alert(1)</script>&"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["model"] == "</script><script>alert(1)</script>&"


def test_result_page_lists_all_and_embeds_a_bounded_set(results, suite) -> None:  # noqa: ANN001
    """With --embed 2 the picker lists every episode but only two are embedded, the wanted one first."""
    doc = _document(view_page(results["greedy"], suite, wanted=Wanted(index=3), embed=2))
    assert doc["viewer_data_version"] == "1.0"
    assert doc["list"]["index"] == list(range(6))
    assert len(doc["episodes"]) == 2 and doc["episodes"][0]["index"] == 3
    assert doc["source"]["model_id"] == "greedy" and len(doc["source"]["result_digest"]) == 64


def test_default_embedding_covers_every_scenario(results, suite) -> None:  # noqa: ANN001
    """By default each scenario's episode with the most casualties is embedded."""
    doc = _document(view_page(results["stay"], suite))
    embedded = {doc["scenarios"][e["scenario"]]["id"] for e in doc["episodes"]}
    assert embedded == {s["id"] for s in doc["scenarios"]} and len(embedded) == 3


@pytest.mark.parametrize(("wanted", "message"), [
    (Wanted(index=99), "has no episode index 99"),
    (Wanted(scenario_id="v1-pub-01-single-exit-sparse", seed=7), "seed 7"),
    (Wanted(scenario_id="v1-pub-01-single-exit-sparse"), "go together"),
    (Wanted(index=1, scenario_id="x", seed=1), "not both"),
])
def test_bad_episode_choices_are_refused(results, suite, wanted, message) -> None:  # noqa: ANN001
    """An episode that is not in the result, or a half-given choice, is one clear error."""
    with pytest.raises(PresentationError, match=message):
        view_page(results["greedy"], suite, wanted=wanted)


def test_page_fetches_nothing(results, suite) -> None:  # noqa: ANN001
    """The page has no external reference and forbids every fetch by its content security policy."""
    text = view_page(results["greedy"], suite).decode("utf-8")
    assert "default-src 'none'" in text
    for needle in ("http://", "https://", "fetch(", "XMLHttpRequest", " src=", "@import"):
        assert needle not in text


def test_page_script_reads_exactly_the_written_version() -> None:
    """The page's script refuses any data version but the one Python writes."""
    from emberbench.io.versions import VIEWER_DATA_VERSION
    from emberbench.viewer.page import asset_text

    assert f'DATA.viewer_data_version !== "{VIEWER_DATA_VERSION}"' in asset_text("viewer.js")
