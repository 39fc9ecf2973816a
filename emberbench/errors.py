"""The EMBERBench exception hierarchy: every error the project raises on purpose.

Everything derives from :class:`EmberError`, so the CLI can turn any of them
into one clear line. Each class also derives from the built-in exception it
resembles, so callers that catch ``ValueError`` keep working. Errors carry the
data a user needs to act on them.

This module uses only the standard library: the stand-alone grouped-rates
reader imports it without installing anything.
"""

from __future__ import annotations


class EmberError(Exception):
    """Root of every error EMBERBench raises deliberately.

    Every subclass survives pickling with its message and attributes: errors
    raised on a Ray worker reach the coordinator pickled, and the default
    (calling the class again with ``args``) fails for a constructor that takes
    anything else, which Ray reported only as "Failed to deserialize exception".
    """

    def __reduce__(self):  # noqa: ANN204 - pickle's protocol
        return (_rebuild, (type(self), self.args, dict(vars(self))))


def _rebuild(cls: type[EmberError], args: tuple[object, ...], state: dict[str, object]) -> EmberError:
    """An error of ``cls`` with these ``args`` and attributes, its constructor not called again."""
    error = cls.__new__(cls, *args)
    error.args = args
    vars(error).update(state)
    return error


MALFORMED = (AttributeError, TypeError, ValueError, LookupError, ArithmeticError)
"""What using an object raises when one of its fields was replaced by a value of another type (a frozen
dataclass still allows ``object.__setattr__``); functions that take objects from callers turn these into
their own :class:`EmberError` where they serialize the object."""


class CanonicalFormError(EmberError, ValueError):
    """A value or a text is not valid (canonical) JSON."""


class InputFileError(EmberError, ValueError):
    """An input file breaks the input policy: not a regular file, too large, or unreadable."""


class OutputPathError(EmberError, ValueError):
    """An output path is refused by the output policy (it is not a regular file, or is a link)."""


class ScenarioError(EmberError, ValueError):
    """A scenario file or scenario value is invalid."""


class SuiteError(EmberError, ValueError):
    """A scenario suite or its manifest is invalid or inconsistent."""


class InvalidActionError(EmberError, ValueError):
    """A policy returned an action that is not valid for the observation."""


class PolicyError(EmberError, ValueError):
    """A policy specification cannot be resolved into a policy factory."""


class AgentError(PolicyError):
    """An external agent process crashed, went silent, or spoke malformed JSON.

    Attributes:
        stderr_tail: the last lines the agent wrote to stderr (at most 20,
            oldest first; also quoted in the message).
        scenario_id: the scenario of the episode it was playing, when known.
        seed: that episode's seed, when known.
    """

    def __init__(self, message: str, *, stderr_tail: tuple[str, ...] = (), scenario_id: str | None = None,
                 seed: int | None = None) -> None:
        super().__init__(message)
        self.stderr_tail = tuple(stderr_tail)
        self.scenario_id = scenario_id
        self.seed = seed

    def in_episode(self, scenario_id: str, seed: int) -> AgentError:
        """The same error, its message prefixed with the episode (the evaluator's knowledge, not the agent's)."""
        if self.scenario_id is not None:
            return self
        return AgentError(f"scenario {scenario_id}, seed {seed}: {self}", stderr_tail=self.stderr_tail,
                          scenario_id=scenario_id, seed=seed)


class ModelError(PolicyError):
    """A served model (an OpenAI-compatible server) gave no usable answer: a refused request, retries spent.

    Attributes:
        server: the server's base URL (without credentials or query).
        cause: what went wrong last, in one line (``HTTP 503: overloaded``, ``timed out after 30 s``).
    """

    def __init__(self, message: str, *, server: str = "", cause: str = "") -> None:
        super().__init__(message)
        self.server = server
        self.cause = cause


class ModelCacheError(EmberError, ValueError):
    """A served model's response cache in the store holds an entry that is malformed, of an unknown
    version, or not for the request it is filed under."""


class EvaluationError(EmberError):
    """An evaluation input or output fails a check; nothing is repaired."""


