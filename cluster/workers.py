"""What runs on Ray workers: the episode worker actor and the authentication task.

:class:`EpisodeWorker` is a plain class made remote by :func:`remote_class`, so
importing this module does not import ``ray``. It is built once with what
every call needs (the suite, the policy spec, the store locator) and then serves
many calls, each carrying only small, explicit inputs. Authentication needs no
state but the suite, so it runs as plain tasks that cache the suite per
process and hold no CPU between calls (the reducer's tasks need them next).
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from emberbench.errors import EmberError, RecordAuthenticationError, WorkerError
from emberbench.policies.context import PolicyContext
from emberbench.policies.spec import FreshPolicies, resolve_policy
from emberbench.evaluation.drive import ONE_AT_A_TIME, DriveOptions, play_tasks
from emberbench.evaluation.outcome import EpisodeOutcome
from emberbench.sim.suite import Suite

from .codec import decode_tasks, encode_reply


F = TypeVar("F", bound=Callable[..., Any])


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def worker_error(what: str, exc: BaseException) -> WorkerError:
    """``exc`` as one line naming this node (address and host name) and the cause: ``{what} on node ...``."""
    import ray

    node = ray.util.get_node_ip_address()
    text = " ".join(str(exc).split()) or "(no message)"
    return WorkerError(f"{what} on node {node} ({socket.gethostname()}): {type(exc).__name__}: {text}",
                       node=node, cause=type(exc).__name__)


def _on_this_node(method: F) -> F:
    """Raise the worker's start failure, and any failure that is not the project's own verdict, naming the node.

    EMBERBench's errors (a record that does not authenticate, a damaged
    journal) keep their type and message, as in process; anything else (the
    store unreachable, a missing module) is a fault of this node, and the
    coordinator could otherwise not tell which node had it.
    """

    @functools.wraps(method)
    def wrapper(self: EpisodeWorker, *args: Any, **kwargs: Any) -> Any:
        if self.failure is not None:
            raise self.failure
        try:
            return method(self, *args, **kwargs)
        except EmberError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the node, one line
            raise worker_error("an episode worker failed", exc) from None

    return wrapper  # type: ignore[return-value]


class EpisodeWorker:
    """Plays batches of episodes; every episode gets a fresh policy from the spec.

    Args:
        policy: the policy spec string (resolved here, in the worker: user
            policy code must be importable on every node, docs/cluster.md).
        store_root: the store's locator (a shared folder or an ``s3://``
            URL, see :attr:`store.Store.locator`), or None to return the
            record bytes in the outcome instead.
        agent_timeout: seconds an external (``cmd:``) agent may take per step.
        agent_log: folder for external agents' stderr logs, or None.
        drive: how each call's episodes are driven (one at a time, a batch
            size, a concurrency; :mod:`emberbench.evaluation.drive`).

    The factory is resolved once per worker, so whatever it loads when it
    is built (model weights) is loaded once per worker, not per episode;
    each episode (or, in the batch form, each call) still gets a new policy
    from it.

    The suite is not a constructor argument: Ray keeps large constructor
    arguments in the object store and frees them once the actor is built, so a
    restarted actor could not be rebuilt. Each call names the suite by hash
    and carries the coordinator's reference to it; the worker fetches it on
    its first call (again after a restart) and keeps it.

    A failure to start (the policy spec does not resolve here, the store
    cannot be opened from this node) is kept, not raised: Ray reports a
    failed constructor as the actor's death, with a traceback but without
    the error. Every call then raises it, one line naming the node
    (:class:`~emberbench.errors.WorkerError`).
    """

    def __init__(self, policy: str, store_root: str | None, agent_timeout: float | None,
                 agent_log: str | None = None, drive: DriveOptions = ONE_AT_A_TIME) -> None:
        self.node_id = _node_id()
        self.host = socket.gethostname() or "unknown"
        self.drive = drive
        self.suite: Suite | None = None
        self.suite_hash = ""
        self.store = None
        self.failure: WorkerError | None = None
        try:
            if store_root is not None:
                from emberbench.store import open_store

                self.store = open_store(store_root)
            kwargs: dict[str, Any] = {"agent_log": agent_log, "context": PolicyContext(store=self.store)}
            if agent_timeout is not None:
                kwargs["agent_timeout"] = agent_timeout
            # Refuses a factory that hands out one object twice on this worker.
            self.factory = FreshPolicies(resolve_policy(policy, **kwargs), policy)
        except Exception as exc:  # noqa: BLE001 - raised by every call, naming this node
            self.failure = worker_error("an episode worker failed to start", exc)

    @_on_this_node
    def run_batch(self, suite_hash: str, suite_holder: list[Any], tasks: bytes) -> tuple[bytes, BaseException | None]:
        """Play the encoded episodes, driven as the worker's ``drive`` says.

        Args:
            suite_hash: the suite's hash.
            suite_holder: ``[ObjectRef]`` of the suite (in a list, so that Ray
                fetches it only when this worker does not hold it yet).
            tasks: the episodes, encoded by :func:`cluster.codec.encode_tasks`.

        Returns:
            ``(reply, error)``: the encoded reply (see :mod:`cluster.codec`)
            holding every episode finished before the first policy exception
            or invalid action, and that exception (None if there was none).
            Such an error is a verdict on the policy, not a fault of the
            worker, so it is returned rather than retried.
        """
        suite = self._suite(suite_hash, suite_holder)
        start = time.perf_counter()
        outcomes: list[EpisodeOutcome] = []
        error: BaseException | None = None
        played = play_tasks(suite, decode_tasks(tasks), self.factory, self.drive)
        try:
            while True:
                try:
                    outcome, record_bytes = next(played)
                except StopIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - any policy failure stops the run, as in process
                    error = _portable(exc)
                    break
                if self.store is not None:  # a store fault is this node's, not the policy's: not caught here
                    self.store.put(record_bytes, key=outcome.record_digest)
                    outcome = EpisodeOutcome(outcome.index, outcome.record_digest, None, outcome.metrics_bytes,
                                             usage=outcome.usage, record_size=len(record_bytes))
                outcomes.append(outcome)
        finally:
            played.close()  # episodes still in flight (a store fault) are given up and their policies closed
        return encode_reply(self.node_id, self.host, time.perf_counter() - start, outcomes), error

    def _suite(self, suite_hash: str, suite_holder: list[Any]) -> Suite:
        if self.suite is None or self.suite_hash != suite_hash:
            import ray

            self.suite, self.suite_hash = ray.get(suite_holder[0]), suite_hash
        return self.suite

    @_on_this_node
    def verify_stored(self, suite_hash: str, suite_holder: list[Any], rows: list[list[Any]]) -> list[Any]:
        """Check and replay journaled records read from the store (:func:`emberbench.evaluation.resume_auth.verify_stored`).

        Args:
            suite_hash, suite_holder: as for :meth:`run_batch`.
            rows: the items, encoded by :func:`emberbench.evaluation.resume_auth.encode_items`.
        """
        from emberbench.evaluation.resume_auth import decode_items, verify_stored

        if self.store is None:
            raise RuntimeError("this worker has no store to read records from")
        return verify_stored(self.store, self._suite(suite_hash, suite_holder), decode_items(rows))

    @_on_this_node
    def authenticate_records(self, suite_hash: str, suite_holder: list[Any], positions: list[int],
                             records: list[dict[str, Any]]) -> tuple[list[Any], Any]:
        """Replay the records of a resumed run's artifact on this worker (see :func:`authenticate_parsed`)."""
        return authenticate_parsed(self._suite(suite_hash, suite_holder), positions, records)

    def release(self) -> None:
        """Close this worker's store before the worker is stopped.

        An S3 store deletes the worker's writer lease here; a killed actor
        runs no exit handlers, so without this its lease would stay until it
        expires and a gc would wait for it.
        """
        if self.store is not None:
            self.store.close()

    @_on_this_node
    def where(self) -> tuple[int, str]:
        """This worker's process id and Ray node id (used to wait for a worker, by fault tests and reports)."""
        return os.getpid(), self.node_id


