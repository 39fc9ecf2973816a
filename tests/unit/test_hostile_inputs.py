"""The hostile-input campaign (issue 12), as one table: every command against every bad input.

Each case runs one command in process (typer's CliRunner) on one hostile
input, output or argument and asserts what every failure of EMBERBench must
look like: the documented exit status (1; 2 for a usage error), exactly one
line on stderr that names the file or option, no traceback, no hang (a bound
per case, enforced with SIGALRM), and no file changed but the command's own
output (everything in the case's folder and the shared inputs is compared by
inode, type, size and modification time before and after).

The cases that need a child process (a 200 MB file and the memory it costs)
are at the end.
"""

from __future__ import annotations


import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, write_manifest
from emberbench.evaluation.runner import run_evaluation
from emberbench.sim.suite import public_suite_path
from tests.conftest import ROOT
from tests.heap import collect_dropped

EXAMPLE = ROOT / "docs" / "examples" / "task-grouped-rates"
SCENARIO = "v1-pub-01-single-exit-sparse"
CASE_SECONDS = 20
IS_ROOT = os.geteuid() == 0


# -- hostile things to put at a path ------------------------------------------------------------

def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _char_device(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private "null" device node in the case folder


def _socket(path: Path) -> None:
    sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(path.parent)  # a socket path may be at most 107 bytes: bind the short relative name
    try:
        sock.bind(path.name)
    finally:
        os.chdir(cwd)
        sock.close()


def _folder(path: Path) -> None:
    path.mkdir()


def _text(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


SPECIAL: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "socket": _socket, "folder": _folder}
if IS_ROOT:
    SPECIAL["char-device"] = _char_device

CONTENT: dict[str, bytes] = {
    "depth-bomb": b"[" * 100_000 + b"]" * 100_000,
    "open-depth-bomb": b'{"a":' + b"[" * 100_000,
    "huge-int": b'{"a": 1' + b"0" * 30 + b"}",
    "1e400": b'{"a": 1e400}',
    "bad-utf8": b'{"a": "\xff\xfe"}',
    "utf8-bom": b'\xef\xbb\xbf{"a": 1}',
    "lone-surrogate": b'{"a": "\\ud800"}',
    "duplicate-keys": b'{"a": 1, "a": 2}',
    "nan": b'{"a": NaN}',
    "infinity": b'{"a": -Infinity}',
    "value-bomb": b'{"a": [' + b"0," * 2_500_000 + b"0]}",
    "empty": b"",
    "not-an-object": b"[1, 2, 3]",
    "long-integer": b'{"a": ' + b"9" * 5000 + b"}",  # issue 22, defect 4: too long for Python to convert
}

HOSTILE_INPUTS: dict[str, Callable[[Path], None]] = {**SPECIAL, **{k: _text(v) for k, v in CONTENT.items()}}


def _symlink_to_file(path: Path) -> None:
    target = path.parent / "link-target.json"
    target.write_bytes(b"precious\n")
    path.symlink_to(target)


def _dangling_symlink(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere" / "x.json")


HOSTILE_OUTPUTS: dict[str, Callable[[Path], None]] = {
    **SPECIAL, "symlink-to-file": _symlink_to_file, "dangling-symlink": _dangling_symlink,
}


# -- the valid material the commands need besides the hostile part ------------------------------

@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory, suite) -> Path:  # noqa: ANN001
    """Valid inputs: a two-episode manifest, two results on it, a record, grouped-rates files, a generated suite."""
    folder = tmp_path_factory.mktemp("good")
    entries = tuple(ManifestEntry(i, SCENARIO, suite.scenario(SCENARIO).content_hash, seed) for i, seed in enumerate((0, 1)))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)
    write_manifest(manifest, folder / "m.json")
    run_evaluation(manifest, suite, "greedy", "greedy", folder / "a.json")
    run_evaluation(manifest, suite, "stay", "stay", folder / "b.json")
    result = CliRunner().invoke(app, ["episode", SCENARIO, "--record", str(folder / "r.json")])
    assert result.exit_code == 0, result.output
    for name in ("input.json", "report.json"):
        shutil.copy(EXAMPLE / name, folder / f"gr-{name}")
    result = CliRunner().invoke(app, ["suite", "generate", "--recipe", "dev", "--count", "2", "--seed", "1",
                                      "--out", str(folder / "gen")])
    assert result.exit_code == 0, result.output
    # Five episodes, so that the statistics have intervals (n >= 5), and their statistics artifacts.
    entries = tuple(ManifestEntry(i, SCENARIO, suite.scenario(SCENARIO).content_hash, i) for i in range(5))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)
    run_evaluation(manifest, suite, "greedy", "greedy", folder / "a5.json")
    run_evaluation(manifest, suite, "stay", "stay", folder / "b5.json")
    for args in (("stats", "a5.json", "--out", "a5.stats.json"),
                 ("compare", "a5.json", "b5.json", "--out", "a5-b5.compare.json")):
        argv = [str(folder / a) if a.endswith(".json") else a for a in args]
        result = CliRunner().invoke(app, [*argv, "--resamples", "100"])
        assert result.exit_code == 0, result.output
    return folder


