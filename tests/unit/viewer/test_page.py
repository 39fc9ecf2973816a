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
    assert doc["viewer_data_version"] == "1.1"
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


@pytest.mark.parametrize(("embed", "expected"), [(48, 36), (1000, 36), (20, 20)])
def test_every_episode_up_to_embed_is_embedded(result36, suite, embed, expected) -> None:  # noqa: ANN001
    """Issue 27 (defect 2): a 36-episode result is embedded whole by default and with --embed 1000 (the page
    used to stop at four episodes per scenario, 12 here, whatever --embed said); a smaller --embed is obeyed,
    representatives of each scenario first, then the rest in manifest order."""
    doc = _document(view_page(result36, suite, embed=embed))
    indices = [e["index"] for e in doc["episodes"]]
    assert len(indices) == expected == len(set(indices))
    assert doc["list"]["index"] == list(range(36))
    if expected == 36:
        assert sorted(indices) == list(range(36))
    else:
        assert {doc["scenarios"][e["scenario"]]["id"] for e in doc["episodes"]} == {s["id"] for s in doc["scenarios"]}
    for e in doc["episodes"]:  # every payload names its own scenario (slots are shared by the whole page)
        row = doc["list"]["index"].index(e["index"])
        assert doc["list"]["scenario"][row] == e["scenario"] and doc["list"]["seed"][row] == e["seed"]


def test_embedded_frames_are_the_replayed_ones(result36, suite) -> None:  # noqa: ANN001
    """An episode embedded from the manifest-order pass is byte for byte what a page opened on it embeds."""
    whole = _document(view_page(result36, suite, embed=40))
    alone = _document(view_page(result36, suite, wanted=Wanted(index=29), embed=1))
    assert alone["episodes"][0] == next(e for e in whole["episodes"] if e["index"] == 29)