class RecordAuthenticationError(EvaluationError, ValueError):
    """A run record does not reproduce under replay, or is malformed.

    Attributes:
        field: the record field (or ``step N``) where the difference was found.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ManifestError(EvaluationError, ValueError):
    """An evaluation manifest is malformed or does not match the suite/code."""


class ResultError(EvaluationError, ValueError):
    """A result artifact is malformed, inconsistent or fails authentication."""


class ResumeError(EvaluationError, ValueError):
    """An existing artifact cannot be resumed by this run."""


class OutputLockedError(EvaluationError, BlockingIOError):
    """Another live run holds the output (or its run journal); nothing was written.

    Attributes:
        path: the output path.
        holder: what the lock file says about its holder (pid, host, started), possibly empty.
    """

    def __init__(self, message: str, *, path: str, holder: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.holder = dict(holder or {})

    def __str__(self) -> str:
        return str(self.args[0])


class RunIntegrityError(EvaluationError, ValueError):
    """A stored record, run journal or result failed an integrity check during a run; nothing was repaired.

    Attributes:
        subject: the object key or journal name that failed.
    """

    def __init__(self, message: str, *, subject: str) -> None:
        super().__init__(message)
        self.subject = subject


class PairingError(EvaluationError, ValueError):
    """Two result artifacts cannot be paired (different manifests)."""


class StatisticsInputError(EvaluationError, ValueError):
    """An input to the statistics functions fails re-verification."""


class PresentationError(EmberError, ValueError):
    """A viewer, report or plot request cannot be served (unknown episode, refused folder, missing extra)."""


class GroupedRatesError(EmberError, ValueError):
    """A grouped-rates input, contract or report is invalid or over a cap."""


class StoreUsageError(EmberError, ValueError):
    """The content-addressed store was used or found in a way EMBERBench refuses."""


class RunInfoError(EmberError, ValueError):
    """A run-info object, a run journal's header or a run sidecar is malformed or of an unknown version."""


class AttestationError(EmberError, ValueError):
    """A run's signed attestation fails a check: its envelope, signature, signer, subject or predicate.

    Attributes:
        check: which check failed: ``envelope`` (not a DSSE envelope of the
            expected payload type), ``signature`` (no signature verifies),
            ``key`` (the signing key is unknown, expired or not yet valid),
            ``statement`` (the signed statement is malformed or of another
            type), ``subject`` (it is not about this result) or ``predicate``
            (its run-info is not the run's).
    """

    def __init__(self, message: str, *, check: str) -> None:
        super().__init__(message)
        self.check = check


class SigningKeyError(EmberError, ValueError):
    """A signing key, public key or keyring file is missing, malformed, of an unknown version, or refused."""


class ClusterError(EmberError, RuntimeError):
    """The distributed runner could not complete its work."""


class EpisodeFailedError(ClusterError):
    """One episode failed or killed workers more often than the retry bound.

    Attributes:
        index: the manifest index of the episode.
        attempts: how many times it was tried.
    """

    def __init__(self, message: str, *, index: int, attempts: int) -> None:
        super().__init__(message)
        self.index = index
        self.attempts = attempts


class WorkerError(ClusterError):
    """A Ray worker failed for a reason of its own node (its store access, its environment), not the policy's.

    The message is one line naming the node and the worker's error:
    ``an episode worker failed to start on node 10.0.0.7 (gpu-3): StoreIOError: ...``.

    Attributes:
        node: the worker node's address.
        cause: the class name of the worker's error.
    """

    def __init__(self, message: str, *, node: str, cause: str) -> None:
        super().__init__(message)
        self.node = node
        self.cause = cause


class ManifestTypeError(EvaluationError, TypeError):
    """Seeds were given in a container with no reliable order (set, str, generator)."""


class RecipeError(EmberError, ValueError):
    """A generation recipe is malformed, or asks for something no map can satisfy."""


class GenerationError(EmberError, ValueError):
    """The scenario generator could not produce what it was asked for (the message says why)."""


class CommitmentError(EmberError, ValueError):
    """A suite commitment or reveal is malformed, or the suite does not match it."""


class CalibrationError(SuiteError):
    """A calibration file is malformed, inconsistent, or does not belong to the suite."""
