"""The three roles of docs/examples/iam, enforced by the S3 test server: each does its job and is refused the rest.

A moto server of its own is started without authentication, the store is
filled (two complete runs, a catalog index, one unreferenced object) and the
IAM users are made with the policies exactly as documented (BUCKET and
PREFIX filled in); then moto's ``/moto-api/reset-auth`` turns on
authentication and authorization for every later request. Each command runs
as a separate process with the role's access key, as a person would run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

from tests import s3server

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "docs" / "examples" / "iam"
ROLES = ("auditor", "evaluator", "maintainer")
PREFIX = "team"


@pytest.fixture(scope="module")
def enforced(tmp_path_factory, suite):  # noqa: ANN001
    """``(locator, keys, runs, folder)``: a filled store on a server that now enforces the roles' policies."""
    import boto3

    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.runs.index import reindex
    from tests.run_support import small_manifest

    try:
        server = s3server.start()
    except RuntimeError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no S3 test server: {exc}")
        pytest.skip(f"no S3 test server: {exc}")
    folder = tmp_path_factory.mktemp("roles")
    try:
        locator = f"s3://{s3server.BUCKET}/{PREFIX}?endpoint={server.endpoint}"
        st = open_store(locator)
        manifest = small_manifest(suite, seeds=(3,))
        (folder / "m.json").write_bytes(manifest.canonical_bytes())
        for policy in ("greedy", "random"):
            run_evaluation(manifest, suite, policy, policy, folder / f"{policy}.json", store=st)
        st.put(b"an object nothing references")
        runs = sorted(st.journal_names())
        reindex(st)
        st.close()  # releases its writer lease: gc below must not wait for this process
        iam = boto3.client("iam", endpoint_url=server.endpoint, region_name="us-east-1")
        keys = {}
        for role in ROLES:
            iam.create_user(UserName=role)
            document = (POLICIES / f"{role}.json").read_text().replace("BUCKET", s3server.BUCKET) \
                .replace("PREFIX", PREFIX)
            iam.put_user_policy(UserName=role, PolicyName=f"emberbench-{role}", PolicyDocument=document)
            made = iam.create_access_key(UserName=role)["AccessKey"]
            keys[role] = (made["AccessKeyId"], made["SecretAccessKey"])
        request = urllib.request.Request(f"{server.endpoint}/moto-api/reset-auth", data=b"0", method="POST",
                                         headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert json.loads(reply.read())["status"] == "ok"
        yield locator, keys, runs, folder
    finally:
        server.stop()


def emberbench(enforced, role: str, *args: object) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    """Run the CLI as ``role`` (its access key, nothing else) in a new process."""
    _, keys, _, folder = enforced
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=keys[role][0], AWS_SECRET_ACCESS_KEY=keys[role][1], AWS_DEFAULT_REGION="us-east-1")
    return subprocess.run([sys.executable, "-m", "emberbench", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=folder, timeout=300)


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a refused command (exit 1, no traceback), which must name the denial."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "AccessDenied" in errors[0] and "may not" in errors[0], errors[0]
    return errors[0]


def test_the_server_enforces_credentials(enforced) -> None:  # noqa: ANN001
    """Without a known access key nothing is answered: the policies below are really in force."""
    import boto3

    locator, keys, _, _ = enforced
    endpoint = locator.split("endpoint=")[1]
    stranger = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="AKIANOBODY",
                            aws_secret_access_key="x")
    with pytest.raises(stranger.exceptions.ClientError):
        stranger.list_objects_v2(Bucket=s3server.BUCKET, Prefix=PREFIX)


