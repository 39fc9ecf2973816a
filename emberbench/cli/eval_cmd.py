"""Evaluation commands: ``manifest build|show``, ``run``, ``verify``, ``pair``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..evaluation.executor_choice import ExecutorKind
from ._common import _is_store_error, manifest_and_suite, remember_suite_folder, suite_for_result, user_errors
from .args import (
    ForceOption,
    integer_in,
    parse_agent_timeout,
    parse_checkpoint_seconds,
    parse_count,
    parse_output_file,
    parse_scored_seed_count,
    refuse_existing,
    seed_list,
    variadic_command,
)
from .cluster_cmd import (
    AddressOption,
    GpusOption,
    ParallelWorkersOption,
    ResourcesOption,
    RuntimeEnvOption,
    WorkersOption,
)
from .episode_cmd import AgentLogOption, agent_log_dir
from .keys_cmd import KeyringOption, SigningKeyOption, keyring_from, signing_key_from
from .store_cmd import StoreOption
from .suite_cmd import SuiteOption

parse_width = integer_in(1, "emberbench.evaluation.drive:MAX_WIDTH")
"""Episodes a worker plays at once (--batch-size, --concurrency): in [1, 4096]."""


def register(app: typer.Typer) -> None:
    """Add the evaluation commands to ``app``."""
    manifest_app = typer.Typer(help="Build and inspect evaluation manifests.", no_args_is_help=True)
    manifest_app.command("build", cls=variadic_command("--seeds"),
                         context_settings={"allow_extra_args": True})(manifest_build)
    manifest_app.command("show")(manifest_show)
    app.add_typer(manifest_app, name="manifest")
    app.command("run")(run)
    app.command("verify")(verify)
    app.command("pair")(pair)


@user_errors
def manifest_build(
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Manifest file to write.")],
    seeds: Annotated[Optional[list[str]], typer.Option("--seeds", callback=seed_list, metavar="SEEDS...",
                                                       help="Seeds in order, each in [0, 2**64 - 1]: --seeds 0 1 2, "
                                                            "--seeds 0,1,2 or a range --seeds 0-99.")] = None,
    suite: SuiteOption = None,
    scenarios: Annotated[Optional[list[str]], typer.Option("--scenarios", help="Only these scenarios (comma-separated or repeated); suite order is kept.")] = None,
    families: Annotated[Optional[list[str]], typer.Option("--families", help="Only the scenarios of these families (comma-separated or repeated).")] = None,
    scored: Annotated[bool, typer.Option("--scored", help="Draw secret seeds from the operating system's randomness (a scored manifest); the seeds are not printed.")] = False,
    seed_count: Annotated[int, typer.Option("--seed-count", parser=parse_scored_seed_count, metavar="N", help="With --scored: how many seeds to draw, in [1, 10000].")] = 3,
    force: ForceOption = False,
) -> None:
    """Schedule every suite scenario (or a subset) under every seed (suite order, then seeds as given)."""
    from ..errors import ManifestError
    from ..results.manifest import build_manifest, draw_scored_seeds, select_scenarios, write_manifest
    from ..sim.suite import load_suite
    from .suite_cmd import parse_list

    refuse_existing(out, force=force)
    values = list(seeds or [])
    if scored and values:
        raise ManifestError("give either --seeds or --scored, not both")
    if not scored and not values:
        raise ManifestError("give the seeds (--seeds 0 1 2) or --scored")
    parsed = draw_scored_seeds(seed_count) if scored else values
    s = load_suite(suite)
    remember_suite_folder(s.id, s.version, s.hash, suite)  # later commands on this manifest find the suite without --suite
    subset = None
    if scenarios or families:
        subset = select_scenarios(s, parse_list(scenarios), parse_list(families))
    m = build_manifest(s, parsed, scenario_ids=subset)
    write_manifest(m, out)
    typer.echo(f"{out}: {len(m.episodes)} episodes, manifest hash {m.hash}"
               f"{' (scored: keep this file private until results are in)' if scored else ''}")


@user_errors
def manifest_show(path: Annotated[Path, typer.Argument(help="A manifest file.")]) -> None:
    """Print a manifest's header, hash and schedule."""
    from ..results.manifest import load_manifest

    m = load_manifest(path)
    typer.echo(f"manifest hash {m.hash}")
    typer.echo(f"suite {m.suite_id} {m.suite_version} ({m.suite_hash})")
    typer.echo(f"simulator {m.simulator_version}, observation {m.observation_version}, metrics {m.metrics_version}")
    typer.echo(f"{len(m.episodes)} episodes:")
    for e in m.episodes:
        typer.echo(f"  {e.index:>5}  {e.scenario_id}  seed={e.seed}")


