"""Strict argument types shared by every command: seeds, counts, durations and output files.

Each type is a parser for ``typer.Option(parser=...)``. A value it refuses is
a usage error (exit status 2) whose one line names the option and the rule;
an output path refused by the output policy is a policy error (exit status 1),
reported before the command does any work.

The rules (docs/user-guide.md, "Arguments"):

* numbers are written in ASCII: no spaces, signs, underscores, or digits of
  other scripts (Python's ``int`` accepts ``" 1"``, ``1_000`` and Arabic-Indic
  digits; these types do not);
* a seed is a decimal integer in [0, 2**64 - 1]; a list of seeds names each
  seed once, and takes seeds and inclusive ranges (``0 1 2``, ``0,1,2``,
  ``0-99``) alike (:func:`seed_list`);
* a count is in its documented range (:func:`integer_in`, whose bounds are
  the library's own constants), else in [0 or 1, 10**12]: a value outside is
  a usage error, never a library error found later;
* a cluster address is not empty (:func:`parse_address`);
* a duration is a finite number of seconds, positive unless 0 means "off",
  and at most the documented maximum of its option (an agent timeout at most
  a day, because the operating system's wait calls cannot express more than
  about 24 days);
* an output file is nothing yet, or a regular file that is not a link
  (:func:`emberbench.io.atomic.check_output_path`); an existing one is replaced
  only with ``--force`` (:func:`refuse_existing`; docs/user-guide.md,
  "Option rules");
* an option that takes several values (``manifest build --seeds 0 1 2``)
  takes them right after its name; any other positional word is a usage
  error (:func:`variadic_command`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException, UsageError  # typer vendors click; its exceptions live here
from typer.core import TyperCommand

MAX_SEED = (1 << 64) - 1
MAX_COUNT = 10**12
"""Largest count any option takes (episodes, resamples, workers): far above every real use."""
DAY = 86_400.0
MAX_GRACE_SECONDS = 100 * 365 * DAY

_DECIMAL = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class OutputRefused(ClickException):
    """An output path the output policy refuses, found while parsing (exit status 1, one line)."""

    exit_code = 1


def _text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def _shown(value: object) -> str:
    text = _text(value)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_seed(value: object) -> int:
    """A seed: ASCII decimal digits only, in [0, 2**64 - 1].

    Raises:
        typer.BadParameter: anything else (a usage error naming the rule).
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SEED:
        return value
    text = _text(value)
    if not _DECIMAL.fullmatch(text) or len(text) > 20 or int(text) > MAX_SEED:
        raise typer.BadParameter(f"{_shown(value)} is not a seed (a decimal integer in [0, 2**64 - 1], "
                                 "ASCII digits only)")
    return int(text)


parse_seed.bounds = lambda: (0, MAX_SEED)  # type: ignore[attr-defined]


