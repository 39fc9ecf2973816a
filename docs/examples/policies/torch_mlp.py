"""A PyTorch policy: the network of numpy_mlp.py as a torch module, on a GPU when the worker has one.

    pip install 'emberbench[torch]'
    python -c "import torch_mlp; torch_mlp.save_weights('mlp.pt')"       # in docs/examples/policies
    EMBERBENCH_TORCH_WEIGHTS=$PWD/mlp.pt PYTHONPATH=$PWD emberbench run --manifest dev.json \\
        --policy torch_mlp:TorchMLP --model-id torch-mlp --out torch-mlp.json \\
        --batch-size 64 --gpus-per-worker 0.5 \\
        --runtime-env '{"env_vars": {"EMBERBENCH_TORCH_WEIGHTS": "/shared/mlp.pt"}}'

How it keeps the rules (docs/cluster.md, "GPUs and other resources"):

* **Weights once per worker.** :func:`load_model` is cached per process:
  the first episode a Ray worker plays loads the file onto the worker's
  device (the GPU Ray gave it, through ``CUDA_VISIBLE_DEVICES``, else the
  CPU); every later policy of that worker uses the same module, in
  evaluation mode, without gradients, and never changes it.
* **A fresh policy per episode.** ``TorchMLP()`` returns a new
  :class:`TorchPolicy` for each episode and ``TorchMLP.batch_factory()`` a
  new :class:`TorchBatch` for each batch; neither keeps anything about an
  episode, so nothing seen in one episode reaches another.
* **The same records batched or not, on CPU or GPU.** The features are those
  of numpy_mlp.py and the arithmetic is exact for the same reason (integer
  weights, power-of-two scaling, every sum below 2**24), so the answer of a
  row does not depend on the batch it was computed in, nor on the device.
  With the weights of ``numpy_mlp.random_weights(seed)`` it acts exactly
  like ``numpy_mlp:NumpyMLP``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import numpy_mlp  # the features and the weight layout (same folder)

WEIGHTS_ENV = "EMBERBENCH_TORCH_WEIGHTS"
LOADS: list[str] = []
"""Every model load of this process."""


class Net(torch.nn.Module):
    """Two hidden layers whose sums are divided by a power of two and floored (exact in float32)."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(numpy_mlp.FEATURES, numpy_mlp.HIDDEN)
        self.l2 = torch.nn.Linear(numpy_mlp.HIDDEN, numpy_mlp.HIDDEN)
        self.l3 = torch.nn.Linear(numpy_mlp.HIDDEN, len(numpy_mlp.MOVES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.floor(torch.relu(self.l1(x)) / 2.0 ** numpy_mlp.SHIFTS[0])
        h = torch.floor(torch.relu(self.l2(h)) / 2.0 ** numpy_mlp.SHIFTS[1])
        return self.l3(h)


def save_weights(path: str | os.PathLike[str], seed: int = 0) -> None:
    """Save numpy_mlp's integer weights for ``seed`` as this module's state dict."""
    w = numpy_mlp.random_weights(seed)
    state = {}
    for k in (1, 2, 3):
        state[f"l{k}.weight"] = torch.tensor(w[f"w{k}"].T.astype(np.float32))  # Linear keeps (out, in)
        state[f"l{k}.bias"] = torch.tensor(w[f"b{k}"].astype(np.float32))
    torch.save(state, path)


def device() -> torch.device:
    """The worker's GPU when it has one (Ray sets CUDA_VISIBLE_DEVICES to what it gave), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@functools.cache
def load_model(path: str) -> Net:
    """The network in ``path``, on :func:`device`, for inference only; loaded once per process."""
    LOADS.append(path)
    state = torch.load(path, map_location=device(), weights_only=True)
    for name, value in state.items():
        if not torch.equal(value, value.round()) or value.abs().max() > 127:
            raise ValueError(f"{path}: {name} must hold integers in [-127, 127] (exact arithmetic)")
    net = Net().to(device())
    net.load_state_dict(state)
    net.eval()
    for parameter in net.parameters():
        parameter.requires_grad_(False)
    return net


def _path() -> str:
    path = os.environ.get(WEIGHTS_ENV)
    if not path:
        raise RuntimeError(f"set {WEIGHTS_ENV} to a weights file written by save_weights")
    return path


class TorchBatch:
    """The batch form: one forward pass for every person of every observation."""

    def __init__(self, net: Net) -> None:
        self.net = net

    @torch.inference_mode()
    def act_batch(self, observations: Sequence[Any], slots: Sequence[int]) -> list[dict[str, str]]:
        x, people = numpy_mlp.features(observations)  # every person of every observation, encoded at once
        moves = np.zeros(0, dtype=np.int64)
        if x.shape[0]:
            logits = self.net(torch.from_numpy(x).to(next(self.net.parameters()).device))
            moves = torch.argmax(logits, dim=1).cpu().numpy()  # ties: the first maximum, as numpy
        return numpy_mlp.actions(people, moves)


class TorchPolicy:
    """The per-episode form: the batch computation on one observation."""

    def __init__(self, net: Net) -> None:
        self._batch = TorchBatch(net)

    def __call__(self, observation: Any) -> dict[str, str]:
        return self._batch.act_batch([observation], [0])[0]


class TorchMLP:
    """A PyTorch multilayer perceptron loaded from $EMBERBENCH_TORCH_WEIGHTS; both policy forms."""

    def __new__(cls) -> TorchPolicy:  # type: ignore[misc]
        return TorchPolicy(load_model(_path()))

    @staticmethod
    def batch_factory() -> TorchBatch:
        """A new batch policy over this process's model."""
        return TorchBatch(load_model(_path()))
