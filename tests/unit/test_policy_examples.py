"""The neural policy examples (docs/examples/policies): weights loaded once per process, same records batched."""

from __future__ import annotations

import pytest

from emberbench.evaluation.drive import DriveOptions
from emberbench.evaluation.runner import run_evaluation
from tests import drive_policies as dp
from tests.unit.test_drive import VARIED, manifest_of


def test_numpy_mlp_loads_its_weights_once_per_process(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """Two runs of 8 episodes, one at a time and batched, read the weights file once; the file's weights
    (seed 5) act differently from the default ones (seed 0), so the file was really used."""
    mlp = dp.numpy_mlp
    weights = tmp_path / "w.npz"
    mlp.save_weights(weights, seed=5)
    monkeypatch.setenv(mlp.WEIGHTS_ENV, str(weights))
    mlp.load_weights.cache_clear()
    mlp.LOADS.clear()
    manifest = manifest_of(suite, VARIED)
    try:
        run_evaluation(manifest, suite, mlp.NumpyMLP, "m", tmp_path / "a.json")
        run_evaluation(manifest, suite, mlp.NumpyMLP, "m", tmp_path / "b.json", drive=DriveOptions(batch_size=8))
        assert mlp.LOADS == [str(weights)]
        monkeypatch.delenv(mlp.WEIGHTS_ENV)
        run_evaluation(manifest, suite, mlp.NumpyMLP, "m", tmp_path / "c.json")
    finally:
        mlp.load_weights.cache_clear()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()


def test_torch_mlp_acts_like_the_numpy_network_batched_or_not(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """The PyTorch example (CPU build) loads its weights once and, with numpy_mlp's seed-0 weights, writes the
    numpy network's artifact, one at a time and batched. Skipped without torch (the optional torch extra)."""
    pytest.importorskip("torch")
    torch_mlp = dp.example("torch_mlp")
    weights = tmp_path / "w.pt"
    torch_mlp.save_weights(weights, seed=0)
    monkeypatch.setenv(torch_mlp.WEIGHTS_ENV, str(weights))
    torch_mlp.load_model.cache_clear()
    torch_mlp.LOADS.clear()
    manifest = manifest_of(suite, VARIED)
    outs = []
    try:
        for name, policy, drive in (("numpy", dp.NumpyMLP, DriveOptions()),
                                    ("torch", torch_mlp.TorchMLP, DriveOptions()),
                                    ("torch-batched", torch_mlp.TorchMLP, DriveOptions(batch_size=64))):
            run_evaluation(manifest, suite, policy, "m", tmp_path / f"{name}.json", drive=drive)
            outs.append((tmp_path / f"{name}.json").read_bytes())
        assert torch_mlp.LOADS == [str(weights)]
    finally:
        torch_mlp.load_model.cache_clear()
    assert outs[0] == outs[1] == outs[2]


def _random_observations(rng, count: int) -> list:  # noqa: ANN001
    """Observations of random small maps: people anywhere (edges and corners too), exits open, burning or none."""
    from emberbench.sim.observation import ExitView, Observation, PersonView

    out = []
    for _ in range(count):
        height, width = int(rng.integers(1, 8)), int(rng.integers(1, 10))
        grid = [list(rng.choice(list("#..*"), size=width)) for _ in range(height)]
        exits = []
        for e in range(int(rng.integers(0, 4))):
            row, col = int(rng.integers(0, height)), int(rng.integers(0, width))
            grid[row][col] = "*" if rng.random() < 0.3 else "E"
            exits.append(ExitView(f"x{e}", row, col))
        people = [PersonView(f"p{i}", int(rng.integers(0, height)), int(rng.integers(0, width)))
                  for i in range(int(rng.integers(0, 6)))]
        out.append(Observation(step=0, max_steps=10, height=height, width=width,
                               grid=tuple("".join(row) for row in grid), exits=tuple(exits), people=tuple(people)))
    return out


def _plain_features(obs) -> list[list[float]]:  # noqa: ANN001
    """numpy_mlp.features of one observation, read person by person in plain Python."""
    rows = []
    for p in obs.people:
        row: list[float] = []
        for dr in range(-2, 3):
            for dc in range(-2, 3):
                r, c = p.row + dr, p.col + dc
                ch = obs.grid[r][c] if 0 <= r < obs.height and 0 <= c < obs.width else "#"
                row += [float(ch == "#"), float(ch == "*"), float(ch == "E"), float(ch not in "#*E")]
        usable = [e for e in obs.exits if obs.grid[e.row][e.col] != "*"]
        if usable:
            e = min(usable, key=lambda e: abs(e.row - p.row) + abs(e.col - p.col))  # the first of the nearest
            row += [float((e.row > p.row) - (e.row < p.row)), float((e.col > p.col) - (e.col < p.col))]
        else:
            row += [0.0, 0.0]
        rows.append(row)
    return rows


def test_numpy_mlp_features_of_a_batch_are_those_of_each_observation_read_plainly() -> None:
    """The vectorized encoding of many observations at once gives each person the row a plain per-person reading
    gives (windows crossing map edges, burning and missing exits, observations without people)."""
    import numpy as np

    mlp = dp.numpy_mlp
    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 40):
        batch = _random_observations(rng, size)
        x, people = mlp.features(batch)
        assert people.counts == [len(o.people) for o in batch]
        assert people.ids == [p.id for o in batch for p in o.people]
        assert x.dtype == np.float32 and x.shape == (sum(people.counts), mlp.FEATURES)
        assert x.tolist() == [row for o in batch for row in _plain_features(o)]


def test_numpy_mlp_batch_form_acts_as_the_per_episode_form() -> None:
    """act_batch on many observations answers, for each, what the per-episode policy answers for it alone."""
    import numpy as np

    mlp = dp.numpy_mlp
    rng = np.random.default_rng(11)
    for seed in (0, 1, 2):
        weights = {name: value.astype(np.float32) for name, value in mlp.random_weights(seed).items()}
        batch = _random_observations(rng, 64)
        together = mlp.MLPBatch(weights).act_batch(batch, list(range(len(batch))))
        assert together == [mlp.MLPPolicy(weights)(obs) for obs in batch]
        assert [sorted(action) for action in together] == [sorted(p.id for p in obs.people) for obs in batch]
    assert mlp.MLPBatch(weights).act_batch([], []) == []