@dataclass(frozen=True)
class Template:
    """A command line with one slot; ``{X}`` is the hostile path, ``{good}`` the valid material's folder.

    Attributes:
        option: an option the error may name instead of the file (a report
            that differs from ``--expect`` names the option).
        copies: ``(good file, name in the case folder)`` pairs copied before
            the case (an artifact whose run sidecar is the hostile part).
    """

    name: str
    args: tuple[str, ...]
    slot: str = "x.json"
    suite_copy: bool = False
    outputs: tuple[str, ...] = field(default=())
    option: str | None = None
    copies: tuple[tuple[str, str], ...] = field(default=())


INPUT_TEMPLATES = [
    Template("manifest show", ("manifest", "show", "{X}")),
    Template("run --manifest", ("run", "--manifest", "{X}", "--policy", "greedy", "--model-id", "m",
                                "--out", "{case}/out.json", "--executor", "local", "--no-store"), outputs=("out.json",)),
    Template("run --out (resume)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                                    "--out", "{X}", "--executor", "local", "--no-store")),
    Template("replay", ("replay", "{X}")),
    Template("verify", ("verify", "{X}")),
    Template("pair A", ("pair", "{X}", "{good}/b.json")),
    Template("pair B", ("pair", "{good}/a.json", "{X}")),
    Template("stats", ("stats", "{X}", "--resamples", "100", "--out", "{case}/s.json"), outputs=("s.json",)),
    Template("compare", ("compare", "{X}", "{good}/b.json", "--resamples", "100", "--out", "{case}/c.json"),
             outputs=("c.json",)),
    Template("suite list (suite.json)", ("suite", "list", "--suite", "{case}/suite"), slot="suite/suite.json",
             suite_copy=True),
    Template("episode (scenario file)", ("episode", SCENARIO, "--suite", "{case}/suite"),
             slot=f"suite/scenarios/{SCENARIO}.json", suite_copy=True),
    Template("grouped-rates --input", ("grouped-rates", "--input", "{X}", "--out", "{case}/rep.json"),
             outputs=("rep.json",)),
    Template("grouped-rates --expect", ("grouped-rates", "--input", "{good}/gr-input.json", "--expect", "{X}",
                                        "--out", "{case}/rep.json"), outputs=("rep.json",), option="--expect"),
    Template("grouped-rates --from-results", ("grouped-rates", "--from-results", "{X}", "{good}/b.json",
                                              "--failure", "casualty", "--out", "{case}/rep.json"),
             outputs=("rep.json",)),
    Template("grouped-rates --from-results --suite (suite.json)",
             ("grouped-rates", "--from-results", "{good}/a.json", "{good}/b.json", "--failure", "casualty",
              "--suite", "{case}/suite", "--out", "{case}/rep.json"), slot="suite/suite.json", suite_copy=True),
    Template("view", ("view", "{X}", "--out", "{case}/v.html"), outputs=("v.html",)),
    # A refused report leaves nothing behind: no output is allowed to change (issue 22, defect 6).
    Template("report", ("report", "{X}", "{good}/b.json", "--out", "{case}/rep", "--resamples", "100")),
    Template("report --stats", ("report", "{good}/a.json", "{good}/b.json", "--stats", "{X}", "--out", "{case}/rep",
                                "--resamples", "100")),
    Template("plot forest --stats", ("plot", "forest", "{good}/a.json", "{good}/b.json", "--stats", "{X}",
                                     "--out", "{case}/f.svg")),
    Template("plot", ("plot", "egress", "{X}", "--scenario", SCENARIO, "--out", "{case}/f.svg"), outputs=("f.svg",)),
    # An export that fails leaves no file (issue 27: rows stream into the atomic writer's temporary file).
    Template("export", ("export", "{X}", "--out", "{case}/e.csv")),
    Template("export B", ("export", "{good}/a.json", "{X}", "--out", "{case}/e.parquet")),
    Template("suite validate (suite.json)", ("suite", "validate", "{case}/suite"), slot="suite/suite.json",
             suite_copy=True, option="/suite: 1 problem(s) found"),  # the problem itself is listed on stdout
    Template("suite generate --recipe", ("suite", "generate", "--recipe", "{X}", "--count", "2", "--seed", "1",
                                         "--out", "{case}/gen"), outputs=("gen",)),
    Template("suite generate --secret-seed-file", ("suite", "generate", "--recipe", "dev", "--count", "2",
                                                   "--secret-seed-file", "{X}", "--out", "{case}/gen"),
             outputs=("gen",)),
    Template("suite check-commitment", ("suite", "check-commitment", "{good}/gen", "{X}")),
    Template("store ls --store", ("store", "ls", "--store", "{X}")),
    Template("store fsck --store", ("store", "fsck", "--store", "{X}")),
    Template("store gc --store", ("store", "gc", "--store", "{X}")),
    Template("store audit --store", ("store", "audit", "--store", "{X}")),
    Template("run --store", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                             "--out", "{case}/out.json", "--executor", "local", "--store", "{X}")),
    Template("run --out (resume: run sidecar)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy",
                                                 "--model-id", "greedy", "--out", "{case}/out.json", "--executor",
                                                 "local", "--no-store"), slot="out.json.run",
             copies=(("a.json", "out.json"),)),
]

