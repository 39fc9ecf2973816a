"""S3 journal segments that are empty, swapped, or copied over another are damage (issue 25, defects 3 and 4).

Every segment and base is written with the journal's name and its number as
metadata; a reader whose first piece carries them requires them of every
piece. An append always writes at least one entry, so an empty segment is
damage too.
"""

from __future__ import annotations

import pytest

from emberbench.store import JournalCorruptError, Store, open_store
from emberbench.store.s3_journal import list_segments, piece_metadata, segment_key


def _journal(s3_locator: str) -> Store:
    st = open_store(s3_locator, create=True)
    with st.open_journal("run") as journal:
        for i in range(4):
            journal.append({"index": i})
        journal.finish({"done": True})
    return st


def _raw(st: Store, seq: int) -> bytes:
    return st.backend.client.get_object(Bucket=st.backend.bucket, Key=segment_key(st.backend, "run", seq))["Body"].read()


def _put(st: Store, seq: int, data: bytes, **extra: object) -> None:
    st.backend.client.put_object(Bucket=st.backend.bucket, Key=segment_key(st.backend, "run", seq), Body=data, **extra)


def test_an_empty_segment_is_damage(s3_locator: str) -> None:
    """Emptying segment 1 (a run's header, say) no longer yields a shorter, valid-looking journal."""
    st = _journal(s3_locator)
    _put(st, 1, b"", Metadata=piece_metadata("run", 1))
    with pytest.raises(JournalCorruptError, match="segment 1 is empty"):
        st.read_journal("run")


def test_swapped_segments_are_damage(s3_locator: str) -> None:
    """Two segments swapped by copying (their metadata travels with them) or by plain uploads are caught."""
    st = _journal(s3_locator)
    two, three = _raw(st, 2), _raw(st, 3)
    client, bucket = st.backend.client, st.backend.bucket
    client.copy_object(Bucket=bucket, Key=segment_key(st.backend, "run", 9), CopySource={
        "Bucket": bucket, "Key": segment_key(st.backend, "run", 2)})
    client.copy_object(Bucket=bucket, Key=segment_key(st.backend, "run", 2), CopySource={
        "Bucket": bucket, "Key": segment_key(st.backend, "run", 3)})
    client.copy_object(Bucket=bucket, Key=segment_key(st.backend, "run", 3), CopySource={
        "Bucket": bucket, "Key": segment_key(st.backend, "run", 9)})
    client.delete_object(Bucket=bucket, Key=segment_key(st.backend, "run", 9))
    with pytest.raises(JournalCorruptError, match="segment 2 holds what was written as journal run, segment 3"):
        st.read_journal("run")
    _put(st, 2, three)
    _put(st, 3, two)
    with pytest.raises(JournalCorruptError, match="segment 2 lacks the journal and number"):
        st.read_journal("run")


def test_a_segment_overwritten_by_another_is_damage(s3_locator: str) -> None:
    """Segment 2 overwritten with segment 1's bytes (a PUT) is damage, not a journal that says one thing twice."""
    st = _journal(s3_locator)
    _put(st, 2, _raw(st, 1))
    with pytest.raises(JournalCorruptError, match="segment 2"):
        st.read_journal("run")


def test_a_segment_moved_from_another_journal_is_damage(s3_locator: str) -> None:
    """A segment copied in from another journal says so."""
    st = _journal(s3_locator)
    with st.open_journal("other") as journal:
        journal.append({"index": 7})
    client, bucket = st.backend.client, st.backend.bucket
    client.copy_object(Bucket=bucket, Key=segment_key(st.backend, "run", 2), CopySource={
        "Bucket": bucket, "Key": segment_key(st.backend, "other", 1)})
    with pytest.raises(JournalCorruptError, match="journal other, segment 1"):
        st.read_journal("run")


def test_a_journal_written_before_segments_carried_metadata_is_read_as_before(s3_locator: str) -> None:
    """Segments without metadata (an older writer) are read unchecked, as they always were."""
    st = _journal(s3_locator)
    segments, _ = list_segments(st.backend, "run")
    for seq, _, _ in segments:
        _put(st, seq, _raw(st, seq))  # plain uploads: no metadata on any piece
    assert [e.data["index"] for e in st.read_journal("run").entries] == [0, 1, 2, 3]