_SUITES: dict[str, Suite] = {}
"""Suites already fetched by this worker process, by hash (tasks reuse processes)."""


def authenticate_parsed(suite: Suite, positions: list[int], records: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    """Authenticate parsed records in order, stopping at the first that fails (the executor's resume replay).

    Returns:
        ``(metrics, failure)``: the metrics of every record before the first
        failure, and None, ``(position, message, field)`` for a record that
        does not authenticate, or ``(position, exception, None)`` for any
        other error.
    """
    from emberbench.records.episode import authenticate

    out = []
    for position, record in zip(positions, records):
        try:
            out.append(authenticate(record, suite))
        except RecordAuthenticationError as exc:
            return out, (position, str(exc), exc.field)
        except Exception as exc:  # noqa: BLE001 - re-raised by the driver in list order
            return out, (position, _portable(exc), None)
    return out, None


def authenticate_chunk(suite_hash: str, suite_holder: list[Any], positions: list[int],
                       records: list[bytes]) -> tuple[list[Any], BaseException | None]:
    """Authenticate records (canonical JSON bytes) in order: a Ray task body.

    Args:
        suite_hash: the suite's hash, the key of the per-process cache.
        suite_holder: ``[ObjectRef]`` of the suite, fetched only on a cache
            miss (wrapped in a list so that Ray does not fetch it every call).
        positions: each record's place in the artifact (for messages).
        records: the records' canonical JSON.

    Returns:
        ``(verdicts, error)``: per record, its metrics or ``(message, field)``
        of a record that does not authenticate; and None, or an error other
        than a failed authentication (then the verdicts stop before that
        record, and the driver raises the error).
    """
    import json

    import ray

    from emberbench.records.episode import authenticate_parsed
    from emberbench.records.record import record_from_dict

    suite = _SUITES.get(suite_hash)
    if suite is None:
        suite = _SUITES[suite_hash] = ray.get(suite_holder[0])
    out: list[Any] = []
    for _position, data in zip(positions, records, strict=True):
        try:
            out.append(authenticate_parsed(record_from_dict(json.loads(data)), suite, data))
        except RecordAuthenticationError as exc:
            out.append((str(exc), exc.field))
        except Exception as exc:  # noqa: BLE001 - re-raised by the driver in list order
            return out, _portable(exc)
    return out, None


def _portable(exc: BaseException) -> BaseException:
    """The exception itself if it pickles, else a ClusterError carrying its text."""
    import pickle

    from emberbench.errors import ClusterError

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling problem gets the same fallback
        return ClusterError(f"{type(exc).__name__}: {exc}")


@cache
def remote_class(cls: type) -> Any:
    """The Ray actor class of ``cls`` (created once per process)."""
    import ray

    return ray.remote(cls)
