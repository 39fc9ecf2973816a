"""A neural policy in numpy: a small multilayer perceptron that moves every person, in both policy forms.

Run it one episode at a time or batched (``--batch-size``); the records are
the same byte for byte:

    PYTHONPATH=docs/examples/policies emberbench run --manifest dev.json \\
        --policy numpy_mlp:NumpyMLP --model-id mlp --out mlp.json --batch-size 64

What it shows (docs/model-interface.md, docs/cluster.md):

* **Weights load once per process.** :func:`load_weights` is cached, so a
  process (a Ray worker, or the CLI) reads the file once however many
  episodes it plays; the factory only hands out new policy objects that
  refer to the loaded arrays, which are never written to. Set
  ``EMBERBENCH_MLP_WEIGHTS`` to an ``.npz`` file written by
  :func:`save_weights`; without it the weights are drawn from a fixed seed.
* **Both forms, one computation.** The per-episode policy calls the batch
  computation with one observation, so each person's move is computed by
  the same code whether its episode shares the call or not.
* **Exact arithmetic.** A matrix product in floating point may round
  differently depending on how many rows it multiplies at once (the BLAS
  library picks kernels by shape), and an action that flips on the last bit
  would make a batched run differ from a one-at-a-time run. Here weights
  are small integers and activations are scaled down by powers of two and
  floored, so every value is an integer below 2**24 held in float32: every
  product and sum is exact, in any order, on any machine.

The weights are random: this file is about wiring a network in, not about
a good network. The policy reads only the observation.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

MOVES = ("stay", "N", "E", "S", "W")
RADIUS = 2
SIDE = 2 * RADIUS + 1
CHANNELS = 4  # wall, burning, exit (not burning), floor (not burning)
FEATURES = CHANNELS * SIDE * SIDE + 2  # the window, and the direction (sign of rows, cols) to the nearest exit
HIDDEN = 64
SHIFTS = (6, 12)  # each hidden layer's sums are divided by 2**shift and floored
WEIGHTS_ENV = "EMBERBENCH_MLP_WEIGHTS"
LOADS: list[str] = []
"""Every weight load of this process (a test checks there is one per worker, not one per episode)."""

_CHANNEL_OF = np.full(256, 3, dtype=np.int64)
for _ch, _k in (("#", 0), ("*", 1), ("E", 2), (".", 3)):
    _CHANNEL_OF[ord(_ch)] = _k
_DR, _DC = np.divmod(np.arange(SIDE * SIDE), SIDE)
_DR, _DC = _DR - RADIUS, _DC - RADIUS


def random_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Integer weights in [-127, 127] (int8), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    shapes = {"w1": (FEATURES, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, HIDDEN), "b2": (HIDDEN,),
              "w3": (HIDDEN, len(MOVES)), "b3": (len(MOVES),)}
    return {name: rng.integers(-127, 128, size=shape).astype(np.int8) for name, shape in shapes.items()}


def save_weights(path: str | os.PathLike[str], seed: int = 0) -> None:
    """Write :func:`random_weights` to an ``.npz`` file."""
    np.savez(path, **random_weights(seed))


@functools.cache
def load_weights(path: str | None) -> dict[str, np.ndarray]:
    """The weights in ``path`` (or drawn from seed 0 when None) as read-only float32 arrays; once per process."""
    LOADS.append(path or "<seed 0>")
    if path is None:
        raw = random_weights(0)
    else:
        with np.load(path, allow_pickle=False) as data:
            raw = {name: data[name] for name in ("w1", "b1", "w2", "b2", "w3", "b3")}
    out = {}
    for name, value in raw.items():
        if value.dtype != np.int8:
            raise ValueError(f"{path}: weight {name} must be int8, got {value.dtype}")
        array = value.astype(np.float32)
        array.setflags(write=False)  # shared by every policy of the process: nobody writes to it
        out[name] = array
    if out["w1"].shape != (FEATURES, HIDDEN) or out["w3"].shape != (HIDDEN, len(MOVES)):
        raise ValueError(f"{path}: weights of the wrong shape")
    return out


def features(observations: Sequence[Any]) -> tuple[np.ndarray, list[list[str]]]:
    """One feature row per person inside, observations in order; and each observation's person ids."""
    rows, cols, base, pw, ids = [], [], [], [], []
    open_exits: list[list[tuple[int, int]]] = []
    parts, offset = [], 0
    for k, obs in enumerate(observations):
        width = obs.width + 2 * RADIUS
        pad = "#" * width
        text = pad * RADIUS + "".join("##" + row + "##" for row in obs.grid) + pad * RADIUS
        parts.append(text)
        people = obs.people
        ids.append([p.id for p in people])
        rows.extend(p.row for p in people)
        cols.extend(p.col for p in people)
        base.extend([offset] * len(people))
        pw.extend([width] * len(people))
        open_exits.append([(e.row, e.col) for e in obs.exits if obs.grid[e.row][e.col] != "*"])
        offset += len(text)
    cells = np.frombuffer("".join(parts).encode("ascii"), dtype=np.uint8)
    r, c = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    b, w = np.asarray(base, dtype=np.int64), np.asarray(pw, dtype=np.int64)
    at = b[:, None] + (r[:, None] + RADIUS + _DR) * w[:, None] + (c[:, None] + RADIUS + _DC)
    channel = _CHANNEL_OF[cells[at]]  # (people, 25)
    x = np.zeros((r.size, FEATURES), dtype=np.float32)
    x[np.arange(r.size)[:, None], channel * SIDE * SIDE + np.arange(SIDE * SIDE)] = 1.0
    most = max((len(e) for e in open_exits), default=0)
    if most and r.size:
        far = np.iinfo(np.int32).max  # no exit there: never the nearest while an open one exists
        grid_exits = np.full((len(observations), most, 2), far, dtype=np.int64)
        for k, found in enumerate(open_exits):
            if found:
                grid_exits[k, :len(found)] = found
        owner = np.repeat(np.arange(len(observations)), [len(i) for i in ids])
        mine = grid_exits[owner]  # (people, most, 2)
        dist = np.abs(r[:, None] - mine[:, :, 0]) + np.abs(c[:, None] - mine[:, :, 1])
        near = np.argmin(dist, axis=1)  # the first nearest exit in scenario order
        target = mine[np.arange(r.size), near]
        reachable = target[:, 0] != far
        x[:, -2] = np.where(reachable, np.sign(target[:, 0] - r), 0)
        x[:, -1] = np.where(reachable, np.sign(target[:, 1] - c), 0)
    return x, ids


