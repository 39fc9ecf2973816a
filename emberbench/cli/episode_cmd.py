"""``emberbench episode`` (play one episode) and ``emberbench replay`` (authenticate a record)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import KNOWN_SUITES_FILE, policy_exceptions_in_one_line, suite_for_input, user_errors
from .args import ForceOption, parse_agent_timeout, parse_output_file, parse_seed, refuse_existing
from .suite_cmd import SuiteOption

AgentLogOption = Annotated[
    Optional[Path],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option("--agent-log", file_okay=False, help=(
        "Save each episode's stderr of an external (cmd:) agent in DIR, one file per episode named "
        "SCENARIO.seed-SEED.stderr.log (created if missing; on a Ray cluster, a folder every node reaches "
        "at the same path).")),
]


def agent_log_dir(path: Path | None) -> str | None:
    """``--agent-log`` as an absolute path (Ray workers may run in another working directory)."""
    return None if path is None else str(path.absolute())


def register(app: typer.Typer) -> None:
    """Add ``episode`` and ``replay`` to ``app``."""
    app.command("episode")(episode)
    app.command("replay")(replay)


@user_errors
def episode(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id from the suite.")],
    seed: Annotated[Optional[int], typer.Option(parser=parse_seed, metavar="SEED",
                                                help="Episode seed in [0, 2**64 - 1]; default: the scenario's development seed.")] = None,
    policy: Annotated[str, typer.Option(help="Policy spec: stay, greedy, fire-aware, random, module:factory, cmd:...")] = "greedy",
    record: Annotated[Optional[Path], typer.Option(parser=parse_output_file, metavar="FILE",
                                                   help="Write the run record (canonical JSON) to this file.")] = None,
    force: ForceOption = False,
    agent_timeout: Annotated[float, typer.Option(parser=parse_agent_timeout, metavar="SECONDS",
                                                 help="Seconds an external (cmd:) agent may take per step (at most a day).")] = 30.0,
    render: Annotated[bool, typer.Option("--render", help="Then play the authenticated episode as text, frame by frame.")] = False,
    agent_log: AgentLogOption = None,
    suite: SuiteOption = None,
) -> None:
    """Play one episode and print its outcome."""
    from ..io.atomic import atomic_write_bytes
    from ..records.episode import play_episode
    from ..policies.spec import closing, resolve_policy
    from ..sim.known_suites import suite_with_scenario
    from ..sim.suite import load_suite

    refuse_existing(record, force=force)
    s = load_suite(suite) if suite is not None else suite_with_scenario(scenario_id, known=KNOWN_SUITES_FILE)
    s = s if s is not None else load_suite()  # no suite has it: the public suite's error names the scenario
    sc = s.scenario(scenario_id)
    the_seed = sc.seed if seed is None else seed
    factory = resolve_policy(policy, agent_timeout=agent_timeout, agent_log=agent_log_dir(agent_log))
    with policy_exceptions_in_one_line(f"{sc.id} seed {the_seed}"), closing(factory()) as the_policy:
        rec, metrics = play_episode(sc, the_seed, the_policy)
    c = metrics.counts_dict()
    typer.echo(
        f"{sc.id} seed={the_seed} policy={policy}: evacuated={c['evacuated']} casualties={c['casualties']} "
        f"stranded={c['stranded']} steps={c['steps']} termination={metrics.termination}"
    )
    if record is not None:
        atomic_write_bytes(record, rec.canonical_bytes() + b"\n")
        typer.echo(f"record written to {record}")
        typer.echo(f"  sha256 {rec.digest()}")
    if render:
        from ..viewer.terminal import render_record

        render_record(rec, s)


@user_errors
def replay(
    path: Annotated[Path, typer.Argument(help="A run record file written by `emberbench episode --record`.")],
    suite: SuiteOption = None,
) -> None:
    """Authenticate a run record by replay and print its metrics as JSON."""
    from ..io.canonical import canonical_json
    from ..records.episode import authenticate_file

    metrics = authenticate_file(path, suite_for_input(suite, path))
    typer.echo(canonical_json(metrics.to_dict()))