def test_auditor_reads_everything_and_writes_nothing(enforced) -> None:  # noqa: ANN001
    """The auditor lists, shows, verifies (not recorded), audits, checks and exports; running or deleting is refused."""
    locator, _, runs, folder = enforced
    run = runs[0][4:12]
    listing = emberbench(enforced, "auditor", "runs", "ls", "--store", locator)
    assert listing.returncode == 0 and "greedy" in listing.stdout and "random" in listing.stdout, listing.stderr
    shown = emberbench(enforced, "auditor", "runs", "show", run, "--store", locator)
    assert shown.returncode == 0 and "reproduce: emberbench run" in shown.stdout, shown.stderr
    verified = emberbench(enforced, "auditor", "runs", "verify", run, "--store", locator)
    assert verified.returncode == 0, verified.stderr
    assert "(not recorded: the store is read-only)" in verified.stdout
    assert "is read-only (PutObject denied (AccessDenied))" in verified.stderr
    for command in (("store", "audit"), ("store", "fsck", "--connectivity"), ("store", "log"), ("store", "info")):
        done = emberbench(enforced, "auditor", *command, "--store", locator)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    info = emberbench(enforced, "auditor", "store", "info", "--store", locator).stdout
    assert "access: read-only (PutObject denied (AccessDenied))" in info
    exported = emberbench(enforced, "auditor", "runs", "export", run, "--out", folder / "a.json", "--store", locator)
    assert exported.returncode == 0 and (folder / "a.json").exists(), exported.stderr
    refused(emberbench(enforced, "auditor", "run", "--manifest", "m.json", "--policy", "greedy", "--model-id",
                       "auditor-run", "--out", "x.json", "--store", locator, "--executor", "local"))
    refused(emberbench(enforced, "auditor", "store", "rm-run", run, "--apply", "--store", locator))
    refused(emberbench(enforced, "auditor", "store", "gc", "--grace", "0", "--apply", "--store", locator))


def test_evaluator_adds_runs_and_never_deletes(enforced) -> None:  # noqa: ANN001
    """The evaluator runs and records verdicts; deleting a run, collecting garbage or an object is refused."""
    import boto3

    locator, keys, runs, folder = enforced
    ran = emberbench(enforced, "evaluator", "run", "--manifest", "m.json", "--policy", "fire-aware", "--model-id",
                     "evaluator-run", "--out", "e.json", "--store", locator, "--executor", "local", "--tag", "role")
    assert ran.returncode == 0, ran.stderr
    listed = emberbench(enforced, "evaluator", "runs", "ls", "--tag", "role", "--store", locator)
    assert listed.returncode == 0 and "evaluator-run" in listed.stdout and "note:" not in listed.stderr
    verified = emberbench(enforced, "evaluator", "runs", "verify", runs[0][4:12], "--store", locator)
    assert verified.returncode == 0 and "(recorded)" in verified.stdout, verified.stderr
    refused(emberbench(enforced, "evaluator", "store", "rm-run", runs[1][4:12], "--apply", "--store", locator))
    refused(emberbench(enforced, "evaluator", "store", "gc", "--grace", "0", "--apply", "--store", locator))
    still = emberbench(enforced, "evaluator", "runs", "ls", "--store", locator)
    assert still.returncode == 0 and runs[1][4:12] in still.stdout
    endpoint = locator.split("endpoint=")[1]
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=keys["evaluator"][0],
                          aws_secret_access_key=keys["evaluator"][1])
    first = client.list_objects_v2(Bucket=s3server.BUCKET, Prefix=f"{PREFIX}/reflog/")["Contents"][0]["Key"]
    with pytest.raises(client.exceptions.ClientError, match="AccessDenied"):
        client.delete_object(Bucket=s3server.BUCKET, Key=first)


def test_maintainer_collects_garbage_and_removes_runs(enforced) -> None:  # noqa: ANN001
    """The maintainer's gc deletes unreferenced objects and rm-run deletes a run; the ref log records it."""
    locator, _, runs, _ = enforced
    gc = emberbench(enforced, "maintainer", "store", "gc", "--grace", "0", "--apply", "--store", locator)
    assert gc.returncode == 0 and " unreferenced within the 0 s grace period, " in gc.stdout and "\ndeleted " in gc.stdout, gc.stderr
    assert "; deleted 0 " not in gc.stdout  # the unreferenced object at least (and superseded run-infos)
    removed = emberbench(enforced, "maintainer", "store", "rm-run", runs[1][4:12], "--apply", "--store", locator)
    assert removed.returncode == 0 and "deleted journal" in removed.stdout, removed.stderr
    history = emberbench(enforced, "maintainer", "store", "log", f"results/{runs[1]}", "--store", locator)
    assert history.returncode == 0 and history.stdout.splitlines()[-1].endswith("-> deleted"), history.stdout
    listing = emberbench(enforced, "auditor", "runs", "ls", "--store", locator)
    assert listing.returncode == 0 and runs[1][4:12] not in listing.stdout