def forward(weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The move index of each row of ``x``; ties go to the first move.

    Every sum stays below 2**24 (at most 102 * 127 before the first shift,
    64 * 203 * 127 before the second, 64 * 403 * 127 at the end), so float32
    holds each value exactly and the order of the additions cannot matter.
    """
    h = np.floor(np.maximum(x @ weights["w1"] + weights["b1"], 0.0) / 2.0 ** SHIFTS[0])
    h = np.floor(np.maximum(h @ weights["w2"] + weights["b2"], 0.0) / 2.0 ** SHIFTS[1])
    return np.argmax(h @ weights["w3"] + weights["b3"], axis=1)


class MLPBatch:
    """The batch form: one forward pass for every person of every observation. Keeps no episode state."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights

    def act_batch(self, observations: Sequence[Any], slots: Sequence[int]) -> list[dict[str, str]]:
        x, ids = features(observations)
        moves = forward(self.weights, x).tolist() if x.shape[0] else []
        out, at = [], 0
        for people in ids:
            out.append({pid: MOVES[m] for pid, m in zip(people, moves[at:at + len(people)])})
            at += len(people)
        return out


class MLPPolicy:
    """The per-episode form: the batch computation on one observation."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self._batch = MLPBatch(weights)

    def __call__(self, observation: Any) -> dict[str, str]:
        return self._batch.act_batch([observation], [0])[0]


class NumpyMLP:
    """A numpy multilayer perceptron (random integer weights, or $EMBERBENCH_MLP_WEIGHTS); both policy forms.

    Calling the class makes a per-episode policy; ``NumpyMLP.batch_factory()``
    a batch policy. Both share the weights loaded once by this process.
    """

    def __new__(cls) -> MLPPolicy:  # type: ignore[misc]
        return MLPPolicy(load_weights(os.environ.get(WEIGHTS_ENV) or None))

    @staticmethod
    def batch_factory() -> MLPBatch:
        """A new batch policy over this process's weights."""
        return MLPBatch(load_weights(os.environ.get(WEIGHTS_ENV) or None))
