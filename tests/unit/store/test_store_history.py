"""Write-once history on S3: bucket versioning and Object Lock detected, retention put on write-once entries."""

from __future__ import annotations

import datetime
import os
from itertools import count

import pytest
from emberbench.store import LocatorError, StoreIOError, open_store
from emberbench.store.locator import parse_s3

from tests import s3server
from tests.run_support import invoke

_PREFIXES = count()


def _bucket(endpoint: str, name: str, *, lock: bool = False, versioning: bool = False) -> str:
    """A bucket on the test server (made once per session), with Object Lock and/or versioning."""
    from emberbench.store.s3_client import make_client

    client = make_client(endpoint, "us-east-1")
    try:
        client.create_bucket(Bucket=name, ObjectLockEnabledForBucket=lock)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass
    if versioning:
        client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def _locator(endpoint: str, bucket: str, query: str = "") -> str:
    return f"s3://{bucket}/h{next(_PREFIXES):05d}-{os.getpid()}?endpoint={endpoint}{query}"


def test_locked_bucket_gets_retention_on_write_once_entries_only(s3_endpoint) -> None:  # noqa: ANN001
    """Objects, journal segments and ref log entries carry the store's retention; refs and leases none."""
    bucket = _bucket(s3_endpoint, "emberbench-locked", lock=True)
    st = open_store(_locator(s3_endpoint, bucket, "&retain_days=2&lock_mode=governance"), create=True)
    key = st.put(b"record")
    st.refs.set("results/x", key)
    with st.open_journal("run-j") as journal:
        journal.append({"index": 0}, keys=[key])
    client, prefix = st.backend.client, st.backend.prefix

    def head(rel: str) -> dict:
        return client.head_object(Bucket=bucket, Key=prefix + rel)

    now = datetime.datetime.now(datetime.timezone.utc)
    for rel in (f"objects/{key[:2]}/{key[2:]}", "journals/run-j/0000000001", "reflog/000000000000"):
        reply = head(rel)
        assert reply.get("ObjectLockMode") == "GOVERNANCE", rel
        assert datetime.timedelta(days=1.9) < reply["ObjectLockRetainUntilDate"] - now < datetime.timedelta(days=2.1)
    assert "ObjectLockMode" not in head("refs/results/x")
    # A version under retention cannot be deleted, and an overwrite made around the store keeps the original.
    okey = f"{prefix}objects/{key[:2]}/{key[2:]}"
    version = head(f"objects/{key[:2]}/{key[2:]}")["VersionId"]
    with pytest.raises(client.exceptions.ClientError, match="AccessDenied"):
        client.delete_object(Bucket=bucket, Key=okey, VersionId=version)
    client.put_object(Bucket=bucket, Key=okey, Body=b"forged")
    versions = client.list_object_versions(Bucket=bucket, Prefix=okey)["Versions"]
    assert version in [v["VersionId"] for v in versions] and len(versions) == 2
    original = client.get_object(Bucket=bucket, Key=okey, VersionId=version)["Body"].read()
    assert original.endswith(b"record")
    lines = st.backend.describe_history()
    assert "bucket versioning: Enabled" in lines and "object lock: enabled (no default retention)" in lines
    assert any("governance retention of 2 days" in line for line in lines)
    assert lines[-1].startswith("history: versioned and locked")
    st.close()


def test_store_info_says_what_keeps_history(s3_endpoint, s3_locator, tmp_path) -> None:  # noqa: ANN001
    """`store info` tells access, ref log, index and, on S3, versioning and Object Lock; a plain bucket is not immutable."""
    open_store(s3_locator, create=True).close()
    plain = invoke("store", "info", "--store", s3_locator)
    assert plain.exit_code == 0, plain.output
    assert "access: read-write" in plain.output and "ref log: empty" in plain.output
    assert "bucket versioning: off" in plain.output and "object lock: off" in plain.output
    assert "history: NOT immutable" in plain.output
    versioned = _locator(s3_endpoint, _bucket(s3_endpoint, "emberbench-versioned", versioning=True))
    open_store(versioned, create=True).close()
    text = invoke("store", "info", "--store", versioned).output
    assert "bucket versioning: Enabled" in text and "history: versioned (earlier versions stay retrievable), not locked" in text
    local = invoke("store", "info", "--store", tmp_path / "s")
    assert local.exit_code == 1  # no store there: one error line
    open_store(tmp_path / "s", create=True).close()
    assert "backend: local folder" in invoke("store", "info", "--store", tmp_path / "s").output


def test_a_locked_bucket_without_retention_option_adds_checksums_only(s3_endpoint) -> None:  # noqa: ANN001
    """On a locked bucket a store without retain_days still writes (with checksums) and says the default rule applies."""
    bucket = _bucket(s3_endpoint, "emberbench-locked", lock=True)
    st = open_store(_locator(s3_endpoint, bucket), create=True)
    assert st.backend.history.write_once_args() == {"ChecksumAlgorithm": "SHA256"}
    key = st.put(b"x")
    assert st.get(key) == b"x"
    assert any("the bucket's default rule applies" in line for line in st.backend.describe_history())
    st.close()


def test_retention_on_a_bucket_without_lock_fails_loudly(s3_endpoint, s3_locator) -> None:  # noqa: ANN001
    """Asking for retention where the bucket has no Object Lock: the first write-once put fails in one line."""
    open_store(s3_locator, create=True).close()
    st = open_store(s3_locator + "&retain_days=1")
    with pytest.raises(StoreIOError) as caught:
        st.put(b"y")
    assert "\n" not in str(caught.value)
    st.close()


@pytest.mark.parametrize(("query", "message"), [
    ("&retain_days=0", "retain_days must be"),
    ("&retain_days=x", "retain_days must be"),
    ("&lock_mode=compliance", "lock_mode needs retain_days"),
    ("&retain_days=3&lock_mode=forever", "lock_mode must be one of"),
])
def test_retention_options_are_checked(query, message) -> None:  # noqa: ANN001
    """retain_days is 1-36500 days; lock_mode governance or compliance, and only with retain_days."""
    with pytest.raises(LocatorError, match=message):
        parse_s3(f"s3://{s3server.BUCKET}/p?endpoint=http://127.0.0.1:1{query}")
    loc = parse_s3(f"s3://{s3server.BUCKET}/p?endpoint=http://127.0.0.1:1&retain_days=3")
    assert loc.lock_mode == "governance" and "retain_days=3&lock_mode=governance" in loc.render()
