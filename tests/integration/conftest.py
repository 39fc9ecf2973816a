"""Fixtures of the integration tests: the one Ray session, reference runs, helpers for Ray subprocesses.

``ray_cluster`` starts ONE embedded Ray instance (2 CPUs, loopback, token
authentication with a token file made for the test session) and every ``ray``
test shares it. Tests that need their own cluster (several nodes, a job
server) start it in a subprocess with the same token, and stop it by pid.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_WORKERS = 2


@pytest.fixture(scope="session")
def ray_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh Ray token for this test session, exported to this process and its children."""
    path = tmp_path_factory.mktemp("ray-auth") / "auth_token"
    path.write_text(secrets.token_hex(32))
    path.chmod(0o600)
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    os.environ.pop("RAY_AUTH_TOKEN", None)
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN_PATH"] = str(path)
    yield path
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def ray_cluster(ray_token: Path) -> Iterator[object]:
    """The shared embedded Ray session (2 CPUs); yields its :class:`cluster.ClusterInfo`."""
    from emberbench.cluster import ray_session

    # Workers import test policies as ``tests.integration.cluster_policies``.
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}}
    with ray_session(workers=CLUSTER_WORKERS, runtime_env=runtime_env) as info:
        yield info


@pytest.fixture(scope="session")
def dev_manifest(suite):
    """Every public scenario under seeds 0..4 (60 episodes)."""
    from emberbench.results.manifest import build_manifest

    return build_manifest(suite, [0, 1, 2, 3, 4])


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory, suite, dev_manifest):
    """``reference(policy, model_id)``: the in-process executor's artifact bytes on the dev manifest (cached)."""
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store

    base = tmp_path_factory.mktemp("reference")
    cache: dict[tuple[str, str], bytes] = {}

    def get(policy: str, model_id: str) -> bytes:
        if (policy, model_id) not in cache:
            out = base / f"{len(cache)}.json"
            run_evaluation(dev_manifest, suite, policy, model_id, out, store=open_store(base / "store"))
            cache[policy, model_id] = out.read_bytes()
        return cache[policy, model_id]

    return get


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def subprocess_env() -> dict[str, str]:
    """The environment for Ray subprocesses: this venv first, the project importable, same token."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("RAY_ADDRESS", None)
    # Keep every node on 127.0.0.1: on Linux Ray would otherwise swap a loopback
    # node address for the machine's routable one (see cluster/session.py).
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    return env
