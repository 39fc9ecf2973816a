"""``emberbench suite ...``: list, show, validate, diff, generate, calibrate, commit, reveal, check-commitment.

A suite argument is a suite folder, its ``suite.json``, or the id of a suite
shipped with EMBERBench (``emberbench-v1-public``, ``emberbench-v1-generated``).
Commands that can use Ray (``calibrate``, and ``generate`` with tiers) do so
only when ``--workers`` or ``--address`` is given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ._common import fail, remember_suite_folder, user_errors
from .args import parse_output_file, parse_positive, parse_seed, parse_suite_count, refuse_existing, seed_list
from .cluster_cmd import AddressOption

SuiteOption = Annotated[
    Optional[Path],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option("--suite", help="Suite folder (or its suite.json), or a shipped suite id; default: the public suite."),
]
SuiteArgument = Annotated[str, typer.Argument(help="Suite folder (or its suite.json), or a shipped suite id.")]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing output.")]
WorkersOption = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--workers", parser=parse_positive, metavar="N",
                 help="Play the calibration episodes on N Ray workers; without it or --address, in process."),
]


class Tier(str, Enum):
    """Difficulty tiers of calibration rule 1.0."""

    easy = "easy"
    medium = "medium"
    hard = "hard"
    extreme = "extreme"


def register(app: typer.Typer) -> None:
    """Add the ``suite`` command group to ``app``."""
    suite_app = typer.Typer(help="List, inspect, validate, generate and commit to scenario suites.",
                            no_args_is_help=True)
    for name, func in (("list", suite_list), ("show", suite_show), ("validate", suite_validate),
                       ("diff", suite_diff), ("generate", suite_generate), ("calibrate", suite_calibrate),
                       ("commit", suite_commit), ("reveal", suite_reveal), ("check-commitment", check_commitment)):
        suite_app.command(name)(func)
    app.add_typer(suite_app, name="suite")


def parse_list(values: list[str] | None) -> list[str]:
    """Values given as repeated options and/or comma-separated lists, in order, blanks dropped."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def check_new_file(path: Path, force: bool) -> None:
    """Refuse to overwrite an existing output file unless ``--force`` (:func:`.args.refuse_existing`)."""
    refuse_existing(path, force=force)


@contextlib.contextmanager
def mapper_for(workers: int | None, address: str | None) -> Iterator[Any]:
    """A Ray mapper when ``--workers`` or ``--address`` asks for Ray, else None (in process)."""
    from .cluster_cmd import replay_on_ray, resolve_address

    if not replay_on_ray(workers, address):
        yield None
        return
    from emberbench.cluster import ray_mapper

    with ray_mapper(resolve_address(address), workers=workers) as mapper:
        yield mapper


LINE_WIDTH = 80
SHORT_HASH = 12
"""Hex digits of a scenario's content hash in `suite list` (`suite show` prints all 64)."""


@user_errors
def suite_list(suite: SuiteOption = None) -> None:
    """List the suite's scenarios: id, content hash (first 12 digits) and families, within 80 columns."""
    import textwrap

    from ..sim.suite import load_suite

    s = load_suite(suite)
    typer.echo(f"{s.id} {s.version}, {len(s.scenarios)} scenarios")
    typer.echo(f"  suite hash {s.hash}")
    width = max([len("SCENARIO"), *(len(sc.id) for sc in s.scenarios)])
    indent = width + 2 + SHORT_HASH + 2
    typer.echo(f"{'SCENARIO':<{width}}  {'HASH':<{SHORT_HASH}}  FAMILIES")
    for sc in s.scenarios:
        lead = f"{sc.id:<{width}}  {sc.content_hash[:SHORT_HASH]}  "
        families = ", ".join(s.families_of(sc.id)) or "-"
        under = indent
        if indent > LINE_WIDTH - 24:  # very long ids: the families go on lines of their own
            typer.echo(lead.rstrip())
            lead, under = "    ", 4
        for line in textwrap.wrap(families, LINE_WIDTH, initial_indent=lead, subsequent_indent=" " * under,
                                  break_long_words=False, break_on_hyphens=False):
            typer.echo(line)


@user_errors
def suite_show(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. v1-pub-01-single-exit-sparse.")],
    suite: SuiteOption = None,
    render: Annotated[bool, typer.Option("--render", help="Draw the map with rulers, colours and a legend.")] = False,
) -> None:
    """Show one scenario: its map (people P, exits E, fire *) and parameters; any shipped suite is searched."""
    from ..viewer.scenario_render import plain_rows
    from ..generate.suite_tools import locate_scenario

    s, sc = locate_scenario(scenario_id, suite)
    typer.echo(f"{sc.id}: {sc.description}")
    typer.echo(f"  size {sc.height}x{sc.width}, people {sc.population}, max_steps {sc.max_steps}, "
               f"spread {sc.spread_numerator}/{sc.spread_denominator}"
               f"{' (deterministic)' if sc.deterministic_fire else ''}, dev seed {sc.seed}")
    typer.echo(f"  exits: {', '.join(f'{e.id}@({e.row},{e.col})' for e in sc.exits)}")
    typer.echo(f"  families: {', '.join(s.families_of(sc.id)) or '-'}")
    typer.echo(f"  content hash {sc.content_hash}")
    if render:
        from rich.console import Console

        from ..viewer.scenario_render import render as draw

        console = Console(highlight=False, soft_wrap=True)
        console.print(f"  suite {s.id} {s.version}", style="dim")
        for line in draw(sc):
            console.print(line)
        return
    for row in plain_rows(sc):
        typer.echo("  " + row)