def _integer(minimum: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= MAX_COUNT:
            return value
        text = _text(value)
        if not _DECIMAL.fullmatch(text) or len(text) > 13 or not minimum <= int(text) <= MAX_COUNT:
            raise typer.BadParameter(f"{_shown(value)} is not an integer in [{minimum}, 10**12] "
                                     "(ASCII digits only)")
        return int(text)

    parse.__name__ = f"integer_at_least_{minimum}"
    parse.bounds = lambda: (minimum, MAX_COUNT)  # type: ignore[attr-defined]
    return parse


parse_count = _integer(0)
"""A count that may be 0: ASCII decimal digits, in [0, 10**12]."""
parse_positive = _integer(1)
"""A positive count: ASCII decimal digits, in [1, 10**12]."""


def _constant(bound: int | str) -> int:
    """``bound`` itself, or the library constant ``"module:NAME"`` it names (imported when first needed)."""
    if isinstance(bound, int):
        return bound
    import importlib

    module, _, name = bound.partition(":")
    value = getattr(importlib.import_module(module), name)
    assert isinstance(value, int) and not isinstance(value, bool), bound
    return value


def integer_in(minimum: int | str, maximum: int | str) -> Callable[[object], int]:
    """A parser for an integer option with a documented range: ASCII decimal digits in [minimum, maximum].

    A bound may be the library constant that decides it (``"module:NAME"``),
    so the option and the library cannot drift apart; it is looked up when a
    value is parsed, never when the CLI starts. The parser's ``bounds()``
    gives the two numbers (the tests check every option's help against it).
    """

    def bounds() -> tuple[int, int]:
        return _constant(minimum), _constant(maximum)

    def parse(value: object) -> int:
        low, high = bounds()
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        text = _text(value)
        if not _DECIMAL.fullmatch(text) or len(text) > len(str(high)) or not low <= int(text) <= high:
            raise typer.BadParameter(f"{_shown(value)} is not an integer in [{low}, {high}] (ASCII digits only)")
        return int(text)

    parse.__name__ = "integer_in"
    parse.bounds = bounds  # type: ignore[attr-defined]
    return parse


parse_resamples = integer_in("emberbench.statistics.bootstrap:MIN_RESAMPLES",
                             "emberbench.statistics.bootstrap:MAX_RESAMPLES")
"""Bootstrap resamples (stats, compare, report, plot): in [100, 1000000]."""
parse_embed = integer_in(1, "emberbench.viewer.page:MAX_EMBED")
"""Episodes a viewer page embeds: in [1, 1000]."""
parse_suite_count = integer_in(1, "emberbench.generate.build:MAX_COUNT")
"""Scenarios of a generated suite: in [1, 10000]."""
parse_scored_seed_count = integer_in(1, "emberbench.results.manifest:MAX_SCORED_SEEDS")
"""Secret seeds a scored manifest draws: in [1, 10000]."""
parse_replicates = integer_in(1, "emberbench.grouped_rates.contract:MAX_DRAWS")
"""Monte-carlo draws of grouped rates: in [1, 100000] (the cap max_draws)."""


def distinct_seeds(values: list[int] | None) -> list[int] | None:
    """Callback of an option taking several seeds: each seed at most once.

    Raises:
        typer.BadParameter: a seed is given twice.
    """
    seen: set[int] = set()
    for seed in values or ():
        if seed in seen:
            raise typer.BadParameter(f"seed {seed} is given twice")
        seen.add(seed)
    return values


MAX_SEED_RANGE = 100_000
"""Most seeds one range ``FIRST-LAST`` of a seed list may name."""
_RANGE = re.compile(r"([0-9]+)-([0-9]+)")


def _seeds_of(part: str) -> list[int]:
    """One item of a seed list: a seed, or an inclusive range ``FIRST-LAST`` of seeds."""
    bounds = _RANGE.fullmatch(part)
    if bounds is None:
        return [parse_seed(part)]
    first, last = parse_seed(bounds.group(1)), parse_seed(bounds.group(2))
    if first > last or last - first >= MAX_SEED_RANGE:
        raise typer.BadParameter(f"{_shown(part)} is not a seed range (FIRST-LAST, FIRST <= LAST, at most "
                                 f"{MAX_SEED_RANGE} seeds)")
    return list(range(first, last + 1))


def seed_list(values: list[str] | None) -> list[int] | None:
    """Callback of a seed-list option: distinct seeds, at least one, in the order given.

    Each value is a seed (``0``), an inclusive range (``0-99``) or several of
    those separated by commas (``0,1,2``, ``0-9,20``); the option may take
    several values (``--seeds 0 1 2``) or be repeated. None (the option not
    given) stays None, for the command's default.

    Raises:
        typer.BadParameter: a value is not a seed or a range, a seed is
            given twice, or no seed is given at all (``--seeds ''``).
    """
    if values is None:
        return None
    # A lone value is taken as it is (" 1" is not a seed); around commas, spaces are allowed ("0, 1, 2").
    parts = [part.strip() if "," in _text(value) else _text(value) for value in values
             for part in _text(value).split(",")]
    if not any(parts):
        raise typer.BadParameter("needs at least one seed, e.g. 0,1,2")
    return distinct_seeds([seed for part in parts if part for seed in _seeds_of(part)])


seed_list.bounds = parse_seed.bounds  # type: ignore[attr-defined]


def seconds(*, maximum: float, zero_means_off: bool = False) -> Callable[[object], float]:
    """A parser for a duration in seconds: finite, positive (or 0 when ``zero_means_off``), at most ``maximum``."""
    low = "a finite number of seconds, 0 (off) or more" if zero_means_off else "a positive, finite number of seconds"

    def parse(value: object) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif _NUMBER.fullmatch(_text(value)):
            number = float(_text(value))
        else:
            number = math.nan
        if not (math.isfinite(number) and (number > 0 or (zero_means_off and number == 0)) and number <= maximum):
            raise typer.BadParameter(f"{_shown(value)} is not a duration ({low}, at most {maximum:g})")
        return number

    parse.__name__ = "seconds"
    return parse


def positive_number(*, maximum: float, what: str) -> Callable[[object], float]:
    """A parser for a finite number above 0 and at most ``maximum`` (a rate, such as frames per second)."""

    def parse(value: object) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            number = float(_text(value)) if _NUMBER.fullmatch(_text(value)) else math.nan
        if not (math.isfinite(number) and 0 < number <= maximum):
            raise typer.BadParameter(f"{_shown(value)} is not {what} (a positive, finite number, at most {maximum:g})")
        return number

    parse.__name__ = "positive_number"
    return parse


parse_agent_timeout = seconds(maximum=DAY)
parse_checkpoint_seconds = seconds(maximum=DAY, zero_means_off=True)
parse_grace_seconds = seconds(maximum=MAX_GRACE_SECONDS, zero_means_off=True)
parse_frames_per_second = positive_number(maximum=1000.0, what="a frame rate")


def parse_address(value: object) -> str:
    """A Ray cluster address (``--address``): any text but an empty one.

    An empty address used to mean "no address", so ``--address ""`` ran in
    process without a word; leaving the option out is how to ask for that.

    Raises:
        typer.BadParameter: the address is empty or blank.
    """
    text = _text(value)
    if not text.strip():
        raise typer.BadParameter("an address must not be empty (leave --address out for an embedded Ray instance)")
    return text


def parse_output_file(value: object) -> Path:
    """An output file: nothing there yet, or a regular file (never a link, FIFO, device or folder).

    Raises:
        OutputRefused: the output policy refuses the path (exit status 1).
    """
    from ..io.atomic import check_output_path
    from ..errors import OutputPathError

    try:
        return check_output_path(Path(_text(value)))
    except OutputPathError as exc:
        raise OutputRefused(str(exc)) from None


def parse_output_file_or_none(value: Any) -> Path | None:
    """:func:`parse_output_file`, letting an absent option through."""
    return None if value is None else parse_output_file(value)


ForceOption = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]


