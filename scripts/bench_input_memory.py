#!/usr/bin/env python3
"""Peak memory of EMBERBench's readers on large and hostile JSON inputs (docs/formats.md, "Input policy").

For each reader and each input shape (a long JSON string, a list of small
integers, a list of empty objects, nested arrays), this writes a file of the
given size, runs the command that reads it in a child process and reports the
child's peak resident memory (``ru_maxrss`` from ``wait4``), its exit status,
its time and the first line it printed on stderr.

    python scripts/bench_input_memory.py [--mb 200] [--only manifest,record] [--source DIR]

``--source DIR`` runs the EMBERBench source tree in DIR instead of the
installed one (to measure an older version, e.g. ``git archive`` of a commit),
using this interpreter's installed dependencies.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHAPES = {
    "string": (b'"', b"a", b'"'),
    "int-list": (b"[", b"0,", b"0]"),
    "object-list": (b"[", b"{},", b"{}]"),
    "nested": (b"", b"[", b""),
    "objects-in-object": (b'{"x":[', b"{},", b"{}]}"),
    "strings-in-object": (b'{"x":[', b'"ab",', b'"ab"]}'),
}


def write_shape(path: Path, shape: str, size: int) -> None:
    """Write a JSON document of ``shape`` of about ``size`` bytes (``nested``: ``[`` repeated, unclosed).

    The ``-in-object`` shapes pass a reader's first check (a JSON object) and
    so reach the value cap or the parser: sized at a kind's value cap, they
    give that kind's worst case.
    """
    head, unit, tail = SHAPES[shape]
    count = max(1, (size - len(head) - len(tail)) // len(unit))
    block = unit * 65536
    with path.open("wb") as handle:
        handle.write(head)
        left = count
        while left:
            step = min(left, 65536)
            handle.write(block if step == 65536 else unit * step)
            left -= step
        handle.write(tail)


def cases(folder: Path) -> dict[str, tuple[list[str], Path]]:
    """Reader name -> (command line with ``{}`` for the input, where the input goes)."""
    from emberbench.sim.suite import public_suite_path

    suite = folder / "suite"
    shutil.copytree(public_suite_path(), suite)
    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "task-grouped-rates" / "input.json"
    return {
        "manifest": (["manifest", "show", "{}"], folder / "m.json"),
        "record": (["replay", "{}"], folder / "r.json"),
        "result": (["verify", "{}"], folder / "res.json"),
        "suite": (["suite", "list", "--suite", str(suite)], suite / "suite.json"),
        "scenario": (["suite", "list", "--suite", str(suite)],
                     next(iter(sorted((suite / "scenarios").iterdir())))),
        "grouped-rates-input": (["grouped-rates", "--input", "{}"], folder / "gr.json"),
        "grouped-rates-expect": (["grouped-rates", "--input", str(example), "--expect", "{}"], folder / "exp.json"),
    }


def run(args: list[str], source: str | None, cwd: Path) -> tuple[int, float, float, str]:
    """Run ``emberbench args``; return (exit status, peak MB, seconds, first stderr line)."""
    env = dict(os.environ)
    command = [sys.executable]
    if source:
        site = next(p for p in sys.path if p.endswith("site-packages"))
        env["PYTHONPATH"] = os.pathsep.join([source, site])
        command.append("-S")  # no site hooks: the source tree, not the installed package
    command += ["-m", "emberbench.cli.main", *args]
    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    first = next((line for line in err.decode("utf-8", "replace").splitlines() if line.strip()), "")
    return child.returncode, usage.ru_maxrss / 1024, time.monotonic() - start, first[:110]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="input size in MB (default 200)")
    parser.add_argument("--only", default="", help="comma-separated readers (default: all)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    parser.add_argument("--source", default=None, help="run the EMBERBench source tree in this folder")
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    with tempfile.TemporaryDirectory(prefix="ember-mem-") as tmp:
        folder = Path(tmp)
        table = cases(folder)
        wanted = [name for name in table if not args.only or name in args.only.split(",")]
        print(f"{'reader':22} {'shape':12} {'MB in':>7} {'exit':>4} {'peak MB':>8} {'s':>6}  first stderr line")
        for name in wanted:
            command, target = table[name]
            original = target.read_bytes() if target.exists() else None
            for shape in args.shapes.split(","):
                write_shape(target, shape, size)
                line = [a.replace("{}", str(target)) for a in command]
                code, peak, seconds, first = run(line, args.source, folder)
                print(f"{name:22} {shape:12} {size / 1e6:7.0f} {code:4} {peak:8.0f} {seconds:6.1f}  {first}",
                      flush=True)
            if original is not None:
                target.write_bytes(original)
            else:
                target.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
