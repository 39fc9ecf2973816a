"""The bootstrap stream: seed, SHAKE-256 blocks and rejection sampling, word for word."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from emberbench.statistics.stream import (
    IndexStream,
    acceptance_bound,
    block_words,
    bootstrap_seed,
    words_to_indices,
)
from stats_reference import ref_indices, ref_seed, ref_words

SEED_ARGS = dict(
    purpose="aggregate_mean",
    evaluation_manifest_hash="e" * 64,
    result_digests=["a" * 64],
    group_kind="scenario",
    group_name="s1",
    metric="casualty_rate",
    resamples=2000,
)


def test_seed_is_sha256_of_the_seven_key_canonical_object():
    """The seed equals the reference's SHA-256 of exactly the seven keys."""
    expected = ref_seed("aggregate_mean", "e" * 64, ["a" * 64], "scenario", "s1", "casualty_rate", 2000)
    assert bootstrap_seed(**SEED_ARGS) == expected
    assert len(expected) == 32


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("purpose", "paired_mean_delta"),
        ("evaluation_manifest_hash", "d" * 64),
        ("result_digests", ["b" * 64]),
        ("result_digests", ["a" * 64, "b" * 64]),
        ("group_kind", "family"),
        ("group_name", "s2"),
        ("metric", "evacuated_rate"),
        ("resamples", 2001),
    ],
)
def test_any_seed_field_change_changes_the_seed(field, value):
    """Changing any one input of the seed object gives a different seed."""
    assert bootstrap_seed(**{**SEED_ARGS, field: value}) != bootstrap_seed(**SEED_ARGS)


def test_unknown_purpose_is_refused():
    """Only the two purposes of the spec are accepted."""
    with pytest.raises(ValueError, match="purpose"):
        bootstrap_seed(**{**SEED_ARGS, "purpose": "mean"})


def test_block_words_are_big_endian_shake_output():
    """Blocks 0..2 equal the reference's word-by-word reading of SHAKE-256."""
    seed = bootstrap_seed(**SEED_ARGS)
    words = block_words(seed, 0, 3).reshape(-1).tolist()
    assert words == list(itertools.islice(ref_words(seed), 3 * 512))
    assert block_words(seed, 2, 1).reshape(-1).tolist() == words[1024:]


@pytest.mark.parametrize("n", [1, 5, 7, 1000, 2**20, 10_007])
def test_index_stream_matches_reference(n):
    """Indices drawn in uneven chunks equal the reference stream for several n."""
    seed = bootstrap_seed(**{**SEED_ARGS, "metric": f"m{n}"})
    stream = IndexStream(seed, n)
    got = np.concatenate([stream.take(size)[0] for size in (3, 700, 1, 512, 2000)]).tolist()
    assert got == list(itertools.islice(ref_indices(seed, n), len(got)))
    assert all(0 <= i < n for i in got)


def test_rejection_sampling_drops_words_at_or_above_the_bound():
    """Words >= 2**64 - (2**64 mod n) are skipped; accepted words map to word mod n."""
    n = 3
    bound = acceptance_bound(n)
    assert bound == 2**64 - 1
    words = np.zeros((2, 512), dtype=np.uint64)
    words[0, :4] = [bound, bound - 1, 7, 2**64 - 1]
    words[1, 0] = 5
    indices, per_block = words_to_indices(words, n)
    assert per_block.tolist() == [510, 512]
    assert indices[:2].tolist() == [(bound - 1) % 3, 7 % 3]
    assert indices[510] == 5 % 3
    assert acceptance_bound(4) == 2**64  # powers of two never reject
    with pytest.raises(ValueError):
        acceptance_bound(0)


def test_marks_allow_redrawing_one_chunk_even_after_rejections(monkeypatch):
    """A marked position, reopened as a new stream, yields the same indices, across rejected words."""
    import emberbench.statistics.stream as stream_mod

    original = stream_mod.block_words

    def with_rejections(seed, first, count):
        words = original(seed, first, count).copy()
        for row, k in enumerate(range(first, first + count)):
            words[row, (k * 37) % 512: (k * 37) % 512 + 40] = np.uint64(2**64 - 1)
        return words

    monkeypatch.setattr(stream_mod, "block_words", with_rejections)
    seed = bootstrap_seed(**SEED_ARGS)
    n, step = 11, 300
    stream = IndexStream(seed, n)
    stream.take(123)
    indices, blocks, offsets = stream.take(10 * step, mark_step=step)
    assert blocks is not None and offsets is not None
    for chunk in (0, 3, 9):
        again = IndexStream(seed, n, block=int(blocks[chunk]), offset=int(offsets[chunk]))
        assert again.take(step)[0].tolist() == indices[chunk * step:(chunk + 1) * step].tolist()
