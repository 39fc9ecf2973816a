"""Attesting runs and verifying attestations: the library calls behind ``run --signing-key``,
``runs attest``, ``runs verify`` and ``verify --attestation``.

An attestation of a run is a DSSE envelope (:mod:`.dsse`) whose payload is
an in-toto statement (:mod:`.statement`): subject the run's result artifact
(its SHA-256), predicate the run's provenance. It is stored as one more
content-addressed object, named by the ref ``attestations/<run>``
(:func:`attestation_ref`), which keeps it alive through gc. Attesting again
(another key, a later run-info) moves the ref; the earlier envelope stays
an object until gc collects it.

**Verifying** (:func:`verify_attestation`, for envelope bytes;
:func:`check_run_attestation`, for a run in a store) checks, in this order:

1. the envelope: a DSSE JSON envelope, at most 1 MiB;
2. the signature: at least one signature verifies, over PAE of the payload
   type and the exact payload bytes, with a key of the keyring (the
   signature's ``keyid`` only chooses which key to try first);
3. the payload type (``application/vnd.in-toto+json``), then the statement
   (parsed from the signed bytes, never re-serialized): statement type,
   predicate type and predicate;
4. the signer's validity: the key's ``not_before``/``not_after`` bound the
   time the statement says it was made, which may not lie in the future;
5. the subject: its SHA-256 is the run's result (the ``results/`` ref, whose
   object must hash to its key), and the predicate's run-info names that
   result;
6. the predicate: every run-info field it carries equals the run's current
   run-info (``verification`` excepted, and fields a newer run-info format
   adds), so an edited run-info fails.

Any failure raises :class:`~emberbench.errors.AttestationError` with a
one-line reason and the check that failed. Without a keyring, steps 2 and 4
are skipped and the result says the signature was not checked.
"""

from __future__ import annotations

import calendar
import platform
import time
from dataclasses import dataclass
from typing import Any

from ..errors import AttestationError, StoreUsageError
from ..io.input_policy import InputKind, read_input
from ..evaluation.run_info import RunInfo, read_run_info, software_versions, this_host, this_user, utc_now
from ..io.versions import ATTESTATION_PAYLOAD_TYPE
from .code_digest import PolicyCode, policy_code_digest
from .dsse import Envelope, sign_envelope, signature_verifies
from .keys import Keyring, SigningKey, TrustedKey
from .statement import Attested, Invocation, Predicate, Statement, parse_statement

ATTESTATION_REF_PREFIX = "attestations/"
RESULT_REF_PREFIX = "results/"
CLOCK_SKEW_SECONDS = 300
"""How far in the future (by this machine's clock) an attestation's time may be."""


def attestation_ref(run: str) -> str:
    """The ref that names the attestation of the run (journal) ``run``."""
    return f"{ATTESTATION_REF_PREFIX}{run}"


@dataclass(frozen=True, slots=True)
class Verified:
    """An attestation that passed verification.

    Attributes:
        statement: the signed statement.
        signer: the trusted key whose signature verified, or None when no keyring was given.
        keyid: the key id the (first) signature names, a hint only.
    """

    statement: Statement
    signer: TrustedKey | None
    keyid: str

    def describe(self) -> str:
        """One line: who signed and when (or that the signature was not checked)."""
        at = self.statement.predicate.attested.at
        if self.signer is None:
            return (f"attested at {at} by key {self.keyid[:16] or '(no key id)'}; signature not checked "
                    "(no keyring given)")
        return f"signed by {self.signer.describe()} at {at}"


# -- making --------------------------------------------------------------------------------------


def _require_complete(info: RunInfo) -> None:
    if info.state != "complete" or info.result is None:
        raise StoreUsageError(f"run {info.run} is {info.state} ({info.episodes_done}/{info.episodes_scheduled} "
                              "episodes); only a complete run with a stored result can be attested")


def make_statement(info: RunInfo, *, simulator_version: str, policy_code: PolicyCode,
                   invocation: Invocation | None, end_of_run: bool, at: str | None = None) -> Statement:
    """The statement of a complete run whose run-info is ``info``.

    Raises:
        StoreUsageError: the run is not complete.
    """
    _require_complete(info)
    assert info.result is not None
    versions = software_versions()
    attested = Attested(at=at or utc_now(), by=f"{this_user()}@{this_host()}"[:512],
                        emberbench_version=str(versions["emberbench_version"]),
                        python_version=str(versions["python_version"]), platform=platform.platform()[:256],
                        end_of_run=end_of_run)
    run_info = info.replace(verification=None).to_dict()
    predicate = Predicate(run_info, simulator_version, policy_code, invocation, attested)
    return Statement(f"{RESULT_REF_PREFIX}{info.run}", info.result, predicate)


