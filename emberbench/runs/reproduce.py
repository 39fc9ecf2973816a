"""What ``runs show`` prints so a run can be made again: the store, the manifest, the command, versions, code, signer.

Everything comes from the store: the run-info (model, policy, manifest,
suite, versions, tags), the manifest object (the run's journal references
it; its key is the manifest hash), and the run's attestation when it has
one, which alone knows the exact command line, the executor, the simulator
version and the policy code digest, and names its signer. Nothing here is
verified (``runs verify`` does that); an attestation that cannot be read is
said to be so.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..evaluation.run_info import RunInfo


def reproduction(store: Any, run: str, info: RunInfo | None) -> list[str]:
    """``name: value`` lines: store locator, manifest, how to run it again, versions, policy code, signer."""
    from emberbench.store import StoreError, StoreIOError

    lines = [f"store: {store.locator}"]
    if info is None:
        return lines
    try:
        present = store.has(info.manifest_hash)
    except StoreIOError:
        raise
    except StoreError:
        present = False
    where = shlex.quote(store.locator)
    lines.append(f"manifest: {info.manifest_hash} ("
                 + (f"`emberbench store cat {info.manifest_hash} --store {where} > manifest.json`"
                    if present else "not in the store") + ")")
    signed = _signed(store, run)
    command = ["emberbench", "run", "--manifest", "manifest.json", "--policy", info.policy, "--model-id",
               info.model_id, "--out", "result.json", "--store", store.locator]
    for tag in info.tags:
        command += ["--tag", tag]
    lines.append(f"reproduce: {shlex.join(command)}")
    if signed is None:
        lines.append("command: not recorded (the run is unsigned; `runs attest` records none either)")
    elif signed.get("command") is None:
        lines.append("command: not recorded (attested after the run)")
    else:
        lines.append(f"command: {shlex.join(signed['command'])} (signed; executor {signed['executor']})")
    versions = f"emberbench {info.emberbench_version}, python {info.python_version}, ray {info.ray_version or '-'}"
    if signed is not None:
        versions += f", simulator {signed['simulator_version']}"
    lines.append(f"versions: {versions}")
    if signed is None:
        lines.append("policy code: unknown (unsigned run)")
        lines.append("signer: none (unsigned)")
    elif "error" in signed:
        lines.append(f"policy code: unknown (attestation unreadable: {signed['error']})")
        lines.append("signer: unknown")
    else:
        lines.append(f"policy code: {signed['rule']} {signed['digest']} ({signed['files']} files)")
        lines.append(f"signer: key {signed['keyid']} at {signed['at']} by {signed['by']} "
                     "(not verified: `runs verify --keyring` checks it)")
    return lines


def _signed(store: Any, run: str) -> dict[str, Any] | None:
    """What the run's attestation says (unverified), None when the run is unsigned, {"error"} if unreadable."""
    from emberbench.store import ObjectTooLargeError, RefError, StoreError

    from ..errors import AttestationError
    from ..provenance.attest import MAX_ATTESTATION_BYTES, attestation_ref, verify_envelope

    try:
        key = store.refs.get(attestation_ref(run))
    except RefError as exc:
        return None if exc.reason == "no such ref" else {"error": exc.reason}
    try:
        data = store.get(key, verify_data=True, max_length=MAX_ATTESTATION_BYTES)  # one read, the cap from its header
        verified = verify_envelope(data, None, where="attestation")
    except ObjectTooLargeError:
        return {"error": "too large"}
    except (AttestationError, StoreError) as exc:
        return {"error": " ".join(str(exc).split())[:200]}
    predicate = verified.statement.predicate
    invocation = predicate.invocation
    return {"command": None if invocation is None else list(invocation.command),
            "executor": None if invocation is None else invocation.executor,
            "simulator_version": predicate.simulator_version, "rule": predicate.policy_code.rule,
            "digest": predicate.policy_code.digest, "files": predicate.policy_code.files,
            "keyid": verified.keyid[:16] or "(no key id)", "at": predicate.attested.at, "by": predicate.attested.by}


__all__ = ["reproduction"]
