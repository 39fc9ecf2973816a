"""Every error class of the project survives pickling (Ray workers send their errors to the coordinator pickled)."""

from __future__ import annotations

import errno
import inspect
import pickle
from collections.abc import Callable
from typing import Any

import pytest

import emberbench.errors
import emberbench.store.errors

KEY = "ab" * 32
SAMPLES: dict[str, Callable[[type[Any]], BaseException]] = {
    # Classes whose constructor takes more than a message; every other class is built from one.
    "AgentError": lambda c: c("agent died", stderr_tail=("a", "b"), scenario_id="v1-pub-01", seed=3),
    "RecordAuthenticationError": lambda c: c("episode 2: step 4 differs", field="step 4"),
    "OutputLockedError": lambda c: c("locked by pid 7", path="/runs/a.json", holder={"pid": 7, "host": "h"}),
    "RunIntegrityError": lambda c: c("journal damaged", subject="journals/run-1"),
    "EpisodeFailedError": lambda c: c("episode 7 given up", index=7, attempts=3),
    "WorkerError": lambda c: c("an episode worker failed on node 10.0.0.7 (w): OSError: x", node="10.0.0.7",
                               cause="OSError"),
    "ModelError": lambda c: c("model 'm': retries spent", server="http://127.0.0.1:9", cause="HTTP 503: overloaded"),
    "AttestationError": lambda c: c("attestation of run-1: signature does not verify", check="signature"),
    "InvalidKeyError": lambda c: c("XYZ"),
    "InvalidNameError": lambda c: c("ref", "bad/name", "letters only"),
    "StoreFormatError": lambda c: c("unknown format", path="/s/format", found="9.0", supported="1.0"),
    "StoreLayoutError": lambda c: c("/s/objects/ab", "a symbolic link"),
    "ObjectNotFoundError": lambda c: c(KEY),
    "ObjectTooLargeError": lambda c: c(KEY, 2_000_000, 1_000_000),
    "IntegrityError": lambda c: c(KEY, "checksum mismatch", path="/s/objects/ab/cd"),
    "KeyMismatchError": lambda c: c(KEY, "cd" * 32),
    "StoreIOError": lambda c: c("read", "s3://ember/p/format", OSError(errno.EACCES, "no AWS credentials found")),
    "RefError": lambda c: c("main", "missing"),
    "RefConflictError": lambda c: c("main", KEY, None),
    "JournalError": lambda c: c("run-1", "gone"),
    "JournalCorruptError": lambda c: c("run-1", 128, "checksum mismatch"),
    "LockError": lambda c: c("/s/gc.lock", "held by pid 9"),
    "LocatorError": lambda c: c("s3://", "no bucket"),
    "NotLocalStoreError": lambda c: c("s3://ember/p", "root"),
    "ReadOnlyStoreError": lambda c: c("s3://ember/p", "put an object", "PutObject denied (AccessDenied)"),
    "RefLogError": lambda c: c(17, "does not follow entry 16"),
}


def _classes() -> list[type[BaseException]]:
    found = []
    for module in (emberbench.errors, emberbench.store.errors):
        found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                  if c.__module__ == module.__name__ and issubclass(c, BaseException)]
    return sorted(found, key=lambda c: c.__name__)


def _sample(cls: type[BaseException]) -> BaseException:
    make = SAMPLES.get(cls.__name__, lambda c: c("something went wrong at /x"))
    return make(cls)


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_error_round_trips_through_pickle(cls: type[BaseException]) -> None:
    """The copy has the same class, message, arguments and attributes (its data survives the trip)."""
    error = _sample(cls)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        copy = pickle.loads(pickle.dumps(error, protocol=protocol))
        assert type(copy) is cls
        assert str(copy) == str(error) and copy.args == error.args
        assert vars(copy) == vars(error)


def test_every_class_with_its_own_constructor_has_a_sample() -> None:
    """A new error class whose constructor needs more than a message gets a sample above (so it is tested)."""
    plain = {c.__name__ for c in _classes() if c.__name__ not in SAMPLES}
    for name in plain:
        cls = next(c for c in _classes() if c.__name__ == name)
        _sample(cls)  # raises TypeError if the class needs other arguments
    assert set(SAMPLES) <= {c.__name__ for c in _classes()}


def test_store_error_keeps_what_a_user_acts_on() -> None:
    """The error of a worker without S3 credentials arrives with its operation, path and errno."""
    error = emberbench.store.errors.StoreIOError("read", "s3://ember/p/format",
                                                 OSError(errno.EACCES, "no AWS credentials found"))
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == "store read failed at s3://ember/p/format: no AWS credentials found"
    assert (copy.operation, copy.path, copy.errno, copy.key) == ("read", "s3://ember/p/format", errno.EACCES, None)