@user_errors
def suite_validate(suite: SuiteArgument) -> None:
    """Check every rule of a suite folder and list every problem found (exit 1 if any)."""
    from ..generate.suite_tools import validate_suite_folder

    report = validate_suite_folder(suite)
    for line in report.problems:
        typer.echo(f"problem  {line}")
    for line in report.notes:
        typer.echo(f"note     {line}")
    if not report.ok:
        raise fail(f"{report.folder}: {len(report.problems)} problem(s) found (listed above)")
    assert report.suite is not None
    typer.echo(f"ok: {report.suite.id} {report.suite.version}, {len(report.suite.scenarios)} scenarios, "
               f"suite hash {report.suite.hash}")


@user_errors
def suite_diff(a: SuiteArgument, b: Annotated[str, typer.Argument(help="The suite to compare with A.")]) -> None:
    """Scenarios added, removed and changed (by content hash) from suite A to suite B, and changed families."""
    from ..sim.suite import load_suite
    from ..generate.suite_tools import diff_suites

    sa, sb = load_suite(a), load_suite(b)
    d = diff_suites(sa, sb)
    typer.echo(f"A: {sa.id} {sa.version} ({sa.hash})")
    typer.echo(f"B: {sb.id} {sb.version} ({sb.hash})")
    for sid, digest in d.added:
        typer.echo(f"+ {sid}  {digest}")
    for sid, digest in d.removed:
        typer.echo(f"- {sid}  {digest}")
    for sid, old, new in d.changed:
        typer.echo(f"~ {sid}  {old} -> {new}")
    for fid in d.families:
        typer.echo(f"family {fid} differs")
    typer.echo(f"{len(d.added)} added, {len(d.removed)} removed, {len(d.changed)} changed, {d.unchanged} unchanged"
               f"{'; shared scenarios are in another order' if d.reordered else ''}")