def refuse_existing(*paths: Path | None, force: bool) -> None:
    """The output rule of every command: an existing output is replaced only with ``--force``.

    Called at the start of a command, before any work, for each output it
    will write (None: that output was not asked for).

    Raises:
        OutputPathError: one of ``paths`` exists and ``force`` is False.
    """
    from ..errors import OutputPathError

    for path in paths:
        if path is not None and os.path.lexists(path) and not force:
            raise OutputPathError(f"{path} exists; use --force to replace it")


def variadic_command(*options: str) -> type[TyperCommand]:
    """A command class whose ``options`` each take the values that follow them (``--seeds 0 1 2``).

    Click has no option with a variable number of values, so the values are
    rewritten as repeated options (``--seeds 0 --seeds 1 --seeds 2``) before
    parsing. A value ends at the next word that starts with ``-`` and a
    letter (``-1`` is a value, for the option's parser to refuse). A
    positional word anywhere else (``--seeds 0 --out m.json 1 2``) is a
    usage error instead of being taken as a value.
    """
    names = frozenset(options)

    def is_option(word: str) -> bool:
        return word.startswith("-") and len(word) > 1 and not word[1].isdigit()

    class VariadicCommand(TyperCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            rewritten: list[str] = []
            position = 0
            while position < len(args):
                word = args[position]
                position += 1
                if word == "--":
                    rewritten.extend(args[position - 1:])
                    break
                if word not in names:
                    rewritten.append(word)
                    continue
                start = position
                while position < len(args) and not is_option(args[position]):
                    position += 1
                if position == start:
                    raise UsageError(f"{word} needs at least one value ({word} A B ...)", ctx=ctx)
                rewritten.extend(part for v in args[start:position] for part in (word, v))
            rest = super().parse_args(ctx, rewritten)
            if ctx.args:
                shown = " ".join(ctx.args)
                raise UsageError(f"unexpected argument(s) {shown!r} ({' and '.join(sorted(names))} takes its "
                                 "values right after it)", ctx=ctx)
            return rest

    VariadicCommand.__name__ = f"VariadicCommand[{','.join(sorted(names))}]"
    return VariadicCommand


__all__ = [
    "ForceOption", "MAX_SEED", "MAX_SEED_RANGE", "OutputRefused", "distinct_seeds", "integer_in", "refuse_existing", "seed_list",
    "variadic_command", "parse_address", "parse_agent_timeout", "parse_checkpoint_seconds", "parse_count",
    "parse_embed", "parse_frames_per_second", "parse_grace_seconds", "parse_output_file", "parse_output_file_or_none",
    "parse_positive", "parse_replicates", "parse_resamples", "parse_scored_seed_count", "parse_seed",
    "parse_suite_count", "positive_number", "seconds",
]
