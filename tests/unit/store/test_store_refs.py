"""Refs: named pointers to stored objects, updated atomically."""

from __future__ import annotations

import pytest
from conftest import write_raw

from emberbench.store import (
    InvalidKeyError,
    InvalidNameError,
    ObjectNotFoundError,
    RefConflictError,
    RefError,
    Store,
    key_of,
)


def test_set_get_list_delete(store: Store) -> None:
    """A ref round-trips, is listed sorted, and deleting it leaves the object."""
    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set("results/z", a)
    store.refs.set("results/a", b)
    store.refs.set("main", a)
    assert store.refs.get("results/z") == a
    assert store.refs.names() == ["main", "results/a", "results/z"]
    assert list(store.refs.items()) == [("main", a), ("results/a", b), ("results/z", a)]
    assert "main" in store.refs and "nope" not in store.refs and "../x" not in store.refs
    assert store.refs.delete("main") is True
    assert store.refs.delete("main") is False
    assert store.has(a)


def test_update_overwrites(store: Store) -> None:
    """Setting an existing ref replaces its key."""
    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set("r", a)
    store.refs.set("r", b)
    assert store.refs.get("r") == b


def test_ref_needs_stored_object(store: Store) -> None:
    """A ref may only point at an object already in the store."""
    with pytest.raises(ObjectNotFoundError):
        store.refs.set("r", key_of(b"never put"))
    assert "r" not in store.refs


def test_invalid_inputs(store: Store) -> None:
    """Bad names and keys are refused before any file is touched."""
    key = store.put(b"a")
    with pytest.raises(InvalidNameError):
        store.refs.set("../escape", key)
    with pytest.raises(InvalidKeyError):
        store.refs.set("r", "xyz")
    with pytest.raises(RefError, match="no such ref"):
        store.refs.get("absent")


def test_malformed_ref_file(store: Store) -> None:
    """A ref file that does not hold one key raises RefError naming the ref."""
    write_raw(store, "refs/broken", b"not a key\n")
    with pytest.raises(RefError, match="broken") as info:
        store.refs.get("broken")
    assert info.value.name == "broken"


def test_compare_and_swap(store: Store) -> None:
    """A swap from the key the ref holds succeeds; from any other key it raises and changes nothing."""
    a, b, c = store.put(b"a"), store.put(b"b"), store.put(b"c")
    store.refs.compare_and_swap("r", None, a)
    with pytest.raises(RefConflictError) as info:
        store.refs.compare_and_swap("r", None, b)
    assert info.value.expected is None and info.value.actual == a
    store.refs.compare_and_swap("r", a, b)
    with pytest.raises(RefConflictError) as info:
        store.refs.compare_and_swap("r", a, c)
    assert info.value.expected == a and info.value.actual == b and store.refs.get("r") == b
    store.refs.compare_and_swap("r", b, None)
    assert "r" not in store.refs
    with pytest.raises(RefConflictError):
        store.refs.compare_and_swap("r", b, c)


def test_update_retries_after_a_conflict(store: Store) -> None:
    """update() re-reads and retries when another writer changed the ref in between."""
    a, b, c = store.put(b"a"), store.put(b"b"), store.put(b"c")
    store.refs.set("r", a)
    calls: list[str | None] = []

    def change(old: str | None) -> str:
        calls.append(old)
        if len(calls) == 1:
            store.refs.set("r", b)  # another writer gets in first
        return c

    assert store.refs.update("r", change) == c
    assert calls == [a, b] and store.refs.get("r") == c