@user_errors
def suite_generate(
    recipe: Annotated[str, typer.Option("--recipe", help="A shipped recipe (dev, standard, large) or a recipe file.")],
    count: Annotated[int, typer.Option("--count", parser=parse_suite_count, metavar="N", help="Scenarios in the suite, in [1, 10000].")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the suite into (new or empty).")],
    seed: Annotated[Optional[int], typer.Option("--seed", parser=parse_seed, metavar="SEED", help="The suite seed, in [0, 2**64 - 1]; written in the suite's description.")] = None,  # noqa: UP007
    secret_seed_file: Annotated[Optional[Path], typer.Option("--secret-seed-file", help="Read the seed from this file and write it nowhere (a held-out suite).")] = None,  # noqa: UP007
    force: ForceOption = False,
    suite_id: Annotated[Optional[str], typer.Option("--suite-id", help="Suite id (default: generated-RECIPE).")] = None,  # noqa: UP007
    suite_version: Annotated[str, typer.Option("--suite-version", help="Suite version, MAJOR.MINOR.PATCH.")] = "1.0.0",
    min_tier: Annotated[Optional[Tier], typer.Option("--min-tier", help="Keep only scenarios at least this difficult.")] = None,  # noqa: UP007
    max_tier: Annotated[Optional[Tier], typer.Option("--max-tier", help="Keep only scenarios at most this difficult.")] = None,  # noqa: UP007
    calibration_seeds: Annotated[Optional[list[str]], typer.Option("--calibration-seeds", callback=seed_list, metavar="SEEDS", help="Seeds the tiers are measured with, distinct, each in [0, 2**64 - 1]: 0,1,2 (the default) or a range 0-9.")] = None,  # noqa: UP007
    workers: WorkersOption = None,
    address: AddressOption = None,
) -> None:
    """Generate a complete, valid suite from a recipe (byte-identical for the same recipe, count and seed)."""
    from ..generate.calibrate import DEFAULT_SEEDS
    from ..generate.commands import generate_into
    from .progress import progress_bar

    cal_seeds = DEFAULT_SEEDS if calibration_seeds is None else calibration_seeds  # parsed: seed_list
    tiered = min_tier is not None or max_tier is not None  # only a tier filter plays episodes
    runner = mapper_for(workers, address) if tiered else contextlib.nullcontext(None)
    with runner as mapper, progress_bar("generate", unit="scenarios") as bar:
        s = generate_into(recipe, count, out, seed=seed, secret_seed_file=secret_seed_file, force=force,
                          suite_id=suite_id, suite_version=suite_version,
                          min_tier=None if min_tier is None else min_tier.value,
                          max_tier=None if max_tier is None else max_tier.value,
                          calibration_seeds=cal_seeds, mapper=mapper, progress=bar)
    remember_suite_folder(s.manifest["suite_id"], s.manifest["suite_version"], s.hash, out)  # manifests of this suite find it without --suite
    typer.echo(f"{out}: {len(s.scenarios)} scenarios of suite {s.manifest['suite_id']} "
               f"{s.manifest['suite_version']}, suite hash {s.hash}"
               f"{' (the seed is secret and was written nowhere)' if secret_seed_file is not None else ''}")


@user_errors
def suite_calibrate(
    suite: SuiteArgument,
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Calibration file to write.")],
    seeds: Annotated[Optional[list[str]], typer.Option("--seeds", callback=seed_list, metavar="SEEDS", help="Calibration seeds, distinct, each in [0, 2**64 - 1]: 0,1,2 (the default) or a range 0-9.")] = None,  # noqa: UP007
    force: ForceOption = False,
    workers: WorkersOption = None,
    address: AddressOption = None,
) -> None:
    """Play the stay, greedy and fire-aware baselines on every scenario; write their outcomes and a difficulty tier."""
    from ..generate.calibrate import DEFAULT_SEEDS, calibrate_suite, family_rates, write_calibration
    from ..sim.suite import load_suite

    check_new_file(out, force)
    s = load_suite(suite)
    the_seeds = DEFAULT_SEEDS if seeds is None else seeds  # parsed: seed_list
    with mapper_for(workers, address) as mapper:
        calibration = calibrate_suite(s, the_seeds, mapper=mapper)
    write_calibration(calibration, out)
    tiers = calibration.tiers()
    typer.echo(f"{out}: {len(tiers)} scenarios of {s.id} {s.version} under seeds "
               f"{','.join(map(str, calibration.seeds))}; tiers "
               + ", ".join(f"{t} {list(tiers.values()).count(t)}" for t in ("easy", "medium", "hard", "extreme")))
    typer.echo(f"{'casualty rate':<22}{'scenarios':>10}{'stay':>9}{'greedy':>9}{'fire-aware':>12}")
    for name, n, rates in family_rates(calibration, s):
        typer.echo(f"{name:<22}{n:>10}{float(rates['stay']):>9.3f}{float(rates['greedy']):>9.3f}"
                   f"{float(rates['fire-aware']):>12.3f}")


@user_errors
def suite_commit(
    suite: SuiteArgument,
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Also write the commitment to this file.")] = None,  # noqa: UP007
    force: ForceOption = False,
) -> None:
    """Print a commitment to a suite (its hash, recipe and generator version; never a secret seed)."""
    from ..io.atomic import atomic_write_bytes
    from ..io.canonical import canonical_bytes, digest
    from ..generate.commands import commit

    if out is not None:
        check_new_file(out, force)
    commitment = commit(suite)
    text = canonical_bytes(commitment)
    if out is not None:
        atomic_write_bytes(out, text + b"\n")
    typer.echo(text.decode("ascii"))
    typer.echo(f"commitment sha256 {digest(commitment)}", err=True)


@user_errors
def suite_reveal(
    suite: SuiteArgument,
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Reveal file to write (the commitment and the seed).")],
    secret_seed_file: Annotated[Optional[Path], typer.Option("--secret-seed-file", help="The file holding the suite's secret seed.")] = None,  # noqa: UP007
    force: ForceOption = False,
    workers: WorkersOption = None,
    address: AddressOption = None,
) -> None:
    """Write the reveal of a generated suite: its commitment plus its seed, checked by regenerating the suite."""
    from ..io.atomic import atomic_write_bytes
    from ..io.canonical import canonical_bytes
    from ..generate.commands import reveal

    check_new_file(out, force)
    with mapper_for(workers, address) as mapper:
        document = reveal(suite, secret_seed_file, mapper=mapper)
    atomic_write_bytes(out, canonical_bytes(document) + b"\n")
    typer.echo(f"{out}: reveal of suite {document['commitment']['suite_id']} "
               f"{document['commitment']['suite_version']} ({document['commitment']['suite_hash']})")


@user_errors
def check_commitment(
    suite: SuiteArgument,
    commitment: Annotated[Path, typer.Argument(help="The commitment file published before the evaluation.")],
    reveal_file: Annotated[Optional[Path], typer.Option("--reveal", help="A reveal file: also regenerate the suite from the recipe and the seed.")] = None,  # noqa: UP007
    workers: WorkersOption = None,
    address: AddressOption = None,
) -> None:
    """Prove that a suite is the committed one (and, with --reveal, exactly what the recipe draws)."""
    from ..generate.commands import check

    with mapper_for(workers, address) as mapper:
        lines = check(suite, commitment, reveal_file, mapper=mapper)
    for line in lines:
        typer.echo(line)
