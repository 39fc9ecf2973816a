"""Memory of the reading commands grows by at most a small budget per episode (issue 13).

``verify``, ``stats`` and ``compare`` run (in process, through the CLI) on
synthetic results of two sizes; tracemalloc's peak may grow by at most
:data:`BUDGET` bytes per additional episode. The results use two fire-free
scenarios, where the seed changes nothing, so one played episode per scenario
gives every record (only its seed differs) and replays can be memoised by
record content: the test measures the reader, not the simulator. Two fixed
buffers are made small so that both sizes exceed them: the bootstrap's
working batch (bounded by its batch size, not by the number of episodes;
tests/unit/statistics covers that bound) and the reader's text block.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.io.atomic import atomic_write_bytes
from emberbench.io.canonical import canonical_bytes, sha256_hex
from emberbench.cli.main import app
from emberbench.records.episode import play_episode
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.policies.spec import resolve_policy
from emberbench.results.artifact import artifact_chunks, episode_chunk
from emberbench.sim.scenario import scenario_from_dict
from emberbench.sim.suite import load_suite

pytestmark = pytest.mark.slow

SIZES = (500, 2500)
WARM = 20
BUDGET = 2048
"""Bytes of peak memory allowed per additional episode (the issue's goal: at most 2 KiB)."""


def _write_suite(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    rooms = (("calm-a", ["####", "#..E", "####"], (1, 1)), ("calm-b", ["#####", "E...#", "#####"], (1, 3)))
    entries = []
    for sid, picture, (row, col) in rooms:
        exit_cell = next((r, c) for r, line in enumerate(picture) for c, ch in enumerate(line) if ch == "E")
        data = {"scenario_format": "1.0", "id": sid, "description": "no fire: the seed changes nothing",
                "map": [line.replace("E", ".") for line in picture],
                "exits": [{"id": "out", "row": exit_cell[0], "col": exit_cell[1]}],
                "people": [{"id": "p", "row": row, "col": col}], "fire": [],
                "spread": {"numerator": 0, "denominator": 1}, "max_steps": 6, "seed": 0, "allow_unreachable": True}
        (folder / "scenarios" / f"{sid}.json").write_bytes(canonical_bytes(data))
        entries.append({"id": sid, "file": f"scenarios/{sid}.json",
                        "scenario_hash": scenario_from_dict(data).content_hash})
    suite = {"suite_format": "1.0", "suite_id": "calm", "suite_version": "1.0.0", "description": "memory test",
             "scenarios": entries, "families": [{"id": "both", "description": "both", "scenarios": ["calm-a", "calm-b"]}]}
    (folder / "suite.json").write_bytes(canonical_bytes(suite))
    return folder


def _artifact(suite, n: int, policy: str, out: Path) -> None:  # noqa: ANN001
    """An artifact of ``n`` episodes: each scenario played once, the record reused with every seed."""
    played = {s.id: play_episode(s, 0, resolve_policy(policy)()) for s in suite.scenarios}
    entries = tuple(ManifestEntry(i, suite.scenarios[i % 2].id, suite.scenarios[i % 2].content_hash, i // 2)
                    for i in range(n))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)

    def chunks():  # noqa: ANN202
        for entry in manifest.episodes:
            record, metrics = played[entry.scenario_id]
            data = dataclasses.replace(record, seed=entry.seed).canonical_bytes()
            yield episode_chunk(entry, data, sha256_hex(data), canonical_bytes(metrics.to_dict()))

    atomic_write_bytes(out, artifact_chunks(manifest, policy, chunks()))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):  # noqa: ANN001, ANN201
    """The suite and, per size, a greedy and a stay artifact."""
    folder = tmp_path_factory.mktemp("memory")
    suite_dir = _write_suite(folder / "suite")
    suite = load_suite(suite_dir)
    for seed in (3, 17):  # the premise: the seed changes nothing in these scenarios
        for s in suite.scenarios:
            a = play_episode(s, seed, resolve_policy("greedy")())
            b = play_episode(s, 0, resolve_policy("greedy")())
            assert dataclasses.replace(a[0], seed=0) == b[0] and a[1] == b[1]
    for n in (WARM, *SIZES):
        for policy in ("greedy", "stay"):
            _artifact(suite, n, policy, folder / f"{policy}-{n}.json")
    return folder, suite_dir


@pytest.fixture
def quick_replay(monkeypatch):  # noqa: ANN001, ANN201
    """Replays memoised by record content (sound here: the seed changes nothing); small bootstrap batches."""
    import importlib

    import emberbench.records.episode as episode
    import emberbench.statistics.bootstrap as bootstrap

    try:  # the whole-file loader, before streaming, had no text blocks
        result_text = importlib.import_module("emberbench.results.text")
    except ImportError:
        result_text = None

    real = episode.replay
    memo: dict = {}

    def replay(scenario, record):  # noqa: ANN001, ANN202
        key = (scenario.content_hash, dataclasses.replace(record, seed=0))
        if key not in memo:
            memo[key] = real(scenario, record)
        reproduced, metrics = memo[key]
        return dataclasses.replace(reproduced, seed=record.seed), metrics

    monkeypatch.setattr(episode, "replay", replay)
    monkeypatch.setattr(bootstrap, "BATCH_INDICES", 1 << 14)
    if result_text is not None:
        monkeypatch.setattr(result_text, "BLOCK_BYTES", 1 << 16)


def _peak(args: list[str]) -> int:
    tracemalloc.start(1)
    try:
        out = CliRunner().invoke(app, args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.exit_code == 0, out.output
    return peak


@pytest.mark.parametrize("command", ["verify", "stats", "compare"])
def test_peak_memory_grows_by_at_most_the_budget_per_episode(inputs, quick_replay, command, tmp_path) -> None:  # noqa: ANN001
    """Issue 13: the peak grows by at most 2 KiB per episode (the loader held about 8 times the file)."""
    folder, suite_dir = inputs

    def args(n: int) -> list[str]:
        a, b = str(folder / f"greedy-{n}.json"), str(folder / f"stay-{n}.json")
        return {
            "verify": ["verify", a],
            "stats": ["stats", a, "--resamples", "100", "--out", str(tmp_path / f"s{n}.json")],
            "compare": ["compare", a, b, "--resamples", "100", "--out", str(tmp_path / f"c{n}.json")],
        }[command] + ["--suite", str(suite_dir)]

    warm = CliRunner().invoke(app, args(WARM))  # imports and caches, outside the measurement
    assert warm.exit_code == 0, warm.output
    peaks = [_peak(args(n)) for n in SIZES]
    grown = (peaks[1] - peaks[0]) / (SIZES[1] - SIZES[0])
    print(f"{command}: {grown:.0f} bytes per episode (peaks {peaks})")
    assert grown <= BUDGET, f"{command}: {grown:.0f} bytes per episode (peaks {peaks})"
