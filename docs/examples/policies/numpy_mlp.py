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
* **One pass for the whole batch.** :func:`features` encodes every person
  of every observation with a fixed number of numpy operations (the maps
  side by side in one buffer, each person's window one ``take``), the
  network runs once on all the rows, and :func:`actions` cuts the answers
  back into one action per observation. Python loops only over the
  observations, never over people, so the cost of a call is a fixed part
  plus a part per person, and batching divides the fixed part among the
  episodes (docs/evaluation.md gives measured figures).
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
import itertools
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

MOVES = ("stay", "N", "E", "S", "W")
RADIUS = 2
SIDE = 2 * RADIUS + 1
CHANNELS = 4  # wall, burning, exit (not burning), floor (not burning)
FEATURES = SIDE * SIDE * CHANNELS + 2  # each window cell's channels, and the direction (signs) to the nearest exit
HIDDEN = 64
SHIFTS = (6, 12)  # each hidden layer's sums are divided by 2**shift and floored
WEIGHTS_ENV = "EMBERBENCH_MLP_WEIGHTS"
LOADS: list[str] = []
"""Every weight load of this process (a test checks there is one per worker, not one per episode)."""

_ONE_HOT = np.zeros((256, CHANNELS), dtype=np.float32)  # a grid character's channel flags
_ONE_HOT[:, 3] = 1.0  # anything else is floor
for _ch, _k in (("#", 0), ("*", 1), ("E", 2)):
    _ONE_HOT[ord(_ch)] = np.eye(CHANNELS, dtype=np.float32)[_k]
_ONE_HOT_ITEMS = _ONE_HOT.view(np.complex128).ravel()  # the four flags as one 16-byte item: one take copies them
_WALL = "#"
_FAR = np.iinfo(np.int32).max  # where a burning exit is put: never the nearest while an open one exists
_MOVE_NAMES = np.array(MOVES, dtype=object)


class People(NamedTuple):
    """The people of a list of observations: every id, observations in order, and how many per observation."""

    ids: list[str]
    counts: list[int]


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


@functools.cache
def _window_offsets(pitch: int) -> np.ndarray:
    """The offsets of a window's cells from its centre in a buffer whose rows are ``pitch`` long (row-major)."""
    span = np.arange(-RADIUS, RADIUS + 1)
    return (span[:, None] * pitch + span).ravel()


def features(observations: Sequence[Any]) -> tuple[np.ndarray, People]:
    """One feature row per person inside, for all observations at once; and who the rows are.

    Row ``i`` belongs to ``People.ids[i]``. Its first ``SIDE**2 * CHANNELS``
    values are, for each cell of the person's window (row-major), its
    channel flags (wall, burning, exit, floor; cells beyond the map are
    walls); the last two are the signs of the row and column steps to the
    nearest exit that is not burning (the first in scenario order on a tie;
    0 and 0 without one).

    Python loops only over the observations (and their few exits);
    everything per person or per cell is a numpy operation over the whole
    batch. The maps are laid out in one buffer with a common row length
    ``pitch`` and walls around each map, so a person's window is the same
    25 offsets from their cell, whatever their map.
    """
    k = len(observations)
    pitch = max((o.width for o in observations), default=0) + 2 * RADIUS
    gap = _WALL * (RADIUS * pitch)  # RADIUS rows of wall between the maps and after the last
    parts, bases, at = [gap + _WALL * RADIUS], [], len(gap) + RADIUS  # and before the first, with its left margin
    for o in observations:  # each map row, then walls up to the pitch (the right margin and the next left one)
        pad = _WALL * (pitch - o.width)
        parts += (pad.join(o.grid), pad, gap)
        bases.append(at)
        at += o.height * pitch + len(gap)
    cells = np.frombuffer("".join(parts).encode("ascii"), dtype=np.uint8)

    crowds = [o.people for o in observations]
    counts = [len(crowd) for crowd in crowds]
    flat = list(itertools.chain.from_iterable(itertools.chain.from_iterable(crowds)))  # id, row, col, id, ...
    ids = flat[0::3]
    n = len(ids)
    r, c = np.array([flat[1::3], flat[2::3]], dtype=np.int64).reshape(2, n)
    owner = np.repeat(np.arange(k), counts)
    x = np.empty((n, FEATURES), dtype=np.float32)

    # The window: one take of the cells' characters, one of their channel flags (16 bytes a cell).
    centre = np.array(bases, dtype=np.int64)[owner] + r * pitch + c
    window = cells.take(centre[:, None] + _window_offsets(pitch))  # (n, SIDE**2) grid characters
    x[:, :-2] = _ONE_HOT_ITEMS.take(window).view(np.float32)

    # The direction to the nearest usable exit: tables of each observation's exits (a few a map, read in
    # Python), burning ones and padding far away; each person compares their own observation's row.
    most = max((len(o.exits) for o in observations), default=0)
    if not (n and most):
        x[:, -2:] = 0.0
        return x, People(ids, counts)
    exit_rows, exit_cols = [], []
    for o in observations:
        for e in o.exits:
            burning = o.grid[e.row][e.col] == "*"
            exit_rows.append(_FAR if burning else e.row)
            exit_cols.append(_FAR if burning else e.col)
        exit_rows += [_FAR] * (most - len(o.exits))
        exit_cols += [_FAR] * (most - len(o.exits))
    rows = np.array(exit_rows, dtype=np.int64).reshape(k, most)[owner]  # (n, most exits)
    dr = rows - r[:, None]
    dc = np.array(exit_cols, dtype=np.int64).reshape(k, most)[owner] - c[:, None]
    nearest = np.arange(n), np.argmin(np.abs(dr) + np.abs(dc), axis=1)  # the first nearest in scenario order
    usable = rows[nearest] != _FAR
    x[:, -2] = np.sign(dr[nearest]) * usable
    x[:, -1] = np.sign(dc[nearest]) * usable
    return x, People(ids, counts)


def _hidden(h: np.ndarray, bias: np.ndarray, shift: int) -> np.ndarray:
    """A hidden layer's activation, in place: add the bias, clip at 0, divide by 2**shift, floor."""
    h += bias
    np.maximum(h, 0.0, out=h)
    h *= np.float32(2.0 ** -shift)  # a power of two: exact, like the division
    return np.floor(h, out=h)


def forward(weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The move index of each row of ``x``; ties go to the first move.

    Every sum stays below 2**24 (at most 102 * 127 before the first shift,
    64 * 203 * 127 before the second, 64 * 403 * 127 at the end), so float32
    holds each value exactly and the order of the additions cannot matter.
    """
    h = _hidden(x @ weights["w1"], weights["b1"], SHIFTS[0])
    h = _hidden(h @ weights["w2"], weights["b2"], SHIFTS[1])
    logits = h @ weights["w3"]
    logits += weights["b3"]
    return np.argmax(logits, axis=1)


def actions(people: People, moves: np.ndarray) -> list[dict[str, str]]:
    """One action per observation from the move index of each row (``features``' rows, in order)."""
    pairs = zip(people.ids, _MOVE_NAMES[moves].tolist())
    return [dict(itertools.islice(pairs, count)) for count in people.counts]


class MLPBatch:
    """The batch form: one forward pass for every person of every observation. Keeps no episode state."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights

    def act_batch(self, observations: Sequence[Any], slots: Sequence[int]) -> list[dict[str, str]]:
        x, people = features(observations)
        return actions(people, forward(self.weights, x))


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
