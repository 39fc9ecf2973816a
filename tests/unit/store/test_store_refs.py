"""Refs: named pointers to stored objects, updated atomically."""

from __future__ import annotations

import pytest

from emberbench.store import InvalidKeyError, InvalidNameError, ObjectNotFoundError, RefError, Store, key_of


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
    (store.layout.refs / "broken").write_text("not a key\n")
    with pytest.raises(RefError, match="broken") as info:
        store.refs.get("broken")
    assert info.value.name == "broken"
