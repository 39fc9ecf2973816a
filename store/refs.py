"""Named refs: small files under ``refs/`` that each hold one object key.

A ref is how a caller keeps an object alive across gc (gc marks from every
ref) and finds it again by name. Updates are atomic (temp beside the ref,
fsync, rename, fsync the folder): a reader sees the old key or the new one.
Concurrent updates of one ref are last-writer-wins; refs carry no history.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from . import _fs
from .errors import ObjectNotFoundError, RefError, StoreIOError
from .keys import validate_key, validate_ref_name
from .layout import Layout


class Refs:
    """The refs of one store.

    Args:
        layout: the store's paths.
        has: tells whether an object is stored; a ref may only point at an
            object that is already durable in the store.
    """

    def __init__(self, layout: Layout, has: Callable[[str], bool]) -> None:
        self._layout = layout
        self._has = has

    def set(self, name: str, key: str) -> None:
        """Point ``name`` at ``key``, atomically and durably.

        Raises:
            InvalidNameError / InvalidKeyError: before anything is written.
            ObjectNotFoundError: ``key`` is not stored (put it first).
            StoreIOError: the update failed; the ref keeps its old value.
        """
        path = self._layout.ref_path(name)
        validate_key(key)
        if not self._has(key):
            raise ObjectNotFoundError(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreIOError("create folder", str(path.parent), exc) from exc
        _fs.atomic_replace(path, (key + "\n").encode("ascii"))

    def get(self, name: str) -> str:
        """The key ``name`` points at.

        Raises:
            RefError: no such ref, or its file is not one valid key.
        """
        path = self._layout.ref_path(name)
        try:
            text = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise RefError(name, "no such ref") from None
        return _parse(name, text)

    def __contains__(self, name: object) -> bool:
        try:
            return self._layout.ref_path(name).is_file()  # type: ignore[arg-type]
        except ValueError:
            return False

    def delete(self, name: str) -> bool:
        """Remove ``name``; returns whether it existed. The object itself stays until gc."""
        path = self._layout.ref_path(name)
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            raise StoreIOError("unlink", str(path), exc) from exc
        _fs.fsync_dir(path.parent)
        return True

    def names(self) -> list[str]:
        """Every ref name, sorted. Temp files and invalid names are skipped."""
        found: list[str] = []
        root = self._layout.refs
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            rel = Path(folder).relative_to(root)
            for file in files:
                name = "/".join((*rel.parts, file))
                try:
                    validate_ref_name(name)
                except ValueError:
                    continue
                found.append(name)
        return sorted(found)

    def items(self) -> Iterator[tuple[str, str]]:
        """``(name, key)`` for every ref, sorted by name.

        Raises:
            RefError: a ref file is malformed (gc must not guess what it meant).
        """
        for name in self.names():
            try:
                yield name, self.get(name)
            except RefError as exc:
                if exc.reason == "no such ref":
                    continue  # deleted since names() listed it
                raise


def _parse(name: str, text: bytes) -> str:
    try:
        key = text.decode("ascii").rstrip("\n")
        return validate_key(key)
    except (UnicodeDecodeError, ValueError):
        raise RefError(name, "file does not hold one valid key") from None


__all__ = ["Refs"]