OUTPUT_TEMPLATES = [
    Template("manifest build --out", ("manifest", "build", "--seeds", "0", "--out", "{X}")),
    Template("episode --record", ("episode", SCENARIO, "--record", "{X}")),
    Template("run --out", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                           "--out", "{X}", "--executor", "local", "--no-store")),
    Template("run --out (store)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                                   "--out", "{X}", "--executor", "local", "--store", "{case}/store")),
    Template("run --out (its run sidecar)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id",
                                             "m", "--out", "{case}/out.json", "--executor", "local", "--no-store"),
             slot="out.json.run"),
    Template("run --out (store, its run sidecar)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy",
                                                    "--model-id", "m", "--out", "{case}/out.json", "--executor",
                                                    "local", "--store", "{case}/store"), slot="out.json.run",
             outputs=("store",)),
    Template("pair --out", ("pair", "{good}/a.json", "{good}/b.json", "--out", "{X}")),
    Template("stats --out", ("stats", "{good}/a.json", "--resamples", "100", "--out", "{X}")),
    Template("compare --out", ("compare", "{good}/a.json", "{good}/b.json", "--resamples", "100", "--out", "{X}")),
    Template("view --out", ("view", "{good}/r.json", "--out", "{X}")),
    Template("plot --out", ("plot", "egress", "{good}/a.json", "--scenario", SCENARIO, "--out", "{X}")),
    Template("export --out", ("export", "{good}/a.json", "--format", "csv", "--out", "{X}")),
    Template("runs export --table --out", ("runs", "export", "--table", "--format", "jsonl", "--store",
                                           "{case}/store", "--out", "{X}"), outputs=("store",)),
    Template("report --out", ("report", "{good}/a.json", "{good}/b.json", "--out", "{X}", "--resamples", "100")),
    Template("suite commit --out", ("suite", "commit", "{good}/gen", "--out", "{X}")),
    Template("suite calibrate --out", ("suite", "calibrate", "{good}/gen", "--seeds", "0", "--out", "{X}")),
    Template("grouped-rates --out", ("grouped-rates", "--input", "{good}/gr-input.json", "--out", "{X}")),
    Template("grouped-rates --save-input", ("grouped-rates", "--from-results", "{good}/a.json", "{good}/b.json",
                                            "--failure", "casualty", "--save-input", "{X}",
                                            "--out", "{case}/rep.json"), outputs=("rep.json",)),
]

