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
from emberbench.manifest import EvaluationManifest, ManifestEntry, write_manifest
from emberbench.runner import run_evaluation
from emberbench.suite import public_suite_path
from tests.conftest import ROOT

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

@pytest.fixture(scope="module", autouse=True)
def _command_built_once() -> Iterator[None]:
    """typer rebuilds the whole click command tree on every invocation (about 70 ms); this module makes
    some 550, so it builds the tree once (the same object typer would build) and hands it back."""
    import typer.testing

    real = typer.testing._get_command
    built = real(app)
    typer.testing._get_command = lambda given: built if given is app else real(given)
    yield
    typer.testing._get_command = real


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
    return folder


@dataclass(frozen=True)
class Template:
    """A command line with one slot; ``{X}`` is the hostile path, ``{good}`` the valid material's folder.

    Attributes:
        option: an option the error may name instead of the file (a report
            that differs from ``--expect`` names the option).
    """

    name: str
    args: tuple[str, ...]
    slot: str = "x.json"
    suite_copy: bool = False
    outputs: tuple[str, ...] = field(default=())
    option: str | None = None


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
    Template("view", ("view", "{X}", "--out", "{case}/v.html"), outputs=("v.html",)),
    Template("report", ("report", "{X}", "{good}/b.json", "--out", "{case}/rep", "--resamples", "100"),
             outputs=("rep",)),
    Template("report --stats", ("report", "{good}/a.json", "{good}/b.json", "--stats", "{X}", "--out", "{case}/rep",
                                "--resamples", "100"), outputs=("rep",)),
    Template("plot", ("plot", "egress", "{X}", "--scenario", SCENARIO, "--out", "{case}/f.svg"), outputs=("f.svg",)),
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
]

OUTPUT_TEMPLATES = [
    Template("manifest build --out", ("manifest", "build", "--seeds", "0", "--out", "{X}")),
    Template("episode --record", ("episode", SCENARIO, "--record", "{X}")),
    Template("run --out", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                           "--out", "{X}", "--executor", "local", "--no-store")),
    Template("run --out (store)", ("run", "--manifest", "{good}/m.json", "--policy", "greedy", "--model-id", "m",
                                   "--out", "{X}", "--executor", "local", "--store", "{case}/store")),
    Template("pair --out", ("pair", "{good}/a.json", "{good}/b.json", "--out", "{X}")),
    Template("stats --out", ("stats", "{good}/a.json", "--resamples", "100", "--out", "{X}")),
    Template("compare --out", ("compare", "{good}/a.json", "{good}/b.json", "--resamples", "100", "--out", "{X}")),
    Template("view --out", ("view", "{good}/r.json", "--out", "{X}")),
    Template("plot --out", ("plot", "egress", "{good}/a.json", "--scenario", SCENARIO, "--out", "{X}")),
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
    """Every path under ``roots`` (links not followed): type and mode, inode, size, modification time."""
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


def _run_child(args: list[str], cwd: Path) -> tuple[int, str, float, float]:
    """Run the CLI in a child; return (exit status, stderr, peak resident MB, seconds)."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "emberbench.cli.main", *args], cwd=cwd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), err, usage.ru_maxrss / 1024, time.monotonic() - start


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