@user_errors
def run(
    manifest: Annotated[Path, typer.Option("--manifest", help="Evaluation manifest file.")],
    policy: Annotated[str, typer.Option("--policy", help="Policy spec: built-in name, module:factory, entry-point name, cmd:<command> or openai:<model>.")],
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Result artifact to write or resume.")],
    model_id: Annotated[Optional[str], typer.Option("--model-id", help="Label for this model in the result (1-256 printable characters); default: the policy spec's name (greedy, mypolicy for ./mypolicy.py:make), printed.")] = None,
    no_resume: Annotated[bool, typer.Option("--no-resume", help="Start from nothing: refuse (never reuse) an existing artifact, or episodes of this run already journaled in the store.")] = False,
    agent_timeout: Annotated[float, typer.Option(parser=parse_agent_timeout, metavar="SECONDS", help="Seconds an external (cmd:) agent may take per step (at most a day).")] = 30.0,
    agent_log: AgentLogOption = None,
    store_dir: StoreOption = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Run without a store: rewrite the artifact after every episode.")] = False,
    checkpoint_every: Annotated[int, typer.Option(parser=parse_count, metavar="N", help="With a store: write the artifact every N episodes (0: off).")] = 0,
    checkpoint_seconds: Annotated[float, typer.Option(parser=parse_checkpoint_seconds, metavar="SECONDS", help="With a store: every T seconds update the run's record in the store, and rewrite the artifact while checkpoints stay within a quarter of its projected size (0: off; at most a day).")] = 60.0,
    executor: Annotated[Optional[ExecutorKind], typer.Option(
        "--executor", case_sensitive=False,
        help="local (in this process, no Ray) or ray (episode workers on Ray). Default: chosen by the work: "
             "Ray when the episodes left are estimated to take long enough in process for Ray's start-up to "
             "pay off (docs/cluster.md), else in process; --address, --workers or --runtime-env mean Ray.")] = None,
    workers: WorkersOption = None,
    address: AddressOption = None,
    runtime_env: RuntimeEnvOption = None,
    suite: SuiteOption = None,
    signing_key: SigningKeyOption = None,
    batch_size: Annotated[Optional[int], typer.Option(
        "--batch-size", parser=parse_width, metavar="B",
        help="Drive the policy's batch form: B episodes per worker in lockstep, one policy call per step for "
             "all of them, in [1, 4096]. Same records as without it.")] = None,  # noqa: UP007
    concurrency: Annotated[int, typer.Option(
        "--concurrency", parser=parse_width, metavar="N",
        help="Episodes in flight at once per worker, for policies that wait (served models, cmd: agents, "
             "async policies), in [1, 4096]. Same records as without it.")] = 1,
    gpus_per_worker: GpusOption = None,
    resources: ResourcesOption = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", metavar="TAG", help="Label the run in the store (repeatable): 1-64 letters, digits and ._:=+-; `runs ls --tag` finds it.")] = None,  # noqa: UP007
) -> None:
    """Run a policy on every episode of a manifest and write its result artifact.

    With a signing key (--signing-key, or $EMBERBENCH_SIGNING_KEY) and a
    store, the complete run's provenance is signed and stored beside it.
    """
    from ..errors import EmberError, EvaluationError
    from ..evaluation.executor_choice import choose_executor
    from ..policies.context import PolicyContext
    from ..policies.spec import resolve_policy
    from ..evaluation.runner import run_evaluation
    from .cluster_cmd import parse_runtime_env, resolve_address
    from .progress import progress_bar
    from .store_cmd import resolve_store_dir

    model_id = _model_id(model_id, policy)
    drive = _drive(batch_size, concurrency)
    signer = _signer(signing_key, no_store)
    tags = _tags(tag, no_store)
    m, s = manifest_and_suite(manifest, suite)
    log_dir = agent_log_dir(agent_log)
    store = None
    if not no_store:
        from ..evaluation.store_runner import open_store

        store = open_store(resolve_store_dir(store_dir))
    # A bad spec fails here. The store goes to policies that keep content in it (a served model's cache).
    factory = resolve_policy(policy, agent_timeout=agent_timeout, agent_log=log_dir,
                             context=PolicyContext(store=store))
    if drive.batch_size is not None:
        from ..policies.forms import batch_factory_of

        if batch_factory_of(factory) is None:
            raise typer.BadParameter(f"policy {policy!r} has no batch form (its factory declares no batch_factory, "
                                     "docs/model-interface.md); drop --batch-size, or use --concurrency for a "
                                     "policy that waits", param_hint="--batch-size")
    code = None
    if signer is not None:  # digested before the run: the code that runs, and a failure costs nothing
        from ..provenance import policy_code_digest

        code = policy_code_digest(policy)
    env = parse_runtime_env(runtime_env)
    common = {"resume": not no_resume, "store": store, "checkpoint_every": checkpoint_every,
              "checkpoint_seconds": checkpoint_seconds, "tags": tags}
    asked = _cluster_option(address, workers, env, gpus_per_worker, resources)
    if executor is ExecutorKind.LOCAL and (gpus_per_worker or resources):
        raise typer.BadParameter("worker resources are for Ray workers; drop --executor local",
                                 param_hint="--gpus-per-worker" if gpus_per_worker else "--resources")
    extra = _worker_resources(gpus_per_worker, resources)
    chosen: list[Any] = []
    try:
        with progress_bar(f"run {model_id}") as bar:
            if executor is None and asked is None:  # by the work: decided once resume has counted what is left
                opener = _by_the_work(s, policy, factory, store, agent_timeout, log_dir, bar, chosen, drive)
                summary = run_evaluation(m, s, factory, model_id, out, progress=bar, policy_spec=policy,
                                         executor_for=opener, **common)
            elif (choice := choose_executor(0, requested=executor, cluster_asked=asked)).kind is ExecutorKind.LOCAL:
                chosen.append(choice)
                summary = run_evaluation(m, s, factory, model_id, out, progress=bar, policy_spec=policy, drive=drive,
                                         **common)
            else:
                from emberbench.cluster import run_on_ray

                chosen.append(choice)
                bar.status("starting Ray…")
                summary = run_on_ray(m, s, policy, model_id, out, workers=workers, address=resolve_address(address),
                                     runtime_env=env, agent_timeout=agent_timeout,
                                     agent_log=log_dir, progress=bar, drive=drive, resources=extra, **common)
    except (EmberError, OSError):
        raise
    except Exception as exc:
        if _is_store_error(exc):
            raise  # a store fault is reported as itself (one line), never as the policy's
        # A policy's own exception stops the run (completed episodes are kept);
        # at the command line it is reported in one line, not as a traceback.
        from .verbosity import show_tracebacks

        if show_tracebacks():
            raise
        raise EvaluationError(
            f"the run stopped: the policy raised {type(exc).__name__}: {exc} "
            f"(completed episodes are kept in {out}; run `emberbench -v run ...` for the traceback)"
        ) from None
    typer.echo(summary.describe())
    typer.echo(chosen[0].describe())
    if chosen[0].kind is not ExecutorKind.LOCAL:  # in process, every episode is this machine's
        typer.echo(summary.describe_nodes())
    if summary.usage is not None:
        typer.echo(f"model usage of the episodes played now: {summary.usage.describe()}")
    if store is not None:
        from .store_cmd import refresh_catalog

        refresh_catalog(store)
        # A mistyped --store folder or prefix must not pass unnoticed (the default store is simply made). Said
        # after the run, so that a failed run still says one error line.
        if store.created and store_dir is not None:
            typer.echo(f"note: new empty store at {store.locator}")
    if signer is not None:
        _attest_run(store, m, model_id, signer, code, chosen, resolve_address(address))


