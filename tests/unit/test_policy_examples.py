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
