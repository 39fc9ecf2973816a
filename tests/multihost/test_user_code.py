"""A user's own policy on the cluster: code in the user's folder on the client host, installed on no worker host,
shipped to the workers by Ray's runtime environment (``--runtime-env '{"working_dir": "."}'``).

The folder ``user_code`` beside this file plays the user's folder: a Python
package ``team_policies`` (``team_policies.cautious:make``) and an external
agent script ``agent.py`` (``cmd:python3 agent.py``, called by a path
relative to the working folder). Both runs must give the artifact the same
policy gives in this process.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from emberbench.results.manifest import build_manifest
from emberbench.evaluation.runner import run_evaluation

from .support import client_file, put_manifest, run_argv, sha256

pytestmark = pytest.mark.multihost
USER_CODE = Path(__file__).parent / "user_code"
SHIP = ["--runtime-env", '{"working_dir": "."}']
POLICIES = [("team_policies.cautious:make", "cautious"), ("cmd:python3 agent.py", "agent")]


@pytest.fixture(scope="module")
def small(suite):  # noqa: ANN001
    return build_manifest(suite, [0, 1])


@pytest.fixture(scope="module")
def references(suite, small, tmp_path_factory) -> dict[str, bytes]:  # noqa: ANN001
    """Each user policy's artifact in this process, run from a copy of the user's folder."""
    base = tmp_path_factory.mktemp("user")
    shutil.copytree(USER_CODE, base, dirs_exist_ok=True)
    out: dict[str, bytes] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(base)
        mp.syspath_prepend(str(base))
        for spec, model in POLICIES:
            run_evaluation(small, suite, spec, model, base / f"{model}.json")
            out[model] = (base / f"{model}.json").read_bytes()
        sys.modules.pop("team_policies.cautious", None)
        sys.modules.pop("team_policies", None)
    return out


@pytest.mark.multihost(seconds=120)
def test_a_policy_installed_on_no_worker_is_shipped_by_the_runtime_env(rig, small, references):
    """The user's module and agent script exist only in the client's folder; with ``working_dir`` every
    worker host gets them, and both runs match the in-process artifacts byte for byte."""
    shutil.copytree(USER_CODE, client_file(rig, "/srv"), dirs_exist_ok=True)
    path = put_manifest(rig, small, "/srv/m24.json")
    for host in rig.workers:  # not there: no file, and no module to import
        assert not rig.host_path(host, "/srv/team_policies").exists()
        probe = rig.run(host, ["python", "-c", "import team_policies"], timeout=60)
        assert probe.returncode == 1 and "No module named 'team_policies'" in probe.stderr
    for spec, model in POLICIES:
        # The driver resolves the spec too: the module from the current folder, as on one machine.
        proc = rig.run("client", run_argv(rig, f"/srv/{model}.json", "user", *SHIP, policy=spec, model_id=model,
                                          manifest=path), env={"PYTHONPATH": "."}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert sha256(client_file(rig, f"/srv/{model}.json").read_bytes()) == sha256(references[model])
        workers = {f"{rig.config.prefix}-{h}" for h in rig.workers}
        played = next((line for line in proc.stdout.splitlines() if line.startswith("nodes: ")), "")
        assert all(name in played for name in workers), proc.stdout
