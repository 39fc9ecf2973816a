#!/usr/bin/env python3
"""Cost of signing and verifying a run's attestation.

Measures, each as the median of ``--repeat`` timings (milliseconds):

* ``policy code digest``: hashing EMBERBench's own source (the rule of the
  built-in policies), the largest digest a built-in run makes;
* ``make statement``: building the statement of a run from its run-info
  (this process's versions, user, host and platform are looked up);
* ``sign``: serializing the statement and signing it (Ed25519 over the DSSE
  PAE), in memory;
* ``verify envelope``: decoding the envelope, checking the signature against
  a keyring of ``--keys`` keys, parsing the statement;
* ``attest``: ``attest_run`` on a store: read the run-info, check the result
  object against its key, digest the policy code, sign, put, set the ref;
* ``check``: ``check_run_attestation`` on a store, without re-hashing the
  result (what ``runs verify`` adds after its replay), and with it.

The run is a greedy run of ``--episodes`` episodes of the public suite, made
once before timing. With ``--s3`` the store is a prefix on a loopback S3
server it starts (moto's, from the test extra).

Usage: .venv/bin/python scripts/bench_attest.py [--episodes 20] [--repeat 21] [--keys 100] [--s3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(call: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``call`` in milliseconds."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def fixed_key(seed: int):  # noqa: ANN201 - a SigningKey
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from emberbench.provenance.keys import SigningKey, key_id

    private = Ed25519PrivateKey.from_private_bytes(bytes((seed + i) % 256 for i in range(32)))
    public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return SigningKey(key_id(public), public, private)


def bench(locator: str, args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    from emberbench.results.manifest import build_manifest
    from emberbench.provenance import attest_run, check_run_attestation, policy_code_digest
    from emberbench.provenance.attest import make_statement, sign_statement, verify_envelope
    from emberbench.provenance.keys import Keyring, TrustedKey
    from emberbench.evaluation.run_info import read_run_info
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.store import journal_name
    from emberbench.evaluation.store_runner import open_store
    from emberbench.sim.suite import load_suite

    suite = load_suite(None)
    seeds = list(range(max(1, args.episodes // len(suite.scenarios))))
    manifest = build_manifest(suite, seeds)
    store = open_store(locator)
    run_evaluation(manifest, suite, "greedy", "bench", tmp / "result.json", store=store)
    run = journal_name(manifest.hash, "bench")
    signer = fixed_key(0)
    keys = [signer] + [fixed_key(n) for n in range(1, args.keys)]
    ring = Keyring(tuple(sorted((TrustedKey(k.keyid, k.public_key, f"key {n}") for n, k in enumerate(keys)),
                                key=lambda k: k.keyid)))
    info = read_run_info(store, run)
    code = policy_code_digest("greedy")
    statement = make_statement(info, simulator_version=manifest.simulator_version, policy_code=code,
                               invocation=None, end_of_run=False)
    envelope = sign_statement(statement, signer).to_bytes()
    attest_run(store, run, signer)
    out = {
        "policy code digest": timed(lambda: policy_code_digest("greedy"), args.repeat),
        "make statement": timed(lambda: make_statement(
            info, simulator_version=manifest.simulator_version, policy_code=code, invocation=None,
            end_of_run=False), args.repeat),
        "sign": timed(lambda: sign_statement(statement, signer), args.repeat),
        "verify envelope": timed(lambda: verify_envelope(envelope, ring, where="bench"), args.repeat),
        "attest": timed(lambda: attest_run(store, run, signer), args.repeat),
        "check": timed(lambda: check_run_attestation(store, run, ring, check_content=False), args.repeat),
        "check with result hash": timed(lambda: check_run_attestation(store, run, ring), args.repeat),
    }
    out["envelope bytes"] = len(envelope)
    out["result bytes"] = store.size(info.result)
    out["episodes"] = len(manifest.episodes)
    store.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--keys", type=int, default=100, help="keys in the verifier's keyring")
    parser.add_argument("--s3", action="store_true", help="use a loopback S3 server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory(prefix="bench-attest-") as name:
        tmp = Path(name)
        locator = str(tmp / "store")
        if args.s3:
            from tests import s3server

            # The loopback server takes any credentials: never send real ones to it.
            os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
            os.environ.pop("AWS_SESSION_TOKEN", None)
            os.environ.pop("AWS_PROFILE", None)
            server = s3server.start()
            locator = f"s3://{s3server.BUCKET}/bench-attest?endpoint={server.endpoint}"
        try:
            results = bench(locator, args, tmp)
        finally:
            if server is not None:
                server.stop()
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return 0
    where = "S3 (loopback moto server)" if args.s3 else "local store"
    print(f"{where}; run of {results['episodes']} episodes, result {results['result bytes']} bytes, envelope "
          f"{results['envelope bytes']} bytes, keyring of {args.keys} keys; median of {args.repeat} (ms):")
    for name in ("policy code digest", "make statement", "sign", "verify envelope", "attest", "check", "check with result hash"):
        print(f"  {name:24} {results[name]:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
