"""Fixtures for the store's unit tests: a fresh store on each backend, and raw access helpers.

``store`` is parametrized over the local backend (a temporary folder) and
the S3 backend (a fresh prefix on the session's loopback S3 server, see
tests/s3server.py); ``local_store`` is for tests of local file semantics
only. The helpers reach the stored bytes *around* the store (files, or the S3
API directly), as damage or an attacker would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from emberbench.store import Store, open_store


def is_s3(st: Store) -> bool:
    """Whether ``st`` is on the S3 backend."""
    return st.locator.startswith("s3://")


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store, on each backend in turn."""
    if request.param == "local":
        yield Store.open(tmp_path / "store", create=True)
        return
    st = open_store(request.getfixturevalue("s3_locator"), create=True)
    yield st
    st.close()


@pytest.fixture
def local_store(tmp_path: Path) -> Store:
    """An empty local store (for tests of the local file layout)."""
    return Store.open(tmp_path / "store", create=True)


def _s3_key(st: Store, rel: str) -> str:
    return st.backend.prefix + rel


def raw_object(st: Store, key: str) -> bytes:
    """The stored frame of ``key``, read around the store."""
    if is_s3(st):
        reply = st.backend.client.get_object(Bucket=st.backend.bucket, Key=_s3_key(st, f"objects/{key[:2]}/{key[2:]}"))
        return reply["Body"].read()
    return st.layout.object_path(key).read_bytes()


def write_raw_object(st: Store, key: str, data: bytes) -> None:
    """Overwrite (or create) the stored frame of ``key`` around the store (S3: through the S3 API)."""
    if is_s3(st):
        st.backend.client.put_object(Bucket=st.backend.bucket, Key=_s3_key(st, f"objects/{key[:2]}/{key[2:]}"),
                                     Body=data)
        return
    path = st.layout.object_path(key)
    if path.exists():
        os.chmod(path, 0o644)
    path.write_bytes(data)


def delete_raw_object(st: Store, key: str) -> None:
    """Delete the object of ``key`` around the store."""
    if is_s3(st):
        st.backend.client.delete_object(Bucket=st.backend.bucket, Key=_s3_key(st, f"objects/{key[:2]}/{key[2:]}"))
    else:
        os.unlink(st.layout.object_path(key))


def write_raw(st: Store, rel: str, data: bytes) -> None:
    """Write any store entry by its store-relative name (``format``, ``refs/x``, ``objects/ab/stray``)."""
    if is_s3(st):
        st.backend.client.put_object(Bucket=st.backend.bucket, Key=_s3_key(st, rel), Body=data)
    else:
        path = st.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            os.chmod(path, 0o644)
        path.write_bytes(data)


def raw_journal(st: Store, name: str) -> bytes:
    """A journal's bytes as one file would hold them."""
    return st.backend.read_journal_bytes(name, 1 << 30)


def write_raw_journal(st: Store, name: str, data: bytes) -> None:
    """Replace journal ``name`` with ``data`` (local: the file; S3: one segment)."""
    if is_s3(st):
        base = _s3_key(st, f"journals/{name}/")
        for item in st.backend.list_prefix(base):
            st.backend.client.delete_object(Bucket=st.backend.bucket, Key=item["Key"])
        st.backend.import_journal(name, data)
    else:
        st.layout.journal_path(name).write_bytes(data)


def tmp_leftovers(st: Store) -> list[str]:
    """What a local store's ``tmp/`` holds besides writer lease files (temps left by interrupted writes)."""
    from emberbench.store.local_lease import is_lease_name

    return sorted(name for name in os.listdir(st.layout.tmp) if not is_lease_name(name))


def age(st: Store, key: str, seconds: float) -> None:
    """Make object ``key`` look ``seconds`` old to gc (local only: S3 stamps LastModified itself)."""
    past = time.time() - seconds
    os.utime(st.layout.object_path(key), (past, past))
