"""The calculation contract of the grouped-rates reader: formats, caps and methods.

Every number that limits the reader (the byte, population and draw caps), every
format name and version, and the statement of each method live here and only
here. :func:`contract_document` renders them as ``contract.json``; the report
binds the SHA-256 of that document's canonical JSON, so a report names the
exact contract it was computed under.

Changing what any method computes requires a new ``CONTRACT_VERSION``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

INPUT_FORMAT = "emberbench.grouped-rates.input"
INPUT_VERSION = "1.0"
CONTRACT_FORMAT = "emberbench.grouped-rates.contract"
CONTRACT_VERSION = "1.0"
REPORT_FORMAT = "emberbench.grouped-rates.report"
REPORT_VERSION = "1.0"

LABELS = ("failure", "success", "unresolved")
"""The outcome labels of the rubric, in the order counts are reported."""

CONDITIONS = ("agent", "environment", "budget", "outcome_rubric")
"""The declared matching conditions every input states."""

VARIABLE_CONDITIONS = ("agent", "environment", "budget", "intervention")
"""What may differ between the arms. The outcome rubric never may."""

MODES = ("exact", "exact-multiset", "monte-carlo")

SAMPLER_ID = "sha256-counter-rejection-v1"
SAMPLER_DOMAIN = b"emberbench.grouped-rates/sha256-counter-rejection-v1\x00"

NOMINAL_LEVEL = Fraction(19, 20)
P_LOWER = (1 - NOMINAL_LEVEL) / 2
P_UPPER = 1 - P_LOWER

DECIMAL_PLACES = 6

FEW_CLUSTERS_BELOW = 50
"""Warn when a report rests on fewer task clusters than this (a project choice)."""

MAX_INPUT_BYTES = 4 * 1024 * 1024
MAX_REPORT_BYTES = 64 * 1024 * 1024
MAX_TASKS = 1_000
MAX_EPISODES = 100_000
MAX_DRAWS = 100_000
MAX_DRAW_CELLS = 2_000_000
MAX_SEED = 2**64 - 1
MAX_ID_CHARS = 200
MAX_TEXT_CHARS = 4_000

CAPS: tuple[tuple[str, int], ...] = (
    ("max_input_bytes", MAX_INPUT_BYTES),
    ("max_report_bytes", MAX_REPORT_BYTES),
    ("max_tasks", MAX_TASKS),
    ("max_episodes", MAX_EPISODES),
    ("max_draws", MAX_DRAWS),
    ("max_draw_cells", MAX_DRAW_CELLS),
    ("max_seed", MAX_SEED),
    ("max_id_chars", MAX_ID_CHARS),
    ("max_text_chars", MAX_TEXT_CHARS),
)

READER_SOURCES = (
    "emberbench/__init__.py",
    "emberbench/io/__init__.py",
    "emberbench/io/atomic.py",
    "emberbench/io/canonical.py",
    "emberbench/errors.py",
    "emberbench/grouped_rates/__init__.py",
    "emberbench/grouped_rates/binding.py",
    "emberbench/grouped_rates/contract.py",
    "emberbench/grouped_rates/documents.py",
    "emberbench/grouped_rates/estimands.py",
    "emberbench/grouped_rates/exact.py",
    "emberbench/grouped_rates/from_results.py",
    "emberbench/grouped_rates/inputs.py",
    "emberbench/grouped_rates/intervals.py",
    "emberbench/grouped_rates/reader.py",
    "emberbench/grouped_rates/report.py",
    "emberbench/grouped_rates/resampling.py",
    "emberbench/grouped_rates/sampler.py",
    "emberbench/io/input_policy.py",
)
"""Every file the reader executes, relative to the repository root, in bound order."""


def _text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def contract_document() -> dict[str, Any]:
    """Return the contract as a JSON-ready mapping (written as ``contract.json``).

    The document is a pure function of this module: the same reader always
    produces the same contract bytes.
    """
    return {
        "format": CONTRACT_FORMAT,
        "version": CONTRACT_VERSION,
        "formats": {
            "input": {"format": INPUT_FORMAT, "version": INPUT_VERSION},
            "report": {"format": REPORT_FORMAT, "version": REPORT_VERSION},
            "versions": "a reader refuses any format or version it does not name here",
        },
        "labels": list(LABELS),
        "matching": {
            "declared": list(CONDITIONS),
            "may_differ": list(VARIABLE_CONDITIONS),
            "rule": (
                "exactly one condition differs between the two arms and is declared per arm "
                "with distinct values; every other condition is declared once for both; the "
                "outcome rubric is always shared. Declarations are recorded, not verified."
            ),
        },
        "counts": {
            "resolved": "failure + success episodes of one task arm",
            "attempted": "failure + success + unresolved episodes of one task arm",
            "task_rate": "failures / resolved of one task arm; null when resolved = 0",
        },
        "estimands": [
            {
                "id": "episode_weighted",
                "rate": (
                    "per arm: failures summed over all tasks / resolved episodes summed over "
                    "all tasks; null when that denominator is 0"
                ),
                "target": "the retained mix of resolved episodes",
            },
            {
                "id": "equal_task",
                "rate": (
                    "per arm: the mean over all n population tasks of the task rate; blocked "
                    "(null) when any task of that arm has a null task rate"
                ),
                "target": "a mix in which every population task has weight 1/n",
            },
        ],
        "contrast": (
            "per estimand: rate of the first declared arm minus rate of the second; null when "
            "either rate is null"
        ),
        "missing_label_bounds": (
            "per arm over all attempted episodes: lower = failures / attempted (every "
            "unresolved label a success), upper = (failures + unresolved) / attempted (every "
            "unresolved label a failure); contrast bounds are lower(first) - upper(second) and "
            "upper(first) - lower(second). Worst-case bounds, not sampling intervals."
        ),
        "resampling_unit": (
            "a paired task cluster: a draw selects n task indices with replacement from the n "
            "population tasks, and each selection contributes both arms and every episode of "
            "that task; every statistic is recomputed jointly on the draw"
        ),
        "modes": {
            "exact": (
                "all n^n ordered draws, in lexicographic order of the index tuple "
                "(draw k lists the base-n digits of k, most significant first); each has weight 1"
            ),
            "exact-multiset": (
                "all C(2n-1, n) multisets of n task indices, in lexicographic order of their "
                "non-decreasing index lists; each has weight n! / prod(m_i!) where m_i counts "
                "task i; this is the same distribution as 'exact' because every statistic "
                "depends on a draw only through its multiset"
            ),
            "monte-carlo": (
                f"replicates draws from {SAMPLER_ID} with the declared seed; each has weight 1; "
                "it approximates the exact distribution and adds Monte Carlo error"
            ),
        },
        "sampler": {
            "id": SAMPLER_ID,
            "domain": SAMPLER_DOMAIN.decode("ascii").replace("\x00", "\\u0000"),
            "blocks": (
                "block c (c = 0, 1, 2, ...) = SHA-256(domain bytes || seed as 8-byte unsigned "
                "big-endian || c as 8-byte unsigned big-endian); the domain bytes are the ASCII "
                "text above followed by one 0x00 byte"
            ),
            "words": (
                "each 32-byte block yields eight 32-bit unsigned words, big-endian, bytes "
                "4j..4j+3 for word j; words are consumed in order, block after block"
            ),
            "index": (
                "to draw an index in [0, n): limit = floor(2^32 / n) * n; take the next word w; "
                "if w < limit return w mod n, otherwise discard w and take the next word "
                "(rejection, so no modulo bias)"
            ),
            "draws": "draw r is the next n indices of the one stream, r = 0, 1, ..., replicates-1",
            "seed": f"an integer in [0, {MAX_SEED}]",
        },
        "interval": {
            "nominal_level": _text(NOMINAL_LEVEL),
            "p_lower": _text(P_LOWER),
            "p_upper": _text(P_UPPER),
            "convention": "left inverse of the weighted empirical CDF, no interpolation",
            "rank": (
                "B = total draw weight; the endpoint for probability p is the value at 1-based "
                "rank max(1, ceil(p * B)) of the draw values sorted ascending, each draw "
                "repeated weight times"
            ),
            "status": {
                "ok": "every draw has a value and at least two values differ",
                "degenerate": "every draw has a value and all values are equal",
                "blocked": (
                    "at least one draw has a missing (null) value; no endpoints are given and "
                    "every missing draw is listed and retained"
                ),
            },
            "scope": (
                "an exact summary of the empirical task-resampling distribution; it does not "
                "establish population coverage"
            ),
        },
        "numbers": {
            "exact": "every rational is a string 'p/q' in lowest terms with q >= 1",
            "decimal": (
                f"a convenience JSON number: the exact value rounded half-even to "
                f"{DECIMAL_PLACES} decimal places; draw rows carry exact strings only"
            ),
        },
        "few_clusters": {
            "warn_below": FEW_CLUSTERS_BELOW,
            "reason": (
                "percentile intervals from whole-cluster resampling can be badly calibrated "
                "with few clusters (Cameron and Miller 2015, doi:10.3368/jhr.50.2.317); the "
                "threshold is this project's conservative choice, not a guarantee above it"
            ),
        },
        "caps": {name: value for name, value in CAPS},
        "caps_rule": (
            "input over any cap is refused with a message naming the cap; max_draws bounds the "
            "retained draw rows, max_draw_cells bounds rows times tasks per row"
        ),
        "binding": {
            "input": "SHA-256 and length of the exact input file bytes",
            "contract": "SHA-256 of the canonical JSON of this document",
            "reader": {
                "files": list(READER_SOURCES),
                "file": "SHA-256 and length of the exact bytes of each file as stored on disk",
                "combined": (
                    "SHA-256 of the canonical JSON of the list of [path, sha256] pairs in "
                    "the order above"
                ),
            },
            "canonical_json": "keys sorted, separators ',' and ':', ASCII only, no NaN",
        },
    }