# (name, args, exit status, what the one line must name); {good} and {case} are filled in.
ARGUMENT_CASES = [
    *[(f"episode --seed {v!r}", ("episode", SCENARIO, "--seed", v), 2, "--seed")
      for v in ("-1", "18446744073709551616", " 1", "1_000", "\u0661", "+1", "1.0")],
    *[(f"manifest build --seeds {v!r}", ("manifest", "build", "--seeds", v, "--out", "{case}/m.json"), 2, "--seeds")
      for v in ("-1", "18446744073709551616", " 1", "1_000", "\u0661\u0662")],
    ("manifest build extra seed", ("manifest", "build", "--seeds", "0", "--out", "{case}/m.json", "x"), 2, "--seeds"),
    *[(f"episode --agent-timeout {v}", ("episode", SCENARIO, "--agent-timeout", v), 2, "--agent-timeout")
      for v in ("nan", "inf", "1e308", "-1", "0", "1_0")],
    *[(f"run --{o} {v}", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                         "--out", "{case}/o.json", f"--{o}", v), 2, f"--{o}")
      for o, v in (("checkpoint-seconds", "nan"), ("checkpoint-seconds", "-1"), ("checkpoint-every", "-1"),
                   ("checkpoint-every", "1.5"), ("agent-timeout", "inf"), ("workers", "0"))],
    ("grouped-rates --seed -1", ("grouped-rates", "--input", "{good}/gr-input.json", "--seed", "-1"), 2, "--seed"),
    ("grouped-rates --replicates 0", ("grouped-rates", "--input", "{good}/gr-input.json", "--replicates", "0"), 2,
     "--replicates"),
    *[(f"store gc --grace {v}", ("store", "gc", "--store", "{case}/st", "--grace", v), 2, "--grace")
      for v in ("nan", "-1", "inf")],
    ("stats --resamples x", ("stats", "{good}/a.json", "--resamples", "x"), 2, "--resamples"),
    ("view --seed -1", ("view", "{good}/a.json", "--scenario", SCENARIO, "--seed", "-1"), 2, "--seed"),
    ("view --fps nan", ("view", "{good}/r.json", "--terminal", "--fps", "nan"), 2, "--fps"),
    ("view --episode 1_0", ("view", "{good}/a.json", "--episode", "1_0"), 2, "--episode"),
    ("report --resamples -5", ("report", "{good}/a.json", "--resamples", "-5"), 2, "--resamples"),
    *[(f"{c} --stats missing", (*a, "--stats", "{case}/missing.json", "--out", f"{{case}}/{o}"), 1, "missing.json")
      for c, a, o in (("report", ("report", "{good}/a.json", "{good}/b.json", "--resamples", "100"), "rep"),
                      ("plot forest", ("plot", "forest", "{good}/a.json", "{good}/b.json"), "f.svg"))],
    # Issue 22 (defects 8, 16): values outside a documented range were library errors (exit 1) found late.
    ("view --embed 1001", ("view", "{good}/a.json", "--embed", "1001"), 2, "--embed"),
    ("report --embed 1001", ("report", "{good}/a.json", "--embed", "1001", "--out", "{case}/rep"), 2, "--embed"),
    ("suite generate --count 10001", ("suite", "generate", "--recipe", "dev", "--count", "10001", "--seed", "1",
                                      "--out", "{case}/gen"), 2, "--count"),
    *[(f"suite generate --calibration-seeds {v!r}", ("suite", "generate", "--recipe", "dev", "--count", "2", "--seed",
                                                     "1", "--out", "{case}/gen", "--calibration-seeds", v),
       2, "--calibration-seeds") for v in ("a,b", "-1", "", "0,0", str(2**64))],
    *[(f"suite calibrate --seeds {v!r}", ("suite", "calibrate", "{good}/gen", "--out", "{case}/c.json", "--seeds", v),
       2, "--seeds") for v in ("a,b", "-1", "", "0,0", str(2**64))],
    *[(f"{c} --resamples {v}", (c, "{good}/a.json", *(["{good}/b.json"] if c == "compare" else []), "--resamples", v),
       2, "--resamples") for c in ("stats", "compare") for v in ("99", "1000001")],
    ("report --resamples 99", ("report", "{good}/a.json", "--resamples", "99", "--out", "{case}/rep"), 2,
     "--resamples"),
    ("plot --resamples 99", ("plot", "forest", "{good}/a.json", "{good}/b.json", "--resamples", "99",
                             "--out", "{case}/f.svg"), 2, "--resamples"),
    ("grouped-rates --replicates 100001", ("grouped-rates", "--input", "{good}/gr-input.json", "--seed", "1",
                                           "--replicates", "100001"), 2, "--replicates"),
    ("manifest build --seed-count 10001", ("manifest", "build", "--scored", "--seed-count", "10001",
                                           "--out", "{case}/m.json"), 2, "--seed-count"),
    ("manifest build --seeds 0 0", ("manifest", "build", "--seeds", "0", "0", "--out", "{case}/m.json"), 2, "--seeds"),
    *[(f"{args[0]} --address ''", (*args[:1], "--address", "", *args[1:]), 2, "--address") for args in (
        ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m", "--out", "{case}/o.json",
         "--no-store"),
        ("verify", "{good}/a.json"),
        ("submit", "--", "verify", "x.json"))],
    ("episode cmd: unclosed quote", ("episode", SCENARIO, "--policy", 'cmd:python3 "unclosed'), 1, "cmd:"),
    ("run cmd: unclosed quote", ("run", "--manifest", "{good}/m.json", "--policy", 'cmd:python3 "unclosed',
                                 "--model-id", "m", "--out", "{case}/o.json", "--executor", "local", "--no-store"), 1,
     "cmd:"),
    ("run --runtime-env depth bomb", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                                      "--out", "{case}/o.json", "--no-store", "--runtime-env",
                                      '{"a":' * 20_000 + "1" + "}" * 20_000), 1, "--runtime-env"),
    ("submit --runtime-env depth bomb", ("submit", "--address", "http://127.0.0.1:1", "--runtime-env",
                                         "[" * 20_000 + "]" * 20_000, "--", "verify", "x.json"), 1, "--runtime-env"),
    ("run --runtime-env duplicate keys", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id",
                                          "m", "--out", "{case}/o.json", "--no-store", "--runtime-env",
                                          '{"a": 1, "a": 2}'), 1, "--runtime-env"),
]


# -- running one case --------------------------------------------------------------------------

