"""An unreachable S3 server is named, once and again (issue 25, defect 5).

A store whose server stops answering fails its writes with an error that
names the server (its address only, never a path or a credential), and a
journal that refuses appends after a failed one says why.
"""

from __future__ import annotations

import socket

import pytest

from emberbench.store import JournalError, StoreIOError, open_store


def _dead_endpoint() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"  # closed again: nothing listens there


def _cut_off(st, endpoint: str) -> None:  # noqa: ANN001
    """Point the store's client at ``endpoint`` (one attempt per request, to keep the test short)."""
    import boto3
    from botocore.config import Config

    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                            config=Config(retries={"max_attempts": 1, "mode": "standard"},
                                                          connect_timeout=2, s3={"addressing_style": "path"}))
    st.backend.client = client
    st.backend.leases.client = client


def test_an_unreachable_server_is_named(s3_locator: str) -> None:
    """A put and a journal append against a server that no longer answers name it; the journal's next append
    is refused with the cause, not only 'a previous append failed'."""
    st = open_store(s3_locator, create=True)
    journal = st.open_journal("run")
    journal.append({"index": 0})
    dead = _dead_endpoint()
    _cut_off(st, dead)
    with pytest.raises(StoreIOError, match=f"cannot reach the S3 server at {dead} "):
        st.put(b"record")
    with pytest.raises(StoreIOError) as first:
        journal.append({"index": 1})
    assert f"cannot reach the S3 server at {dead}" in str(first.value)
    assert "/journals/" not in str(first.value).split("cannot reach")[1]
    with pytest.raises(JournalError, match=f"a previous append failed .*cannot reach the S3 server at {dead}.*; "
                                           "reopen the journal"):
        journal.append({"index": 2})