def _model_id(option: str | None, policy: str) -> str:
    """``--model-id``, else the policy spec's name (printed, so that the label is never a surprise)."""
    if option is not None:
        return option
    from ..policies.spec import spec_name

    name = spec_name(policy)
    if name is None:
        raise typer.BadParameter(f"the policy spec {policy!r} gives no name to use as the model id; give --model-id",
                                 param_hint="--model-id")
    typer.echo(f"model id: {name} (the policy spec's name; --model-id chooses another)")
    return name


def _tags(given: list[str] | None, no_store: bool) -> tuple[str, ...]:
    """The run's tags, checked (a usage error otherwise); tags need a store (they live in its run-info)."""
    from ..errors import RunInfoError
    from ..evaluation.run_info import normalize_tags

    if not given:
        return ()
    if no_store:
        raise typer.BadParameter("tags are kept in the store's run-info; drop --no-store", param_hint="--tag")
    try:
        return normalize_tags(given)
    except RunInfoError as exc:
        raise typer.BadParameter(str(exc), param_hint="--tag") from None


def _signer(option: Path | None, no_store: bool) -> Any:
    """The run's signing key (None: unsigned); refused with --no-store (the attestation lives in the store)."""
    import os

    from .keys_cmd import SIGNING_KEY_ENV_VAR

    if no_store:
        if option is not None:
            raise typer.BadParameter("a signed run needs a store (its attestation is stored beside the run); "
                                     "drop --no-store", param_hint="--signing-key")
        if os.environ.get(SIGNING_KEY_ENV_VAR):
            typer.echo(f"note: ${SIGNING_KEY_ENV_VAR} is set but --no-store runs are not signed", err=True)
        return None
    return signing_key_from(option)


