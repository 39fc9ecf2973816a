"""Determinism: identical artifacts in separate processes with different hash seeds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

SCRIPT = """
import hashlib
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx
from emberbench.statistics import aggregate_from_values, paired_from_values
ctx = make_ctx(scenarios=(("s1", 9), ("s2", 7)))
a = all_episodes(ctx, skip=(3,))
b = all_episodes(ctx, shift=5, skip=(10,))
agg = aggregate_from_values(ctx, "m", DIGEST_A, a, resamples=150)
par = paired_from_values(ctx, "m", "n", DIGEST_A, DIGEST_B, a, b, resamples=150)
print(hashlib.sha256(agg.to_json_bytes()).hexdigest(), agg.digest())
print(hashlib.sha256(par.to_json_bytes()).hexdigest(), par.digest())
"""


def _run(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed,
           "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_two_processes_with_different_hash_seeds_agree():
    """Both artifacts are byte-identical under PYTHONHASHSEED=0 and =4242."""
    first, second = _run("0"), _run("4242")
    assert first == second
    assert len(first.split()) == 4