def sign_statement(statement: Statement, signer: SigningKey) -> Envelope:
    """The DSSE envelope of ``statement`` signed by ``signer``."""
    return sign_envelope(statement.to_bytes(), ATTESTATION_PAYLOAD_TYPE, signer)


@dataclass(frozen=True, slots=True)
class Attestation:
    """An attestation just stored: its store key, envelope and statement."""

    run: str
    key: str
    envelope: Envelope
    statement: Statement


def attest_run(store: Any, run: str, signer: SigningKey, *, policy_code: PolicyCode | None = None,
               invocation: Invocation | None = None, simulator_version: str | None = None) -> Attestation:
    """Sign the provenance of the complete run ``run`` and store it under ``attestations/<run>``.

    The run must be complete; its ``results/`` ref must name the result its
    run-info names, and that object must hash to its key (it is read in
    pieces; nothing is replayed: ``runs verify`` does that). Given at the end
    of a run, ``policy_code``, ``invocation`` and ``simulator_version``
    describe that run; attesting afterwards, the policy code is digested as
    found now and the simulator version is read from the run's manifest.

    Raises:
        StoreUsageError: no readable run-info, the run is not complete, or its refs disagree.
        PolicyError: the policy's code cannot be digested.
        StoreError: the store cannot be read or written, or the result fails its check.
    """
    info = read_run_info(store, run)
    if info is None:
        raise StoreUsageError(f"run {run} has no run-info; it cannot be attested")
    _require_complete(info)
    result = _result_ref(store, run)
    if result != info.result:
        raise StoreUsageError(f"run {run}: its {RESULT_REF_PREFIX} ref names {result} but its run-info names "
                              f"{info.result}; run `emberbench runs verify` and repair the store first")
    store.check(result, verify_data=True)
    statement = make_statement(
        info, simulator_version=simulator_version or _simulator_version(store, info),
        policy_code=policy_code or policy_code_digest(info.policy), invocation=invocation,
        end_of_run=invocation is not None)
    envelope = sign_statement(statement, signer)
    key = store.put(envelope.to_bytes())
    store.refs.set(attestation_ref(run), key)
    return Attestation(run, key, envelope, statement)


def _result_ref(store: Any, run: str) -> str | None:
    from emberbench.store import RefError

    try:
        return store.refs.get(f"{RESULT_REF_PREFIX}{run}")
    except RefError as exc:
        if exc.reason == "no such ref":
            return None
        raise


def _simulator_version(store: Any, info: RunInfo) -> str:
    """The simulator version in the run's manifest (the object keyed by its manifest hash)."""
    from ..io.input_policy import MANIFEST, parse_json

    where = f"manifest {info.manifest_hash}"
    try:
        document = parse_json(store.get(info.manifest_hash, verify_data=True), where=where,
                              max_values=MANIFEST.max_values)
    except ValueError as exc:
        raise StoreUsageError(f"run {info.run}: cannot read its manifest: {exc}") from None
    version = document.get("simulator_version") if isinstance(document, dict) else None
    if not isinstance(version, str):
        raise StoreUsageError(f"run {info.run}: {where} names no simulator_version")
    return version


# -- verifying -----------------------------------------------------------------------------------