def _attest_run(store: Any, manifest: Any, model_id: str, signer: Any, code: Any, chosen: list[Any],
                address: str | None) -> None:
    """Sign the complete run and store its attestation; a failure says how to sign it later.

    The invocation names the machines that ran episodes: this one, unless a
    Ray cluster was joined (``address``), whose nodes are not known here.
    """
    import sys

    from emberbench.store import StoreError, journal_name

    from ..errors import EmberError, StoreUsageError
    from ..provenance import Invocation, attest_run, redact_command
    from ..provenance.statement import redact_text
    from ..evaluation.run_info import this_host

    ray = bool(chosen) and chosen[-1].kind is not ExecutorKind.LOCAL
    ray_address = address if ray else None
    invocation = Invocation(command=tuple(redact_command(["emberbench", *sys.argv[1:]])),
                            executor="ray" if ray else "local",
                            ray_address=None if ray_address is None else redact_text(ray_address),
                            nodes=None if ray and ray_address is not None else (this_host(),))
    run = journal_name(manifest.hash, model_id)
    try:
        made = attest_run(store, run, signer, policy_code=code, invocation=invocation,
                          simulator_version=manifest.simulator_version)
    except (EmberError, StoreError) as exc:
        raise StoreUsageError(f"the run is complete, but signing it failed: {exc}; `emberbench runs attest "
                              f"{run[4:12]}` signs it later") from None
    typer.echo(f"attestation: {made.key} signed by key {signer.keyid[:16]} (attestations/{run})")


def _cluster_option(address: str | None, workers: int | None, runtime_env: Any, gpus: float | None = None,
                    resources: dict[str, float] | None = None) -> str | None:
    """The first option that asks for Ray (``--address``, ``$RAY_ADDRESS``, ``--workers``, ``--runtime-env``,
    ``--gpus-per-worker``, ``--resources``)."""
    import os

    from .cluster_cmd import ADDRESS_ENV_VAR

    given = (("--address", address), (f"${ADDRESS_ENV_VAR}", os.environ.get(ADDRESS_ENV_VAR)),
             ("--workers", workers), ("--runtime-env", runtime_env), ("--gpus-per-worker", gpus),
             ("--resources", resources))
    return next((name for name, value in given if value), None)


def _drive(batch_size: int | None, concurrency: int) -> Any:
    """The run's driver options; both a batch size and a concurrency above 1 is a usage error."""
    from ..evaluation.drive import DriveOptions

    if batch_size is not None and concurrency > 1:
        raise typer.BadParameter("--batch-size drives a policy's batch form and --concurrency its per-episode "
                                 "form: give one of them", param_hint="--concurrency")
    return DriveOptions(batch_size=batch_size, concurrency=concurrency)


def _worker_resources(gpus: float | None, resources: dict[str, float] | None) -> Any:
    """The Ray workers' resources (None when neither option is given: Ray is not imported for them)."""
    if not gpus and not resources:
        return None
    from emberbench.cluster.resources import WorkerResources

    return WorkerResources.from_mapping(gpus or 0.0, resources)


