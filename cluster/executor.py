"""The Ray executor: episodes on a pool of Ray actors, faults contained, order left to the coordinator.

:class:`RayExecutor` implements the runner's ``Executor`` protocol. It decides
only *where* episodes run; :func:`emberbench.evaluation.runner.run_evaluation` still
decides what is written. Scheduling:

* **Batches.** Each call plays a batch of episodes, sized from the measured
  seconds per episode so that a call lasts about ``target_call_seconds``
  (Ray's per-call cost, about a millisecond of CPU on the coordinator and as
  much on the worker, then stays below 0.5 %), and shrunk near the end so
  that every worker keeps a share of the tail.
* **Bounded in flight.** Each worker has at most ``max_in_flight`` calls
  queued or running, so one call waits while another runs (no idle gap) and
  a dead worker loses at most that much work.
* **Any order.** Replies are taken as they complete; the coordinator restores
  manifest order.

Faults. Ray restarts a dead worker (``max_restarts=-1``); its unfinished
episodes become *suspects* and are replayed one at a time, each alone on an
otherwise idle worker, so that a further death can be blamed on exactly one
episode. An episode that kills its worker ``max_attempts`` times stops the run
with :class:`~emberbench.errors.EpisodeFailedError`. A policy exception or an
invalid action is not a fault: it stops the run at once, as in process. In
every case the calls already in flight are drained first, so every episode
that finished reaches the journal. Episodes are idempotent (same input, same
record digest, same store key), so replaying one is always safe.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emberbench.errors import ClusterError, EpisodeFailedError
from emberbench.evaluation.drive import ONE_AT_A_TIME, DriveOptions
from emberbench.results.manifest import ManifestEntry
from emberbench.evaluation.runner import EpisodeOutcome
from emberbench.sim.suite import Suite

from .codec import decode_reply, encode_tasks
from .resources import NO_EXTRA, WorkerResources
from .session import import_ray
from .workers import EpisodeWorker, remote_class

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_MAX_IN_FLIGHT = 2
DEFAULT_TARGET_CALL_SECONDS = 0.5
DEFAULT_MAX_BATCH = 256
DEFAULT_STALL_SECONDS = 300.0
RELEASE_SECONDS = 10.0
"""How long closing waits for the workers to release their stores before stopping them."""
_WAIT_SECONDS = 0.5
_MAX_PROBE_FAILURES = 10


@dataclass(slots=True)
class _Slot:
    """One worker as the dispatcher sees it."""

    actor: Any
    busy: int = 0
    exclusive: bool = False
    up: bool = True
    probe: Any = None
    probe_failures: int = 0


@dataclass(slots=True)
class _Call:
    slot: _Slot
    entries: tuple[ManifestEntry, ...]
    exclusive: bool
    epoch: int | None = None  # the coordinator store's lease epoch when the call was sent


@dataclass(slots=True)
class ExecutorStats:
    """What the last :meth:`RayExecutor.run` did (for reports and tests, never for artifacts).

    Attributes:
        episodes_by_node: finished episodes per Ray node id.
        calls: worker calls made.
        failed_calls: calls lost to a dead worker.
        failed_attempts: per manifest index, runs alone that killed a worker.
    """

    episodes_by_node: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    failed_calls: int = 0
    failed_attempts: dict[int, int] = field(default_factory=dict)


class RayExecutor:
    """Runs episodes on ``workers`` Ray actors (Ray must be initialised, see :mod:`cluster.session`).

    Args:
        suite: the suite (put into the object store once; each worker fetches it once).
        policy: the policy spec string; every worker resolves it itself.
        workers: how many actors to start, one CPU each.
        store_root: the locator of the store workers put records into (a
            folder every node mounts at the same path, or an ``s3://`` URL),
            or None to send record bytes back to the coordinator.
        store: the coordinator's own handle on that store (the one its
            journal uses). The first record from each node is looked up
            through it, so a node that writes somewhere else (a folder that is
            not shared) stops the run at once; every other record a worker
            reports is counted as stored there without a request
            (:meth:`store.Store.note_stored`). Default: a handle opened from
            ``store_root`` for the look-ups alone.
        agent_timeout: seconds an external agent may take per step.
        agent_log: folder for external agents' stderr logs (the same path on
            every node), or None.
        max_attempts: runs alone an episode may kill its worker before the
            run stops.
        max_in_flight: calls queued or running per worker.
        target_call_seconds: aimed duration of one call.
        max_batch: upper bound on episodes per call.
        stall_seconds: give up when no worker has been alive this long.
        drive: how each worker drives the policy (a batch size or a
            concurrency); every call then carries at least that many
            episodes while there are enough left, so the batch stays full.
        resources: what each worker actor asks Ray for besides its CPU
            (GPUs, custom resources; :class:`~cluster.resources.WorkerResources`).
    """

    def __init__(self, suite: Suite, policy: str, *, workers: int, store_root: str | Path | None = None,
                 store: Any = None, agent_timeout: float | None = None, agent_log: str | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT, target_call_seconds: float = DEFAULT_TARGET_CALL_SECONDS,
                 max_batch: int = DEFAULT_MAX_BATCH, stall_seconds: float = DEFAULT_STALL_SECONDS,
                 drive: DriveOptions = ONE_AT_A_TIME, resources: WorkerResources = NO_EXTRA) -> None:
        if not isinstance(policy, str):
            raise ClusterError("the Ray executor needs a policy spec string (policies travel by name)")
        if workers < 1 or max_attempts < 1 or max_in_flight < 1 or max_batch < 1:
            raise ClusterError("workers, max_attempts, max_in_flight and max_batch must be at least 1")
        self.suite, self.policy, self.workers = suite, policy, workers
        self.store_root = None if store_root is None else _locator(store_root)
        self._store, self._own_store = store, False
        self._notes = store is not None and store_root is not None  # note worker puts on the coordinator's handle
        self._checked_nodes: set[str] = set()
        self.agent_timeout = agent_timeout
        self.agent_log = agent_log
        self.max_attempts, self.max_in_flight = max_attempts, max_in_flight
        self.target, self.max_batch, self.stall_seconds = target_call_seconds, max_batch, stall_seconds
        self.drive, self.resources = drive, resources
        self.stats = ExecutorStats()
        self.auth_calls = 0  # worker calls made to authenticate what a run resumes from
        self._slots: list[_Slot] = []
        self._suite_holder: list[Any] = []
        self._ray = import_ray()

    # -- lifecycle ----------------------------------------------------------

    def actor_options(self) -> dict[str, Any]:
        """The options every episode worker actor is created with (resources, restarts, placement)."""
        return {**self.resources.actor_options(), "max_restarts": -1, "max_task_retries": 0,
                "scheduling_strategy": "SPREAD", "enable_task_events": False}

    def _new_actor(self) -> Any:
        cls = remote_class(EpisodeWorker).options(**self.actor_options())
        return cls.remote(self.policy, self.store_root, self.agent_timeout, self.agent_log, self.drive)

    def start(self) -> None:
        """Start the workers and wait until each has built its policy factory and opened the store.

        Raises:
            WorkerError: a worker cannot start (for example the policy spec
                does not resolve on its node, or the store cannot be opened
                there); one line naming the node and the cause.
            ClusterError: a worker died while starting.
        """
        if self._slots:
            return
        ray = self._ray
        self._suite_holder = [ray.put(self.suite)]  # held here for as long as workers may restart
        self._slots = [_Slot(self._new_actor()) for _ in range(self.workers)]
        try:
            ray.get([s.actor.where.remote() for s in self._slots])
        except ray.exceptions.RayTaskError as exc:  # the worker's own report, naming its node
            self.close()
            raise _cause(exc) from None
        except ray.exceptions.RayError as exc:
            self.close()
            raise ClusterError(f"an episode worker failed to start: {_first_line(exc)}") from None

    def close(self) -> None:
        """Release every worker's store (its S3 leases), then stop the workers (no restart)."""
        if self._slots and self.store_root is not None:
            try:
                self._ray.get([slot.actor.release.remote() for slot in self._slots], timeout=RELEASE_SECONDS)
            except Exception:  # noqa: BLE001, S110 - a dead or stuck worker's lease simply expires
                pass
        for slot in self._slots:
            try:
                self._ray.kill(slot.actor, no_restart=True)
            except Exception:  # noqa: BLE001, S110 - an actor already gone is fine
                pass
        self._slots, self._suite_holder = [], []
        if self._own_store:
            self._store.close()
            self._store, self._own_store = None, False

    def __enter__(self) -> RayExecutor:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers, in worker order (for fault tests)."""
        return [pid for pid, _ in self._ray.get([s.actor.where.remote() for s in self._slots])]

    # -- the run --------------------------------------------------------------

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]:
        """Play every task; yield each outcome once, in completion order.

        Raises:
            EpisodeFailedError: an episode killed its worker ``max_attempts`` times.
            ClusterError: no worker came back for ``stall_seconds``.
            WorkerError: a worker failed for a reason of its node (the store unreachable from there...).
            Exception: the first policy exception or invalid action, as raised.
        """
        self.start()
        ray = self._ray
        self.stats = ExecutorStats()
        normal: deque[ManifestEntry] = deque(tasks)
        suspects: deque[ManifestEntry] = deque()
        in_flight: dict[Any, _Call] = {}
        per_episode: float | None = None
        error: BaseException | None = None
        last_alive = time.monotonic()
        rotation = itertools.count()

        def submit(slot: _Slot, entries: tuple[ManifestEntry, ...], exclusive: bool) -> None:
            epoch = self._store.lease_epoch() if self._notes else None  # before the puts: see Store.note_stored
            ref = slot.actor.run_batch.remote(self.suite.hash, self._suite_holder, encode_tasks(entries))
            in_flight[ref] = _Call(slot, entries, exclusive, epoch)
            slot.busy += 1
            slot.exclusive = exclusive
            self.stats.calls += 1

        width = self.drive.width

        def batch_size() -> int:
            live = max(1, sum(s.up for s in self._slots))
            size = 2 if per_episode is None else round(self.target / max(per_episode, 1e-6))
            share = math.ceil(len(normal) / (live * self.max_in_flight))
            # A batched or concurrent worker plays ``width`` episodes at once: give it at least that many.
            return max(1, min(size, share, max(self.max_batch, width)), min(width, len(normal)))

        def dispatch() -> None:
            start = next(rotation) % len(self._slots)
            for slot in self._slots[start:] + self._slots[:start]:
                if not slot.up or slot.exclusive:
                    continue
                if suspects:
                    if slot.busy == 0:
                        submit(slot, (suspects.popleft(),), True)
                    continue
                while normal and slot.busy < self.max_in_flight:
                    size = batch_size()
                    submit(slot, tuple(normal.popleft() for _ in range(min(size, len(normal)))), False)

        while True:
            if error is None:
                dispatch()
            probes = {s.probe: s for s in self._slots if s.probe is not None}
            if not in_flight:
                if error is not None:
                    raise error
                if not normal and not suspects:
                    return
            if any(s.up for s in self._slots) or in_flight:
                last_alive = time.monotonic()
            elif time.monotonic() - last_alive > self.stall_seconds:
                raise ClusterError(f"no episode worker has been alive for {self.stall_seconds:g} s; "
                                   f"{len(normal) + len(suspects)} episodes not run")
            ready, _ = ray.wait([*in_flight, *probes], num_returns=1, timeout=_WAIT_SECONDS)
            for ref in ready:
                if ref in probes:
                    error = self._probed(probes[ref], ref) or error
                    continue
                call = in_flight.pop(ref)
                call.slot.busy -= 1
                call.slot.exclusive = False
                try:
                    data, failure = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    error = error or _cause(exc)
                    continue
                except ray.exceptions.RayError as exc:
                    self.stats.failed_calls += 1
                    self._down(call.slot)
                    if error is None:
                        error = self._requeue(call, exc, suspects)
                    continue
                reply = decode_reply(data)
                if reply.outcomes:
                    seconds = reply.seconds / len(reply.outcomes)
                    per_episode = seconds if per_episode is None else 0.8 * per_episode + 0.2 * seconds
                    unseen = self._node_writes_elsewhere(reply)
                    if unseen is not None:
                        error = error or unseen
                        continue
                    if call.epoch is not None:
                        for outcome in reply.outcomes:
                            self._store.note_stored(outcome.record_digest, outcome.record_size, call.epoch)
                self.stats.episodes_by_node[reply.node_id] += len(reply.outcomes)
                yield from reply.outcomes
                if failure is not None and error is None:
                    error = failure

    def _node_writes_elsewhere(self, reply: Any) -> BaseException | None:
        """The first reply from a node: check that the coordinator's store holds that node's first record.

        Workers put records themselves and report only their sizes, so the
        coordinator never asks the store about each one; one look per node
        shows that the node writes where the coordinator reads (a store folder
        that is not the same shared folder on every node would not).
        """
        if self.store_root is None or reply.node_id in self._checked_nodes:
            return None
        first = reply.outcomes[0]
        if self._store is None:
            from emberbench.store import open_store

            self._store, self._own_store = open_store(self.store_root), True
        if not self._store.has(first.record_digest):
            from emberbench.errors import StoreUsageError

            return StoreUsageError(
                f"episode {first.index}: record {first.record_digest}, put by a worker on Ray node "
                f"{reply.node_id[:12]}, is not in the store {self.store_root} as the coordinator sees it "
                "(every node must reach the same store: a folder mounted at the same path, or S3)")
        self._checked_nodes.add(reply.node_id)
        return None

    # -- authentication on the workers (resume) ---------------------------------

    def _spread(self, method: str, parts: list[tuple[Any, ...]]) -> list[Any]:
        """Call ``method`` of the workers once per part, round robin; answers in part order.

        A part whose worker is lost is answered by ``None`` (the caller does
        it in process): the workers hold every CPU, so no other Ray task could run.
        """
        self.start()
        ray = self._ray
        live = [s for s in self._slots if s.up] or self._slots
        refs = [getattr(live[i % len(live)].actor, method).remote(self.suite.hash, self._suite_holder, *part)
                for i, part in enumerate(parts)]
        self.auth_calls += len(refs)
        out: list[Any] = []
        for ref in refs:
            try:
                out.append(ray.get(ref))
            except ray.exceptions.RayTaskError as exc:
                raise _cause(exc) from None
            except ray.exceptions.RayError:
                out.append(None)
        return out

    def _strides(self, count: int) -> int:
        return max(1, min(count, max(3 * len(self._slots or [None] * self.workers), -(-count // 256))))

    def verify_stored(self, items: Sequence[Any]) -> list[Any] | None:
        """:func:`emberbench.evaluation.resume_auth.verify_stored` on the workers, which read the records from the store.

        Items are dealt out in strides (one scenario's episodes sit together in
        a manifest and cost alike), so every worker gets a similar share.
        Returns None when the workers have no store (the caller then checks in process).
        """
        from emberbench.evaluation.resume_auth import encode_items, verify_stored

        if self.store_root is None:
            return None
        if not items:
            return []
        tasks = self._strides(len(items))
        parts = [list(items[t::tasks]) for t in range(tasks)]
        answers = self._spread("verify_stored", [(encode_items(part),) for part in parts])
        verdicts: list[Any] = [None] * len(items)
        for t, (part, answer) in enumerate(zip(parts, answers)):
            if answer is None:
                from emberbench.store import open_store

                answer = verify_stored(open_store(self.store_root), self.suite, part)
            verdicts[t::tasks] = answer
        return verdicts

    def authenticate_records(self, records: list[dict[str, Any]], suite: Suite) -> list[Any]:
        """The result loader's authenticator, replaying on the workers; verdicts as in process.

        Raises:
            RecordAuthenticationError: ``episode {i}: ...`` for the first record (in list order) that fails.
        """
        from emberbench.errors import RecordAuthenticationError
        from emberbench.results.artifact import authenticate_all

        if suite.hash != self.suite.hash or not records:
            return authenticate_all(records, suite)
        tasks = self._strides(len(records))
        positions = [list(range(t, len(records), tasks)) for t in range(tasks)]
        answers = self._spread("authenticate_records", [(p, [records[i] for i in p]) for p in positions])
        out: list[Any] = [None] * len(records)
        first: tuple[int, Any, Any] | None = None
        for part, answer in zip(positions, answers):
            metrics, failure = answer if answer is not None else _authenticate_here(records, part, suite)
            for position, value in zip(part, metrics):
                out[position] = value
            if failure is not None and (first is None or failure[0] < first[0]):
                first = failure
        if first is not None:
            position, error, field = first
            if isinstance(error, BaseException):
                raise error
            raise RecordAuthenticationError(f"episode {position}: {error}", field=field)
        return out

    def _requeue(self, call: _Call, exc: BaseException, suspects: deque[ManifestEntry]) -> BaseException | None:
        """Turn a lost call's episodes into suspects; return the error that ends the run, if any."""
        if not call.exclusive:
            suspects.extend(call.entries)
            return None
        entry = call.entries[0]
        attempts = self.stats.failed_attempts.get(entry.index, 0) + 1
        self.stats.failed_attempts[entry.index] = attempts
        if attempts >= self.max_attempts:
            return EpisodeFailedError(
                f"episode {entry.index} (scenario {entry.scenario_id}, seed {entry.seed}) killed its worker "
                f"{attempts} times and was given up (last failure: {_first_line(exc)}); the episodes completed "
                "so far are kept, and running again resumes from them",
                index=entry.index, attempts=attempts,
            )
        suspects.append(entry)
        return None

    def _down(self, slot: _Slot) -> None:
        """Take a worker out of rotation until a probe shows that Ray restarted it."""
        slot.up = False
        if slot.probe is None:
            slot.probe = slot.actor.where.remote()

    def _probed(self, slot: _Slot, ref: Any) -> BaseException | None:
        """Handle a probe's answer; return an error if the worker cannot come back."""
        ray = self._ray
        slot.probe = None
        try:
            ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # restarted, but it cannot work there (WorkerError)
            return _cause(exc)
        except ray.exceptions.RayActorError as exc:
            if getattr(exc, "actor_init_failed", False):
                return ClusterError(f"an episode worker failed to restart: {_first_line(exc)}")
            slot.probe_failures += 1
            if slot.probe_failures >= _MAX_PROBE_FAILURES:  # Ray will not restart it: replace it
                self._ray.kill(slot.actor, no_restart=True)
                slot.actor, slot.probe_failures = self._new_actor(), 0
            slot.probe = slot.actor.where.remote()
        except ray.exceptions.RayError:
            slot.probe = slot.actor.where.remote()
        else:
            slot.up, slot.probe_failures = True, 0
        return None


def _locator(store: str | Path) -> str:
    """A store locator every worker can reopen: an absolute folder path, or a URL as given."""
    from emberbench.store import is_url

    text = str(store)
    return text if is_url(text) else str(Path(text).resolve())


def _authenticate_here(records: list[dict[str, Any]], part: list[int], suite: Suite) -> tuple[list[Any], Any]:
    """Replay ``part`` in this process (a worker was lost), in the workers' answer format."""
    from emberbench.records.episode import authenticate
    from emberbench.errors import RecordAuthenticationError

    metrics: list[Any] = []
    for position in part:
        try:
            metrics.append(authenticate(records[position], suite))
        except RecordAuthenticationError as exc:
            return metrics, (position, str(exc), exc.field)
    return metrics, None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _cause(exc: Any) -> BaseException:
    """The worker-side exception behind a RayTaskError."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else ClusterError(_first_line(exc))
