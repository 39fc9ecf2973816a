"""Strict argument types: what each accepts, exactly, and that everything else is a usage error."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import typer

from emberbench.cli.args import (
    MAX_SEED,
    OutputRefused,
    parse_agent_timeout,
    parse_checkpoint_seconds,
    parse_count,
    parse_output_file,
    parse_positive,
    parse_seed,
)


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("7", 7), ("007", 7), (str(MAX_SEED), MAX_SEED), (3, 3), (MAX_SEED, MAX_SEED),
])
def test_seeds_accepted(text: object, value: int) -> None:
    """ASCII decimal seeds from 0 to 2**64 - 1 (and ints, as defaults arrive) are accepted."""
    assert parse_seed(text) == value


@pytest.mark.parametrize("text", [
    "-1", "+1", " 1", "1 ", "1_000", "\u0661", "\uff11", "1.0", "1e3", "0x10", "", str(MAX_SEED + 1),
    "9" * 25, -1, MAX_SEED + 1, True,
])
def test_seeds_refused(text: object) -> None:
    """Issue 12 (defect 8): signs, spaces, underscores, other scripts' digits, decimals and values outside
    [0, 2**64 - 1] are refused with the rule in the message."""
    with pytest.raises(typer.BadParameter, match=r"is not a seed \(a decimal integer in \[0, 2\*\*64 - 1\]"):
        parse_seed(text)


@pytest.mark.parametrize(("parse", "text", "ok"), [
    (parse_count, "0", 0), (parse_count, "12", 12), (parse_count, "-1", None), (parse_count, "1.5", None),
    (parse_count, " 2", None), (parse_positive, "1", 1), (parse_positive, "0", None), (parse_positive, "1_0", None),
    (parse_positive, str(10**12), 10**12), (parse_positive, str(10**12 + 1), None),
])
def test_counts(parse, text: str, ok: int | None) -> None:  # noqa: ANN001
    """Counts are ASCII decimal integers within their range; anything else is refused."""
    if ok is None:
        with pytest.raises(typer.BadParameter, match="is not an integer in"):
            parse(text)
    else:
        assert parse(text) == ok


@pytest.mark.parametrize(("parse", "text", "ok"), [
    (parse_agent_timeout, "30", 30.0), (parse_agent_timeout, "0.5", 0.5), (parse_agent_timeout, ".5", 0.5),
    (parse_agent_timeout, "86400", 86400.0), (parse_agent_timeout, "1e2", 100.0), (parse_agent_timeout, 30.0, 30.0),
    (parse_agent_timeout, "0", None), (parse_agent_timeout, "-1", None), (parse_agent_timeout, "nan", None),
    (parse_agent_timeout, "inf", None), (parse_agent_timeout, "1e308", None), (parse_agent_timeout, "86401", None),
    (parse_agent_timeout, "1_0", None), (parse_agent_timeout, " 5", None), (parse_agent_timeout, math.nan, None),
    (parse_checkpoint_seconds, "0", 0.0), (parse_checkpoint_seconds, "60", 60.0),
    (parse_checkpoint_seconds, "-0.1", None), (parse_checkpoint_seconds, "NaN", None),
])
def test_durations(parse, text: object, ok: float | None) -> None:  # noqa: ANN001
    """Issue 12 (defects 3, 8): durations are finite, positive (0 only where it means off) and at most their
    maximum; NaN, infinities, 1e308 and negative values are refused."""
    if ok is None:
        with pytest.raises(typer.BadParameter, match="is not a duration"):
            parse(text)
    else:
        assert parse(text) == ok


def test_output_file_refuses_at_parse_time_with_exit_status_1(tmp_path: Path) -> None:
    """An output the output policy refuses is an OutputRefused (exit status 1, not a usage error)."""
    os.mkfifo(tmp_path / "f")
    with pytest.raises(OutputRefused, match="is a FIFO") as caught:
        parse_output_file(str(tmp_path / "f"))
    assert caught.value.exit_code == 1
    assert parse_output_file(str(tmp_path / "new.json")) == tmp_path / "new.json"


@pytest.mark.parametrize(("value", "ok"), [
    (None, 30.0), ("", 30.0), ("5", 5.0), ("0.5", 0.5), ("0", None), ("-1", None), ("nan", None), ("inf", None),
    ("x", None), ("1e9", None),
])
def test_connect_timeout_from_the_environment(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                              ok: float | None) -> None:
    """EMBERBENCH_CONNECT_TIMEOUT bounds joining a cluster: a positive finite number of seconds, 30 by default;
    anything else is one ClusterError naming the variable."""
    from emberbench.cli.cluster_cmd import CONNECT_TIMEOUT_ENV_VAR, connect_timeout
    from emberbench.errors import ClusterError

    if value is None:
        monkeypatch.delenv(CONNECT_TIMEOUT_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(CONNECT_TIMEOUT_ENV_VAR, value)
    if ok is None:
        with pytest.raises(ClusterError, match=CONNECT_TIMEOUT_ENV_VAR):
            connect_timeout()
    else:
        assert connect_timeout() == ok


def test_no_address_means_no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --address or RAY_ADDRESS nothing is probed: the embedded instance needs no network."""
    from emberbench.cli.cluster_cmd import resolve_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert resolve_address(None) is None