def _by_the_work(suite: Any, policy: str, factory: Any, store: Any, agent_timeout: float, log_dir: str | None,
                 bar: Any, chosen: list[Any], drive: Any) -> Any:
    """The runner's ``executor_for`` without --executor: choose by the work left, note it, open it."""
    import contextlib

    from ..evaluation.executor_choice import choose_executor, estimate_seconds
    from ..evaluation.runner import InProcessExecutor

    def open_executor(pending: Any) -> Any:
        work = estimate_seconds(suite, pending, policy, concurrency=drive.concurrency)
        choice = choose_executor(len(pending), work_seconds=work)
        chosen.append(choice)
        if choice.kind is ExecutorKind.LOCAL:
            return contextlib.nullcontext(InProcessExecutor(suite, factory, store=store, spec=policy, drive=drive))
        bar.status("starting Ray…")
        from emberbench.cluster import ray_executor

        return ray_executor(suite, policy, store=store, agent_timeout=agent_timeout, agent_log=log_dir, drive=drive)

    return open_executor


PARTIAL_EXIT = 3
"""Exit status of ``verify`` for an authenticated but incomplete result (without ``--allow-partial``)."""


@user_errors
def verify(
    path: Annotated[Path, typer.Argument(help="A result artifact.")],
    allow_partial: Annotated[bool, typer.Option("--allow-partial", help=f"Exit 0 for an authenticated result that lacks episodes (default: exit {PARTIAL_EXIT}).")] = False,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    suite: SuiteOption = None,
    attestation: Annotated[Optional[Path], typer.Option("--attestation", metavar="FILE", help="Also verify this attestation of the result (a DSSE envelope, from `runs export --attestation`) against --keyring.")] = None,  # noqa: UP007
    keyring: KeyringOption = None,
) -> None:
    """Authenticate a result artifact completely (every record replayed); exit 0 only if it is also complete.

    With --attestation, the attestation must also be signed by a key of the
    keyring and be about this very artifact (its SHA-256, manifest and model).
    """
    from ..results.stream import verify_artifact
    from ..evaluation.run_sidecar import policy_note
    from .cluster_cmd import replay_on_ray, resolve_address

    envelope, trusted = None, None
    if attestation is not None:
        from ..provenance.attest import read_attestation

        trusted = keyring_from(keyring)
        if trusted is None:
            raise typer.BadParameter("--attestation needs the trusted keys: --keyring FILE or $EMBERBENCH_KEYRING",
                                     param_hint="--keyring")
        envelope = read_attestation(attestation)
    s = suite_for_result(suite, path)
    if not replay_on_ray(workers, address):
        r = verify_artifact(path, s)
    else:
        from emberbench.cluster import verify_on_ray

        r = verify_on_ray(path, s, workers=workers, address=resolve_address(address))
    signature = None
    if envelope is not None:
        from ..provenance import verify_attestation

        signature = verify_attestation(envelope, trusted, result_digest=r.digest, where=str(attestation),
                                       manifest_hash=r.manifest.hash, model_id=r.model_id).describe()
    done, scheduled = len(r.indices), len(r.manifest.episodes)
    note = policy_note(path, r.model_id, r.manifest.hash)  # from the run sidecar, where there is one
    facts = (f"{path}: model {r.model_id!r}{'' if note is None else ', ' + note}, {done}/{scheduled} episodes "
             f"authenticated, manifest {r.manifest.hash}, result digest {r.digest}")
    if signature is not None:
        facts += f"; {signature}"
    if done == scheduled:
        typer.echo(f"ok: {facts}")
        return
    typer.echo(f"partial: {done} of {scheduled} episodes: {facts}")
    if not allow_partial:
        raise typer.Exit(PARTIAL_EXIT)


@user_errors
def pair(
    a: Annotated[Path, typer.Argument(help="Result artifact A.")],
    b: Annotated[Path, typer.Argument(help="Result artifact B.")],
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Also write the pairing report (JSON) here.")] = None,
    force: ForceOption = False,
    suite: SuiteOption = None,
) -> None:
    """Pair two results on their shared manifest: paired and missing episodes."""
    from ..io.atomic import atomic_write_bytes
    from ..io.canonical import canonical_bytes
    from ..results.pairing import pair_artifacts

    refuse_existing(out, force=force)
    report = pair_artifacts(a, b, suite_for_result(suite, a))
    typer.echo(f"manifest {report.manifest_hash}: {report.model_a!r} vs {report.model_b!r}")
    typer.echo(f"scheduled {report.total_scheduled}, paired {report.paired_count}, "
               f"missing from A {len(report.missing_from_a)}, missing from B {len(report.missing_from_b)}")
    if out is not None:
        atomic_write_bytes(out, canonical_bytes(report.to_dict()) + b"\n")
        typer.echo(f"pairing report written to {out}")