def _seconds(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def _verified_keys(envelope: Envelope, keyring: Keyring) -> list[TrustedKey]:
    """The trusted keys whose signatures verify (in signature order); the first failure's reason if none."""
    message = envelope.signed_bytes()
    found: list[TrustedKey] = []
    reasons: list[tuple[str, str]] = []
    for n, sig in enumerate(envelope.signatures):
        hinted = keyring.get(sig.keyid) if sig.keyid else None
        candidates = [hinted] if hinted is not None else list(keyring.keys)
        key = next((k for k in candidates if signature_verifies(k.public_key, sig.sig, message)), None)
        if key is not None:
            if key not in found:
                found.append(key)
        elif len(sig.sig) != 64:
            reasons.append(("signature", f"signature {n} is {len(sig.sig)} bytes, not the 64 of an Ed25519 "
                                         "signature (truncated?)"))
        elif hinted is not None:
            reasons.append(("signature", f"the signature of key {hinted.describe()} does not verify: the "
                                         "statement was changed after signing, or another key signed it"))
        else:
            reasons.append(("key", f"signed by key {sig.keyid[:16] or '(no key id)'}, which is not in the keyring "
                                   "(no trusted key verifies the signature)"))
    if not found:
        check, reason = reasons[0]
        raise AttestationError(reason, check=check)
    return found


def verify_envelope(data: bytes, keyring: Keyring | None, *, where: str, now: str | None = None) -> Verified:
    """Steps 1-4 of the module docstring: envelope, signature, payload type and statement, signer validity.

    Raises:
        AttestationError: the first check that fails.
    """
    envelope = Envelope.from_bytes(data, where=where)
    signers = None if keyring is None else _verified_keys(envelope, keyring)
    if envelope.payload_type != ATTESTATION_PAYLOAD_TYPE:
        raise AttestationError(f"{where}: payloadType {envelope.payload_type!r:.80} is not supported (an "
                               f"attestation is {ATTESTATION_PAYLOAD_TYPE})", check="envelope")
    statement = parse_statement(envelope.payload, where=where)
    at = statement.predicate.attested.at
    if _seconds(at) > _seconds(now or utc_now()) + CLOCK_SKEW_SECONDS:
        raise AttestationError(f"{where}: the attestation says it was made at {at}, in the future",
                               check="statement")
    signer = None
    if signers is not None:
        valid = [k for k in signers if k.validity_problem(at) is None]
        if not valid:
            raise AttestationError(str(signers[0].validity_problem(at)), check="key")
        signer = valid[0]
    return Verified(statement, signer, envelope.signatures[0].keyid)


def verify_attestation(data: bytes, keyring: Keyring | None, *, result_digest: str, where: str,
                       run_info: RunInfo | None = None, manifest_hash: str | None = None,
                       model_id: str | None = None, now: str | None = None) -> Verified:
    """Verify attestation bytes against a result (and the run's run-info, when there is one).

    Args:
        data: the envelope's bytes.
        keyring: the trusted keys; None skips the signature (the result says so).
        result_digest: the SHA-256 of the result artifact it must be about.
        where: names the attestation in messages.
        run_info: the run's current run-info (from a store): every field the
            predicate carries must equal it.
        manifest_hash, model_id: without a run-info (an exported artifact),
            the predicate must name this manifest and model.
        now: the current time (tests); default the clock.

    Raises:
        AttestationError: one line, the first check that fails.
    """
    verified = verify_envelope(data, keyring, where=where, now=now)
    statement = verified.statement
    signed = statement.predicate.run_info
    if statement.subject_digest != result_digest:
        raise AttestationError(f"{where} is about result {statement.subject_digest}, not this result "
                               f"{result_digest}", check="subject")
    if signed.get("result") != result_digest:
        raise AttestationError(f"{where}: its run-info names result {signed.get('result')}, not its subject",
                               check="predicate")
    if run_info is not None:
        _same_run_info(signed, run_info, where)
    for name, value in (("manifest_hash", manifest_hash), ("model_id", model_id)):
        if value is not None and signed.get(name) != value:
            raise AttestationError(f"{where}: it signs {name} {signed.get(name)!r:.80}, the result has {value!r:.80}",
                                   check="predicate")
    return verified


def _same_run_info(signed: dict[str, Any], info: RunInfo, where: str) -> None:
    current = info.to_dict()
    for name in sorted(signed):
        if name in ("verification", "run_info_version"):
            continue
        if name not in current:
            raise AttestationError(f"{where}: the run-info has no field {name}, which the attestation signs",
                                   check="predicate")
        if current[name] != signed[name]:
            raise AttestationError(f"{where}: the run-info's {name} is {current[name]!r:.80}, the attestation "
                                   f"signs {signed[name]!r:.80} (the run-info was changed after signing)",
                                   check="predicate")


@dataclass(frozen=True, slots=True)
class RunAttestation:
    """The attestation state of a run: ``signed``, ``unchecked`` (no keyring) or ``unsigned``.

    Attributes:
        state: as above.
        key: the store key of the envelope (None when unsigned).
        verified: the verified attestation (None when unsigned).
    """

    state: str
    key: str | None
    verified: Verified | None

    def describe(self) -> str:
        """One line for ``runs verify``: ``signed by alice (key ...) at ...``, or ``unsigned``."""
        if self.verified is None:
            return "unsigned (the run has no attestation)"
        return self.verified.describe()


MAX_ATTESTATION_BYTES = 1 << 20


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def check_run_attestation(store: Any, run: str, keyring: Keyring | None, *, check_content: bool = True,
                          now: str | None = None) -> RunAttestation:
    """Verify the attestation of ``run`` in ``store``, if it has one (the call ``runs verify`` and audit share).

    Args:
        store: the store.
        run: the run's journal name.
        keyring: the trusted keys, or None (the signature is then not checked).
        check_content: also prove that the result object hashes to its key
            (read in pieces); a caller that has just done so passes False.
        now: the current time (tests).

    Returns:
        ``unsigned`` when the run has no ``attestations/`` ref; else the verified attestation.

    Raises:
        AttestationError: the attestation fails a check (one line).
        StoreIOError: the store cannot be read (not a verdict on the run).
    """
    from emberbench.store import IntegrityError, ObjectNotFoundError, ObjectTooLargeError, RefError

    from ..errors import RunInfoError

    ref = attestation_ref(run)
    try:
        key = store.refs.get(ref)
    except RefError as exc:
        if exc.reason == "no such ref":
            return RunAttestation("unsigned", None, None)
        raise AttestationError(f"ref {ref}: {exc}", check="envelope") from None
    where = f"attestation {key} ({ref})"
    try:
        data = store.get(key, verify_data=True, max_length=MAX_ATTESTATION_BYTES)  # one read, the cap from its header
    except ObjectTooLargeError:
        raise AttestationError(f"{where} is larger than {MAX_ATTESTATION_BYTES} bytes", check="envelope") from None
    except (IntegrityError, ObjectNotFoundError) as exc:
        raise AttestationError(f"{where}: {_line(exc)}", check="envelope") from None
    try:
        result = _result_ref(store, run)
        if result is not None and check_content:
            store.check(result, verify_data=True)
    except (IntegrityError, ObjectNotFoundError, RefError) as exc:
        raise AttestationError(f"{where}: the run's result fails its check: {_line(exc)}", check="subject") from None
    if result is None:
        raise AttestationError(f"{where}: run {run} has no stored result ({RESULT_REF_PREFIX}{run} is missing)",
                               check="subject")
    try:
        info = read_run_info(store, run)
    except (RunInfoError, IntegrityError, ObjectNotFoundError, RefError) as exc:
        raise AttestationError(f"{where}: the run-info cannot be read: {_line(exc)}", check="predicate") from None
    if info is None:
        raise AttestationError(f"{where}: run {run} has no run-info", check="predicate")
    verified = verify_attestation(data, keyring, result_digest=result, where=where, run_info=info, now=now)
    return RunAttestation("signed" if keyring is not None else "unchecked", key, verified)


def describe_stored_attestation(store: Any, run: str) -> str:
    """One line for ``runs show``: the attestation ref, its object, who it names and when (not verified)."""
    from emberbench.store import ObjectTooLargeError, RefError, StoreError

    ref = attestation_ref(run)
    try:
        key = store.refs.get(ref)
    except RefError as exc:
        return "none (unsigned)" if exc.reason == "no such ref" else f"{ref}: unreadable: {_line(exc)}"
    try:
        data = store.get(key, verify_data=True, max_length=MAX_ATTESTATION_BYTES)  # one read, the cap from its header
        verified = verify_envelope(data, None, where="attestation")
    except ObjectTooLargeError:
        return f"{ref} -> {key}: unreadable: larger than {MAX_ATTESTATION_BYTES} bytes"
    except (AttestationError, StoreError) as exc:
        return f"{ref} -> {key}: unreadable: {_line(exc)}"
    return (f"{ref} -> {key}, by key {verified.keyid[:16] or '(no key id)'} at "
            f"{verified.statement.predicate.attested.at} (`runs verify --keyring` checks it)")


ATTESTATION_FILE = InputKind("attestation", MAX_ATTESTATION_BYTES)


def read_attestation(path: Any) -> bytes:
    """The bytes of an attestation file (a DSSE envelope), read under the input policy.

    Raises:
        InputFileError: the file is missing, not a regular file, or over 1 MiB (its form is checked
            by :func:`verify_attestation`).
    """
    return read_input(path, ATTESTATION_FILE)


def export_attestation(store: Any, run: str, out: Any) -> str:
    """Write the stored attestation of ``run`` to ``out``, byte for byte, through the output policy.

    Returns:
        The envelope's store key.

    Raises:
        StoreUsageError: the run has no attestation.
    """
    from emberbench.store import RefError

    from ..io.atomic import atomic_write_bytes

    try:
        key = store.refs.get(attestation_ref(run))
    except RefError as exc:
        if exc.reason == "no such ref":
            raise StoreUsageError(f"run {run} has no attestation (it is unsigned)") from None
        raise
    atomic_write_bytes(out, store.iter_verified(key, verify_data=True))
    return key


__all__ = [
    "ATTESTATION_REF_PREFIX",
    "describe_stored_attestation",
    "export_attestation",
    "read_attestation",
    "Attestation",
    "RunAttestation",
    "Verified",
    "attest_run",
    "attestation_ref",
    "check_run_attestation",
    "make_statement",
    "sign_statement",
    "verify_attestation",
    "verify_envelope",
]
