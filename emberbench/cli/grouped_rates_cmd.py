"""``emberbench grouped-rates``: task-grouped failure rates with a matched control.

Two ways in: ``--input FILE`` runs the stand-alone reader on a grouped-rates
input; ``--from-results A B --failure RULE`` first builds that input from two
result artifacts on the same manifest (see
:func:`emberbench.grouped_rates.input_from_results`). Both end in the same
library call as ``scripts/check_grouped_rates.py``, so the reports agree,
and take its options (``--input``, ``--expect``, ``--contract``; the script's
``--output`` is ``--out`` here, as in every command, and ``--output`` is kept
as a hidden, deprecated alias). With ``--from-results`` the suite is the one
the manifest names when it is shipped, or ``--suite``, as in every command
that reads results.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Optional

import typer

from ..errors import GroupedRatesError
from ._common import suite_for_result, user_errors
from .args import parse_output_file, parse_replicates, parse_seed, refuse_existing
from .suite_cmd import SuiteOption


class FailureRule(str, enum.Enum):
    """The failure rules of ``--failure``."""

    casualty = "casualty"
    not_evacuated = "not-evacuated"
    stranded = "stranded"


def _input_bytes_from_results(
    paths: tuple[Path, Path], failure: str, seed: Optional[int], replicates: Optional[int],
    suite: Optional[Path] = None,
) -> bytes:
    """Load two result artifacts and render the grouped-rates input they define.

    The suite is ``suite`` when given, else the shipped suite A's manifest names.
    """
    from ..grouped_rates import input_from_results, render
    from ..results.pairing import verify_pair

    # Manifests are compared (from the headers) before either file is read in full; each
    # result is then verified as a stream, keeping only its episodes' counts.
    kept: tuple[dict[int, dict[str, int]], dict[int, dict[str, int]]] = ({}, {})
    first, second = verify_pair(paths[0], paths[1], suite_for_result(suite, paths[0]),
                                sink_a=lambda e: kept[0].__setitem__(e.index, dict(e.metrics.counts)),
                                sink_b=lambda e: kept[1].__setitem__(e.index, dict(e.metrics.counts)))
    entries = [(e.index, e.scenario_id, e.seed) for e in first.manifest.episodes]

    resampling = None
    if seed is not None or replicates is not None:
        if seed is None or replicates is None:
            raise GroupedRatesError("monte-carlo needs both --seed and --replicates")
        resampling = {"mode": "monte-carlo", "seed": seed, "replicates": replicates}
    document = input_from_results(
        entries, first.model_id, second.model_id, kept[0], kept[1], failure, resampling
    )
    return render(document)


def register(app: typer.Typer) -> None:
    """Add the ``grouped-rates`` command to ``app``."""

    @app.command("grouped-rates")
    @user_errors
    def grouped_rates(
        input_path: Optional[Path] = typer.Option(None, "--input", help="Grouped-rates input JSON."),
        from_results: Optional[tuple[Path, Path]] = typer.Option(
            None, "--from-results", help="Two result artifacts A B, same manifest (contrast A - B)."
        ),
        failure: Optional[FailureRule] = typer.Option(
            None, "--failure", help="Failure rule for --from-results."
        ),
        seed: Optional[int] = typer.Option(None, "--seed", parser=parse_seed, metavar="SEED",
                                           help="Monte-carlo seed in [0, 2**64 - 1] (with --replicates)."),
        replicates: Optional[int] = typer.Option(None, "--replicates", parser=parse_replicates, metavar="N",
                                                 help="Monte-carlo draw count, in [1, 100000] (the cap max_draws)."),
        save_input: Optional[Path] = typer.Option(
            None, "--save-input", parser=parse_output_file, metavar="FILE",
            help="With --from-results: also write the built input, for auditors."
        ),
        expect: Optional[Path] = typer.Option(
            None, "--expect", help="Expected report; exit 1 on the first difference."
        ),
        out: Optional[Path] = typer.Option(None, "--out", parser=parse_output_file, metavar="FILE",
                                           help="Write the report here (default: print it on stdout)."),
        contract: Optional[Path] = typer.Option(
            None, "--contract", parser=parse_output_file, metavar="FILE",
            help="Also write the calculation contract (contract.json) the report is bound to."
        ),
        force: bool = typer.Option(False, "--force", help="Replace existing output files."),
        output: Optional[Path] = typer.Option(None, "--output", parser=parse_output_file, hidden=True,
                                              help="Deprecated spelling of --out."),
        suite: SuiteOption = None,
    ) -> None:
        """Task-grouped failure rates of two arms, resampling whole task clusters."""
        from ..io.atomic import atomic_write_bytes
        from ..grouped_rates import check_file, evaluate, summary, write_contract

        if output is not None:
            if out is not None:
                raise GroupedRatesError("give --out only (--output is its deprecated spelling)")
            out = output
        refuse_existing(out, contract, save_input, force=force)
        if (input_path is None) == (from_results is None):
            raise GroupedRatesError("give exactly one of --input or --from-results")
        if contract is not None:  # as the script does: the contract first, whatever the input holds
            write_contract(contract)
        if from_results is not None:
            if failure is None:
                raise GroupedRatesError("--from-results needs --failure casualty|not-evacuated|stranded")
            data = _input_bytes_from_results(from_results, failure.value, seed, replicates, suite)
            if save_input is not None:
                atomic_write_bytes(save_input, data)
            outcome = evaluate(data, where="input built from results", expect=expect, output=out)
        else:
            if any(v is not None for v in (failure, seed, replicates, save_input, suite)):
                raise GroupedRatesError(
                    "--failure, --seed, --replicates, --save-input and --suite need --from-results"
                )
            outcome = check_file(input_path, expect=expect, output=out)  # type: ignore[arg-type]
        if out is None:
            typer.echo(outcome.data.decode("ascii"), nl=False)
        if outcome.mismatch_message is not None:
            raise GroupedRatesError(outcome.mismatch_message)
        typer.echo(summary(outcome), err=out is None)
