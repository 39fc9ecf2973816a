"""The local backend: a store in one folder (on a local disk or a shared POSIX mount).

The on-disk layout is :mod:`store.layout`'s. Every path is reached without
following links (:mod:`store._nofollow`). Objects are written to a temp file
in ``tmp/``, fsynced, and hard-linked into place (the first writer wins; an
existing name is never replaced except by :meth:`replace_object`); the folder
is fsynced before the call returns. The gc lock (``gc.lock``) is held shared
by writers and exclusively by gc; ref compare-and-swap holds ``refs.lock``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from . import _fs, _nofollow, lock
from .backend import ANY, Backend, ObjectInfo, WriterLease
from .errors import ObjectNotFoundError, RefConflictError, StoreIOError, StoreLayoutError
from .journal import MAX_JOURNAL_BYTES, JournalWriter
from .keys import validate_journal_name, validate_key, validate_ref_name
from .layout import JOURNAL_SUFFIX, REFLOG_FOLDER, Layout, open_layout
from .reflog import parse_seq_name, seq_name
from .local_journal import FileJournalWriter, delete_journal_file, read_journal_file, special_journal_file
from .local_lease import LocalLease, is_lease_name, live_leases, release_dead

REF_CAP = 1024
# Filesystems without hard links report one of these from link(2); rename is
# the fallback there (it overwrites, which is harmless for identical content).
_NO_LINK = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}


class LocalBackend(Backend):
    """A store folder. See the module docstring; ``root`` must already be a store."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.root = layout.root
        self._root = str(layout.root)
        self.locator = str(layout.root.resolve())
        self._lease = LocalLease(self._root)

    @classmethod
    def open(cls, root: str | os.PathLike[str], *, create: bool = False) -> LocalBackend:
        layout, created = open_layout(root, create=create)
        backend = cls(layout)
        backend.created = created
        return backend

    def close(self) -> None:
        self._lease.release()

    # -- objects -----------------------------------------------------------------

    def _fanout(self, key: str, *, create: bool = False) -> contextlib.AbstractContextManager[int]:
        validate_key(key)
        return _nofollow.in_dir(self._root, ("objects", key[:2]), create=create)

    def open_object(self, key: str) -> tuple[BinaryIO, int]:
        where = str(self.layout.object_path(key))
        try:
            with self._fanout(key) as dfd:
                fd = _nofollow.open_file(dfd, key[2:], os.O_RDONLY, where)
        except (FileNotFoundError, NotADirectoryError):
            raise ObjectNotFoundError(key) from None
        size = os.fstat(fd).st_size
        return io.FileIO(fd, "rb", closefd=True), size

    def object_info(self, key: str) -> ObjectInfo | None:
        try:
            with self._fanout(key) as dfd:
                info = _nofollow.lstat(dfd, key[2:])
        except FileNotFoundError:
            return None
        if info is None or not stat.S_ISREG(info.st_mode):
            return None
        return ObjectInfo(key, info.st_size, info.st_mtime)

    def write_temp(self, data: bytes, key: str) -> str:
        """A fsynced temp file in ``tmp/`` holding ``data``; returns its name."""
        with _nofollow.in_dir(self._root, ("tmp",)) as tfd:
            return _write_temp_at(tfd, str(self.layout.tmp), key, data, key)

    def new_spool(self, key_hint: str) -> tuple[int, str]:
        """An empty temp file in ``tmp/`` for a streaming put: ``(fd, name)``."""
        name = _fs.temp_name(key_hint)
        with _nofollow.in_dir(self._root, ("tmp",)) as tfd:
            fd = _nofollow.open_file(tfd, name, os.O_RDWR | os.O_CREAT | os.O_EXCL, str(self.layout.tmp / name),
                                     mode=0o444)
        return fd, name

    def drop_temp(self, name: str) -> None:
        """Remove a temp of ``tmp/`` quietly (a failure leaves a leftover fsck reports)."""
        try:
            with _nofollow.in_dir(self._root, ("tmp",)) as tfd:
                os.unlink(name, dir_fd=tfd)
        except OSError:
            pass

    def create_object(self, key: str, frame: bytes | str) -> bool:
        name = frame if isinstance(frame, str) else self.write_temp(frame, key)
        final = str(self.layout.object_path(key))
        try:
            with _nofollow.in_dir(self._root, ("tmp",)) as tfd, self._fanout(key) as dfd:
                try:
                    os.link(name, key[2:], src_dir_fd=tfd, dst_dir_fd=dfd, follow_symlinks=False)
                except FileExistsError:
                    return False
                except OSError as exc:
                    if exc.errno not in _NO_LINK:
                        raise StoreIOError("link", final, exc, key=key) from exc
                    if _nofollow.lstat(dfd, key[2:]) is not None:
                        return False
                    _rename(name, key[2:], tfd, dfd, final, key)
                _fs.fsync_fd(dfd, final, key)
                return True
        finally:
            if not isinstance(frame, str):  # a spool belongs to the caller
                self.drop_temp(name)

    def replace_object(self, key: str, frame: bytes | str) -> None:
        name = frame if isinstance(frame, str) else self.write_temp(frame, key)
        final = str(self.layout.object_path(key))
        try:
            with _nofollow.in_dir(self._root, ("tmp",)) as tfd, self._fanout(key) as dfd:
                # A hard link keeps the damaged bytes as evidence while the good
                # object replaces the name atomically: readers never see it missing.
                with contextlib.suppress(OSError), _nofollow.in_dir(self._root, ("quarantine",)) as qfd:
                    os.link(key[2:], f"{key}.{time.time_ns()}", src_dir_fd=dfd, dst_dir_fd=qfd,
                            follow_symlinks=False)
                if isinstance(frame, str):
                    # Keep the caller's spool: link a second name and rename that.
                    spare = _fs.temp_name(key)
                    os.link(name, spare, src_dir_fd=tfd, dst_dir_fd=tfd, follow_symlinks=False)
                    name = spare
                _rename(name, key[2:], tfd, dfd, final, key)
                _fs.fsync_fd(dfd, final, key)
        finally:
            if not isinstance(frame, str) or name != frame:
                self.drop_temp(name)

    def touch_object(self, key: str) -> None:
        # The new mtime tells gc the object is young again (grace period), and
        # the folder fsync makes a link left by a crashed writer durable.
        final = str(self.layout.object_path(key))
        with self._fanout(key) as dfd:
            try:
                os.utime(key[2:], dir_fd=dfd, follow_symlinks=False)
            except OSError as exc:
                raise StoreIOError("utime", final, exc, key=key) from exc
            _fs.fsync_fd(dfd, final, key)

    def _scan(self) -> Iterator[tuple[str, str, os.stat_result | None]]:
        """``(fanout, name, lstat)`` of every entry under ``objects/``, sorted; a fan-out entry itself has name ""."""
        with _nofollow.in_dir(self._root, ("objects",)) as ofd:
            for fanout in sorted(os.listdir(ofd)):
                info = _nofollow.lstat(ofd, fanout)
                yield fanout, "", info
                if info is None or not stat.S_ISDIR(info.st_mode):
                    continue
                with _nofollow.child_dir(ofd, fanout, f"{self._root}/objects/{fanout}") as dfd:
                    found = [(n, _nofollow.lstat(dfd, n)) for n in sorted(os.listdir(dfd))]
                for rest, entry in found:
                    yield fanout, rest, entry

    def list_objects(self) -> Iterator[ObjectInfo]:
        for fanout, rest, info in self._scan():
            if not rest or info is None or not stat.S_ISREG(info.st_mode):
                continue
            with contextlib.suppress(ValueError):
                yield ObjectInfo(validate_key(fanout + rest), info.st_size, info.st_mtime)

    def stray_entries(self) -> list[str]:
        strays: list[str] = []
        for fanout, rest, info in self._scan():
            if not rest:
                if len(fanout) != 2 or fanout.strip("0123456789abcdef") or info is None \
                        or not stat.S_ISDIR(info.st_mode):
                    strays.append(f"objects/{fanout}")
                continue
            try:
                validate_key(fanout + rest)
            except ValueError:
                strays.append(f"objects/{fanout}/{rest}")
                continue
            if info is not None and not stat.S_ISREG(info.st_mode):
                strays.append(f"objects/{fanout}/{rest}")
        return strays

    def delete_object(self, key: str) -> bool:
        with self._fanout(key) as dfd:
            try:
                os.unlink(key[2:], dir_fd=dfd)
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise StoreIOError("unlink", str(self.layout.object_path(key)), exc, key=key) from exc
            _fs.fsync_fd(dfd, str(self.layout.fanout(key)), key)
        return True

    def quarantine_object(self, key: str) -> str | None:
        target = f"{key}.{time.time_ns()}"
        source = str(self.layout.object_path(key))
        with self._fanout(key) as dfd, _nofollow.in_dir(self._root, ("quarantine",)) as qfd:
            try:
                os.rename(key[2:], target, src_dir_fd=dfd, dst_dir_fd=qfd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise StoreIOError("quarantine", source, exc, key=key) from exc
            _fs.fsync_fd(qfd, str(self.layout.quarantine), key)
            _fs.fsync_fd(dfd, source, key)
        return f"quarantine/{target}"

    def quarantine_count(self) -> int:
        with _nofollow.in_dir(self._root, ("quarantine",)) as qfd:
            return len(os.listdir(qfd))

    def temp_entries(self) -> list[tuple[str, float]]:
        found: list[tuple[str, float]] = []

        def scan(parts: tuple[str, ...], everything: bool) -> None:
            with _nofollow.in_dir(self._root, parts) as dfd:
                for name in sorted(os.listdir(dfd)):
                    info = _nofollow.lstat(dfd, name)
                    if info is None:
                        continue
                    if stat.S_ISDIR(info.st_mode) and parts[:1] == ("refs",):
                        scan((*parts, name), everything)
                    elif parts == ("tmp",) and is_lease_name(name):
                        continue  # a writer lease, not a temp (see store.local_lease)
                    elif everything or (name.startswith(".") and name.endswith(_fs.TEMP_SUFFIX)):
                        found.append(("/".join((*parts, name)), info.st_mtime))

        scan(("tmp",), True)
        scan((), False)
        scan(("journals",), False)
        scan(("refs",), False)
        return found

    def delete_temp(self, path: str) -> None:
        *parts, name = path.split("/")
        with contextlib.suppress(OSError), _nofollow.in_dir(self._root, tuple(parts)) as dfd:
            os.unlink(name, dir_fd=dfd)

    def now(self) -> float:
        return time.time()

    # -- guards ------------------------------------------------------------------------

    @contextlib.contextmanager
    def writer_guard(self) -> Iterator[None]:
        self._lease.ensure()  # first write: this process's lease, so gc keeps what it puts
        with lock.locked(self.layout.gc_lock, shared=True):
            yield

    @contextlib.contextmanager
    def exclusive_guard(self, timeout: float, *, beside_writers: bool = False) -> Iterator[Callable[[], None]]:
        # gc.lock excludes every put and reference in progress (and other gcs);
        # it is never held between a run's operations, so gc always runs beside writers.
        with lock.locked(self.layout.gc_lock, shared=False, timeout=timeout):
            yield lambda: None  # flock is never lost while held

    def writer_leases(self) -> list[WriterLease]:
        return live_leases(self._root, self._lease.name)

    def release_dead_leases(self) -> list[str]:
        return release_dead(self._root, self._lease.name)

    # -- refs --------------------------------------------------------------------------

    def read_ref(self, name: str) -> bytes | None:
        *folders, file = validate_ref_name(name).split("/")
        where = str(self.layout.ref_path(name))
        try:
            with _nofollow.in_dir(self._root, ("refs", *folders)) as dfd:
                fd = _nofollow.open_file(dfd, file, os.O_RDONLY, where)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return _nofollow.read_capped(fd, REF_CAP, where)
        finally:
            os.close(fd)

    def swap_ref(self, name: str, expected: Any, new: bytes | None) -> bytes | None:
        *folders, file = validate_ref_name(name).split("/")
        where = str(self.layout.ref_path(name))
        with lock.locked(self.layout.refs_lock, shared=False):
            try:
                current = self.read_ref(name)
            except StoreLayoutError:
                if expected is not ANY or new is not None:
                    raise
                current = b""  # a ref over the cap, a link or a special file: removed as it is, never followed
            if expected is not ANY and current != expected:
                raise RefConflictError(name, _key_or_none(expected), _key_or_none(current))
            with _nofollow.in_dir(self._root, ("refs", *folders), create=new is not None) as dfd:
                if new is None:
                    try:
                        os.unlink(file, dir_fd=dfd)
                    except FileNotFoundError:
                        return None
                    except OSError as exc:
                        raise StoreIOError("unlink", where, exc) from exc
                else:
                    tmp = _write_temp_at(dfd, where, file, new, None)
                    try:
                        os.replace(tmp, file, src_dir_fd=dfd, dst_dir_fd=dfd)
                    except OSError as exc:
                        with contextlib.suppress(OSError):
                            os.unlink(tmp, dir_fd=dfd)
                        raise StoreIOError("rename", where, exc) from exc
                _fs.fsync_fd(dfd, where)
        return current

    def ref_names(self) -> list[str]:
        found: list[str] = []

        def walk(parts: tuple[str, ...]) -> None:
            with _nofollow.in_dir(self._root, parts) as dfd:
                entries = [(n, _nofollow.lstat(dfd, n)) for n in sorted(os.listdir(dfd))]
            for entry, info in entries:
                if info is None:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    walk((*parts, entry))
                    continue
                # Links and special files are listed too: reading them fails
                # loudly, so they are reported rather than silently skipped.
                name = "/".join((*parts[1:], entry))
                with contextlib.suppress(ValueError):
                    found.append(validate_ref_name(name))

        walk(("refs",))
        return sorted(found)

    # -- journals ----------------------------------------------------------------------

    def journal_writer(self, name: str, has: Callable[[str], bool], *, create: bool, timeout: float) -> JournalWriter:
        return FileJournalWriter(self.layout, name, has, create=create, timeout=timeout)

    def read_journal_bytes(self, name: str, cap: int = MAX_JOURNAL_BYTES) -> bytes:
        return read_journal_file(self.layout, name, cap)

    def journal_names(self) -> list[str]:
        names = []
        with _nofollow.in_dir(self._root, ("journals",)) as jfd:
            files = os.listdir(jfd)
        for file in files:
            if file.endswith(JOURNAL_SUFFIX):
                with contextlib.suppress(ValueError):
                    names.append(validate_journal_name(file[: -len(JOURNAL_SUFFIX)]))
        return sorted(names)

    def delete_journal(self, name: str, timeout: float) -> bool:
        return delete_journal_file(self.layout, name, timeout)

    def special_journal(self, name: str) -> str | None:
        return special_journal_file(self.layout, validate_journal_name(name))

    def import_journal(self, name: str, data: bytes) -> None:
        file = validate_journal_name(name) + JOURNAL_SUFFIX
        where = str(self.layout.journal_path(name))
        with _nofollow.in_dir(self._root, ("journals",)) as jfd:
            tmp = _write_temp_at(jfd, where, file, data, None, mode=0o644)  # a journal is opened to append
            try:
                os.link(tmp, file, src_dir_fd=jfd, dst_dir_fd=jfd, follow_symlinks=False)
            except OSError as exc:
                raise StoreIOError("link", where, exc) from exc
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=jfd)
            _fs.fsync_fd(jfd, where)


    # -- the ref log --------------------------------------------------------------------

    def create_log_entry(self, seq: int, data: bytes) -> bool:
        name = seq_name(seq)
        where = f"{self._root}/{REFLOG_FOLDER}/{name}"
        with _nofollow.in_dir(self._root, ("tmp",)) as tfd:
            tmp = _write_temp_at(tfd, str(self.layout.tmp), name, data, None)
            try:
                with _nofollow.in_dir(self._root, (REFLOG_FOLDER,), create=True) as lfd:
                    try:
                        os.link(tmp, name, src_dir_fd=tfd, dst_dir_fd=lfd, follow_symlinks=False)
                    except FileExistsError:
                        return False
                    except OSError as exc:
                        raise StoreIOError("link", where, exc) from exc
                    _fs.fsync_fd(lfd, where)
                    return True
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=tfd)

    def read_log_entry(self, seq: int, cap: int) -> bytes | None:
        name = seq_name(seq)
        where = f"{self._root}/{REFLOG_FOLDER}/{name}"
        try:
            with _nofollow.in_dir(self._root, (REFLOG_FOLDER,)) as lfd:
                fd = _nofollow.open_file(lfd, name, os.O_RDONLY, where)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return _nofollow.read_capped(fd, cap, where)
        finally:
            os.close(fd)

    def _log_names(self) -> list[str]:
        try:
            with _nofollow.in_dir(self._root, (REFLOG_FOLDER,)) as lfd:
                return os.listdir(lfd)
        except FileNotFoundError:
            return []

    def log_seqs(self, start: int = 0, limit: int | None = None) -> list[int]:
        found = sorted(seq for seq in map(parse_seq_name, self._log_names()) if seq is not None and seq >= start)
        return found if limit is None else found[:limit]

    def last_log_seq(self) -> int | None:
        found = self.log_seqs()
        return found[-1] if found else None

    def log_stray_entries(self) -> list[str]:
        return sorted(f"{REFLOG_FOLDER}/{name}" for name in self._log_names() if parse_seq_name(name) is None)

    def describe_history(self) -> list[str]:
        return ["history: the ref log records every ref change; a local folder keeps no object versions "
                "(an owner of its files can still change them: back it up, or use an S3 bucket with Object Lock)"]

    def write_probe(self) -> str | None:
        for folder in ("objects", "refs", "journals", "tmp"):
            if not os.access(self.root / folder, os.W_OK):
                return f"no write permission on {folder}/"
        return None


def _key_or_none(raw: Any) -> str | None:
    if raw is None:
        return None
    return bytes(raw).decode("ascii", "replace").strip()


def _write_temp_at(dfd: int, where: str, stem: str, data: bytes, key: str | None, *, mode: int = 0o444) -> str:
    """Create a fsynced temp file (read-only unless ``mode`` says otherwise) in ``dfd`` holding ``data``; its name."""
    name = _fs.temp_name(stem)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _nofollow.O_NOFOLLOW | _nofollow.O_CLOEXEC,
                     mode, dir_fd=dfd)
    except OSError as exc:
        raise StoreIOError("create", where, exc, key=key) from exc
    try:
        try:
            _fs.write_all(fd, data, where, key)
            _fs.fsync_fd(fd, where, key)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dfd)
        raise
    return name


def _rename(src: str, dst: str, src_fd: int, dst_fd: int, where: str, key: str) -> None:
    try:
        os.replace(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
    except OSError as exc:
        raise StoreIOError("rename", where, exc, key=key) from exc


__all__ = ["LocalBackend"]