def _snapshot(*roots: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every path under ``roots`` (links not followed): type and mode, inode, size, modification time.

    Stores that earlier in-process commands dropped are collected first: each holds a writer lease file in
    the store's tmp/ until then, which would otherwise vanish between two snapshots.
    """
    collect_dropped()
    seen = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                path = Path(folder, name)
                info = os.lstat(path)
                seen[str(path)] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)
    return seen


class _Hung(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hung


def _invoke(args: list[str]) -> tuple[object, float]:
    """Run the CLI in process, bounded by CASE_SECONDS; return the result and the seconds it took."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    start = time.monotonic()
    try:
        result = CliRunner().invoke(app, args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return result, time.monotonic() - start


def _check(result, code: int, names: tuple[str, ...], *, changed: set[str], allowed: set[str]) -> str:  # noqa: ANN001
    assert not isinstance(result.exception, _Hung), f"no answer within {CASE_SECONDS} s"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == code, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert any(name in lines[0] for name in names), lines[0]
    outside = {p for p in changed if not any(p == a or p.startswith(a + os.sep) for a in allowed)}
    assert not outside, f"changed outside the command's output: {sorted(outside)}"
    return lines[0]


def _prepare(template: Template, case: Path, good: Path, make: Callable[[Path], None]) -> tuple[list[str], Path]:
    if template.suite_copy:
        shutil.copytree(public_suite_path(), case / "suite")
    for source, name in template.copies:
        shutil.copy(good / source, case / name)
    target = case / template.slot
    if target.exists():
        target.unlink()
    make(target)
    args = [a.replace("{X}", str(target)).replace("{good}", str(good)).replace("{case}", str(case))
            for a in template.args]
    return args, target


def _run_case(template: Template, make: Callable[[Path], None], case: Path, good: Path) -> str:
    """Run one case; return everything it printed (its one error line is checked here)."""
    args, target = _prepare(template, case, good, make)
    before = _snapshot(case, good)
    result, _ = _invoke(args)
    after = _snapshot(case, good)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    allowed = {str(case / name) for name in template.outputs}
    names = (target.name,) if template.option is None else (target.name, template.option)
    _check(result, 1, names, changed=changed, allowed=allowed)
    return result.output


@pytest.mark.parametrize("kind", sorted(HOSTILE_INPUTS))
@pytest.mark.parametrize("template", INPUT_TEMPLATES, ids=lambda t: t.name)
def test_every_reader_refuses_every_hostile_input(template: Template, kind: str, tmp_path: Path, good: Path) -> None:
    """Issue 12 (defects 2-4, 8): a special file, a depth or value bomb, a number out of range, bad UTF-8,
    duplicate keys or NaN as any command's input is one line naming the file, exit 1, at once; nothing else changes."""
    if template.name == "run --store" and kind == "folder":
        pytest.skip("an empty folder is where `run` creates a new store: not hostile")
    printed = _run_case(template, HOSTILE_INPUTS[kind], tmp_path, good)
    if kind in SPECIAL and not template.name.startswith(("store", "run --store")):
        assert "regular file" in printed or "folder" in printed or "Not a directory" in printed, printed


@pytest.mark.parametrize("kind", sorted(HOSTILE_OUTPUTS))
@pytest.mark.parametrize("template", OUTPUT_TEMPLATES, ids=lambda t: t.name)
def test_every_writer_refuses_a_target_that_is_not_a_regular_file(template: Template, kind: str, tmp_path: Path,
                                                                  good: Path) -> None:
    """Issue 12 (defect 1): a FIFO, device, socket, folder or link as any command's output is refused in one
    line and left exactly as it was (for a link: the link and what it points to)."""
    if template.name == "report --out" and kind == "folder":
        pytest.skip("a report is written into a folder: an empty one is its ordinary output")
    _run_case(template, HOSTILE_OUTPUTS[kind], tmp_path, good)


@pytest.mark.parametrize(("name", "args", "code", "names"), ARGUMENT_CASES, ids=[c[0] for c in ARGUMENT_CASES])
def test_bad_arguments_are_one_line_naming_the_option(name: str, args: tuple[str, ...], code: int, names: str,
                                                      tmp_path: Path, good: Path) -> None:
    """Issue 12 (defects 3, 8): seeds outside [0, 2**64 - 1] or not plain ASCII decimals, durations that are
    NaN, infinite, huge or not positive, a cmd: line with an unclosed quote and a hostile --runtime-env are one
    line naming the option (exit 2 for usage errors), never a traceback; nothing is written."""
    filled = [a.replace("{good}", str(good)).replace("{case}", str(tmp_path)) for a in args]
    before = _snapshot(tmp_path, good)
    result, _ = _invoke(filled)
    after = _snapshot(tmp_path, good)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    _check(result, code, (names,), changed=changed, allowed=set())


# -- a valid input with one number made too long to convert (issue 22, defect 4) -----------------

LONG_NUMBER = b"9" * 5000
# name -> (the valid file in the slot, the bytes replaced, their replacement)
LONG_NUMBERS = {
    "episode index": ("a.json", b'"index":0', b'"index":' + LONG_NUMBER),
    "embedded manifest index": ("a.json", b'"manifest":{"episodes":[{"index":0',
                                b'"manifest":{"episodes":[{"index":-' + LONG_NUMBER),
    "manifest seed": ("m.json", b'"seed":0', b'"seed":' + LONG_NUMBER),
}
LONG_NUMBER_READERS = {
    "a.json": ("verify", "pair A", "pair B", "stats", "compare", "grouped-rates --from-results", "view", "report",
               "plot", "export"),
    "m.json": ("manifest show", "run --manifest"),
}
LONG_NUMBER_CASES = [(name, template) for name, (source, _, _) in LONG_NUMBERS.items()
                     for template in INPUT_TEMPLATES if template.name in LONG_NUMBER_READERS[source]]


@pytest.mark.parametrize(("number", "template"), LONG_NUMBER_CASES, ids=[f"{t.name}-{n}" for n, t in LONG_NUMBER_CASES])
def test_a_number_too_long_to_convert_is_one_line_naming_the_file(number: str, template: Template, tmp_path: Path,
                                                                 good: Path) -> None:
    """Issue 22 (defect 4): an integer of 5,000 digits in a valid result or manifest (beyond the 4,300 digits
    Python converts) is refused as out of range in one line naming the file, by every command that reads it;
    it was a ValueError traceback from the result reader."""
    source, old, new = LONG_NUMBERS[number]
    data = (good / source).read_bytes()
    assert old in data
    printed = _run_case(template, _text(data.replace(old, new, 1)), tmp_path, good)
    assert "is out of range (at most 2**64 - 1 in magnitude)" in printed, printed


# -- single-value mutations of statistics artifacts (issue 22, defects 6 and 15) ----------------

def _first_metric(form: dict) -> dict:
    return form["overall"]["metrics"][0]


def _interval(form: dict) -> dict:
    metric = _first_metric(form)
    return metric["mean_ci"] if "mean_ci" in metric else metric["mean_delta_ci"]


def _forged_interval(form: dict) -> None:
    """The issue's forgery: a mean of 0.999 with a lower bound (0.998) above its upper bound (0.9029)."""
    _interval(form).update(lower=0.998, upper=0.9029)
    _first_metric(form)["statistics"].update(mean=0.999, min=-1.0, max=1.0)


def _possible_mean(form: dict) -> None:
    """Move the first mean that is not its minimum down to its minimum: a value no rule of the reader forbids."""
    stats = next(m["statistics"] for m in form["overall"]["metrics"]
                 if m["statistics"]["mean"] is not None and m["statistics"]["mean"] != m["statistics"]["min"])
    stats["mean"] = stats["min"]


def _text_nan(text: bytes) -> bytes:
    import re

    return re.sub(rb'"lower":-?[0-9.e+-]+', b'"lower":NaN', text, count=1)


# (name, what to do to the form (or, for a bytes -> bytes function, to the text))
STATISTICS_MUTATIONS = [
    ("mean 'x'", lambda f: _first_metric(f)["statistics"].update(mean="x")),
    ("mean a list", lambda f: _first_metric(f)["statistics"].update(mean=[0.5])),
    ("mean null", lambda f: _first_metric(f)["statistics"].update(mean=None)),
    ("mean true", lambda f: _first_metric(f)["statistics"].update(mean=True)),
    ("mean an object", lambda f: _first_metric(f)["statistics"].update(mean={"v": 1})),
    ("n a string", lambda f: _first_metric(f)["statistics"].update(n="5")),
    ("lower above upper", _forged_interval),
    ("lower a string", lambda f: _interval(f).update(lower="0.1")),
    ("lower NaN", _text_nan),
    ("interval null", lambda f: _first_metric(f).update({k: None for k in ("mean_ci", "mean_delta_ci")
                                                         if k in _first_metric(f)})),
    ("another seed", lambda f: _interval(f).update(seed="0" * 64)),
    ("negative variance", lambda f: _first_metric(f)["statistics"].update(variance=-1.0)),
    ("an unknown key", lambda f: f.update(score=1)),
    ("resamples 99", lambda f: f["methods"]["bootstrap"].update(resamples=99)),
    ("another mean, still possible", lambda f: _possible_mean(f)),
    ("the same values, pretty-printed", lambda text: json.dumps(json.loads(text), indent=2).encode()),
]
STATISTICS_COMMANDS = {
    "report --stats": ("a5.stats.json", ("report", "{good}/a5.json", "{good}/b5.json", "--stats", "{X}",
                                          "--out", "{case}/rep", "--resamples", "100")),
    "plot forest --stats": ("a5-b5.compare.json", ("plot", "forest", "{good}/b5.json", "{good}/a5.json",
                                                     "--stats", "{X}", "--out", "{case}/f.svg")),
}


@pytest.mark.parametrize(("name", "mutate"), STATISTICS_MUTATIONS, ids=[m[0] for m in STATISTICS_MUTATIONS])
@pytest.mark.parametrize("command", sorted(STATISTICS_COMMANDS))
def test_every_statistics_value_mutation_is_refused_and_leaves_nothing(command: str, name: str, mutate,  # noqa: ANN001
                                                                       tmp_path: Path, good: Path) -> None:
    """Issue 22 (defects 6, 15): a statistics artifact with one value changed (a wrong type, an impossible
    interval, a possible but different value, other JSON text) is one line naming the file, exit 1, never a
    traceback and never shown; nothing is written (no report folder, no figure)."""
    import inspect

    from emberbench.io.canonical import canonical_bytes

    source, args = STATISTICS_COMMANDS[command]
    text = (good / source).read_bytes()
    if "text" in inspect.signature(mutate).parameters:
        data = mutate(text)
    else:
        form = json.loads(text)
        mutate(form)
        data = canonical_bytes(form) + b"\n"
    assert data != text
    _run_case(Template(command, args), _text(data), tmp_path, good)


@pytest.mark.parametrize("command", sorted(STATISTICS_COMMANDS))
def test_an_unchanged_statistics_artifact_is_accepted(command: str, tmp_path: Path, good: Path) -> None:
    """The artifact stats/compare wrote, unchanged, is what the mutations above start from: it is accepted."""
    source, args = STATISTICS_COMMANDS[command]
    filled = [a.replace("{X}", str(good / source)).replace("{good}", str(good)).replace("{case}", str(tmp_path))
              for a in args]
    result, _ = _invoke(filled)
    assert result.exit_code == 0, result.output


# -- another EMBERBench file where one kind was wanted (issue 27, defect 6) ---------------------

# (file in {good}, its kind, the templates that read it, the kind they wanted)
WRONG_KINDS = [
    ("m.json", "an evaluation manifest", ("verify", "pair A", "pair B", "stats", "compare", "view", "report",
                                          "plot", "grouped-rates --from-results", "export", "export B"),
     "a result artifact"),
    ("a5.stats.json", "a statistics artifact (stats)", ("verify", "stats", "compare", "report"), "a result artifact"),
    ("a.json", "a result artifact", ("manifest show", "run --manifest"), "an evaluation manifest"),
    ("a.json", "a result artifact", ("replay",), "a run record"),
    ("m.json", "an evaluation manifest", ("replay",), "a run record"),
    ("m.json", "an evaluation manifest", ("report --stats", "plot forest --stats"), "a statistics artifact"),
]
WRONG_KIND_CASES = [(source, kind, template, wanted) for source, kind, names, wanted in WRONG_KINDS
                    for template in INPUT_TEMPLATES if template.name in names]


@pytest.mark.parametrize(("source", "kind", "template", "wanted"), WRONG_KIND_CASES,
                         ids=[f"{t.name}-{s}" for s, _, t, _ in WRONG_KIND_CASES])
def test_another_kind_of_file_is_named_as_what_it_is(source: str, kind: str, template: Template, wanted: str,
                                                     tmp_path: Path, good: Path) -> None:
    """Issue 27 (defect 6): `stats dev.json` (a manifest) said "top-level keys differ: unknown
    ['manifest_version'] ...", `run --manifest greedy.json` (a result) "episodes[0]: unknown key(s) ...". Every
    reader now tells the kind of file it got by its version key, in one function, and says what it wanted:
    one line, exit 1, nothing written."""
    line = _check(_invoke([a.replace("{X}", str(tmp_path / "x.json")).replace("{good}", str(good))
                           .replace("{case}", str(tmp_path)) for a in _prepare(template, tmp_path, good,
                                                                                _copy(good / source))[0]])[0],
                  1, ("x.json",), changed=set(), allowed=set())
    assert f"x.json is {kind}, not {wanted}" in line, line


def _copy(source: Path) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(source.read_bytes())


# -- a 200 MB file: in a child process, whose peak memory is measured ---------------------------

BIG_MB = 200


@pytest.fixture(scope="session")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 200 MB JSON object holding one long string (made once per test session)."""
    path = tmp_path_factory.mktemp("big") / "big.json"
    chunk = b"a" * (1 << 20)
    with path.open("wb") as handle:
        handle.write(b'{"x": "')
        for _ in range(BIG_MB):
            handle.write(chunk)
        handle.write(b'"}')
    return path


# Linux keeps a process's peak resident size across exec, and a child started from this (large) test process
# inherits this process's peak that way: measured directly, a 30 MB command read as 650 MB once the worker had
# grown. A small interpreter starts the command instead and reports the command's own peak, which then includes
# at most that interpreter's few MB.
_MEASURE = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _run_child(args: list[str], cwd: Path) -> tuple[int, str, float, float]:
    """Run the CLI in a child; return (exit status, stderr, peak resident MB, seconds)."""
    start = time.monotonic()
    child = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "emberbench.cli.main", *args],
                           cwd=cwd, capture_output=True, check=False)
    err = child.stderr.decode("utf-8", "replace")
    return child.returncode, err, int(child.stdout) / 1024, time.monotonic() - start


BIG_CASES = [
    ("manifest show", ("manifest", "show", "{X}")),
    ("run --manifest", ("run", "--manifest", "{X}", "--policy", "greedy", "--model-id", "m", "--out", "o.json",
                        "--executor", "local", "--no-store")),
    ("replay", ("replay", "{X}")),
    ("suite list", ("suite", "list", "--suite", "{suite}")),
    ("grouped-rates --input", ("grouped-rates", "--input", "{X}")),
    ("verify", ("verify", "{X}")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "args"), BIG_CASES, ids=[c[0] for c in BIG_CASES])
def test_a_200_mb_input_is_refused_within_bounded_time_and_memory(name: str, args: tuple[str, ...], big_file: Path,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 12 (defect 4): a 200 MB input costs at most a small multiple of its size (here below 2.5 times,
    plus the interpreter) and a few seconds, and ends in one line naming the file; nothing is written."""
    suite = tmp_path_factory.mktemp("suite")
    (suite / "suite.json").symlink_to(big_file)
    cwd = tmp_path_factory.mktemp("cwd")
    filled = [a.replace("{X}", str(big_file)).replace("{suite}", str(suite)) for a in args]
    code, err, peak_mb, seconds = _run_child(filled, cwd)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
    assert "big.json" in lines[0] or "suite.json" in lines[0], lines[0]
    assert peak_mb < 2.5 * BIG_MB + 150, f"peak {peak_mb:.0f} MB"
    assert seconds < 60
    assert list(cwd.iterdir()) == []


# -- run ids: one rule for every command that takes one (issue 22, defect 2) ---------------------

RUN_ID_COMMANDS = [
    ("store rm-run --apply", ("store", "rm-run", "{ID}", "--store", "{store}", "--apply")),
    ("store rm-run", ("store", "rm-run", "{ID}", "--store", "{store}")),
    ("runs show", ("runs", "show", "{ID}", "--store", "{store}")),
    ("runs verify", ("runs", "verify", "{ID}", "--store", "{store}")),
    ("runs verify --executor ray", ("runs", "verify", "{ID}", "--store", "{store}", "--executor", "ray")),
    ("runs export", ("runs", "export", "{ID}", "--store", "{store}", "--out", "{case}/o.json")),
]
# (name, id with {run} = the run's 64 digits, exit status, what the one line must say)
RUN_IDS = [
    ("empty", "", 2, "at least 4 hex digits"),
    ("3 digits of the run", "{run3}", 2, "at least 4 hex digits"),
    ("run- alone", "run-", 2, "at least 4 hex digits"),
    ("run- and 3 digits", "run-{run3}", 2, "at least 4 hex digits"),
    ("upper case", "{RUN4}", 2, "lowercase hex"),
    ("not hex", "zzzz", 2, "lowercase hex"),
    ("space in front", " {run4}", 2, "lowercase hex"),
    ("65 digits", "{run}0", 2, "lowercase hex"),
    ("glob", "*", 2, "lowercase hex"),
    ("no such run", "{other4}", 1, "no run in store"),
    ("ambiguous", "abcd", 1, "ambiguous: it starts 2 runs (abcd0, abcd1)"),
]


@pytest.fixture(scope="module")
def run_store(tmp_path_factory: pytest.TempPathFactory, good: Path, suite) -> tuple[Path, str]:  # noqa: ANN001
    """A local store with one complete run, and two refs of runs whose ids share the prefix ``abcd``."""
    from emberbench.results.manifest import load_manifest
    from emberbench.evaluation.store_runner import open_store

    folder = tmp_path_factory.mktemp("runstore")
    store = open_store(folder / "store")
    run_evaluation(load_manifest(good / "m.json"), suite, "greedy", "g", folder / "g.json", store=store)
    (run,) = store.journal_names()
    key = store.put(b"{}")
    for twin in ("0", "1"):
        store.refs.set(f"runs/run-abcd{twin * 60}", key)
    return folder / "store", run[len("run-"):]


@pytest.mark.parametrize(("case_name", "text", "code", "says"), RUN_IDS, ids=[c[0] for c in RUN_IDS])
@pytest.mark.parametrize(("command", "args"), RUN_ID_COMMANDS, ids=[c[0] for c in RUN_ID_COMMANDS])
def test_every_command_that_takes_a_run_id_applies_one_rule(command: str, args: tuple[str, ...], case_name: str,
                                                            text: str, code: int, says: str, tmp_path: Path,
                                                            run_store: tuple[Path, str]) -> None:
    """Issue 22 (defect 2): `store rm-run` and `runs show|verify|export` take a run id by one rule: 4 to 64
    lowercase hex digits (a unique prefix, `run-` allowed in front), never empty. Anything else is one line,
    exit 2 (usage); an unknown or ambiguous id exit 1 (candidates listed); the store is left as it was (an
    empty id once deleted the store's only run)."""
    store, run = run_store
    other = next(c for c in "0123456789abcdef" if c != run[0]) + run[1:4]
    run_id = (text.replace("{run3}", run[:3]).replace("{run4}", run[:4]).replace("{RUN4}", run[:4].upper())
              .replace("{other4}", other if other != "abcd" else "ffff").replace("{run}", run))
    filled = [a.replace("{ID}", run_id).replace("{store}", str(store)).replace("{case}", str(tmp_path))
              for a in args]
    before = _snapshot(store, tmp_path)
    result, seconds = _invoke(filled)
    after = _snapshot(store, tmp_path)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    line = _check(result, code, (says,), changed=changed, allowed=set())
    assert "run id" in line or "no run" in line, line
    assert seconds < 10, f"{seconds:.1f} s: refused only after starting something slow"


@pytest.mark.slow
def test_the_measured_peak_is_the_commands_own_not_the_test_process(tmp_path: Path) -> None:
    """A test process that has grown large (here 600 MB) still measures a small command as small: Linux carries
    a parent's peak resident size into a child across exec, which once failed every 200 MB case of a grown
    xdist worker at exactly the worker's own peak."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); ballast = bytearray(600 * 2**20); "
              "ballast[::4096] = b'x' * len(ballast[::4096]); from tests.unit import test_hostile_inputs as t; "
              "from pathlib import Path; print(t._run_child(['--version'], Path(sys.argv[2]))[2])")
    out = subprocess.run([sys.executable, "-c", script, str(ROOT), str(tmp_path)], capture_output=True, text=True,
                         check=True)
    assert float(out.stdout.strip().splitlines()[-1]) < 300, out.stdout
