"""The policy code digest: a documented listing of the right files, deterministic, independent of location."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emberbench.errors import PolicyError
from emberbench.provenance.code_digest import emberbench_files, policy_code_digest


def _listing(files: dict[str, bytes]) -> str:
    """The digest the module docstring defines, computed independently."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                    for name, data in sorted(files.items(), key=lambda item: item[0].encode()))
    return hashlib.sha256(lines.encode()).hexdigest()


@pytest.fixture
def package(tmp_path: Path, monkeypatch) -> Path:  # noqa: ANN001
    """A package ``digestpkg`` (with a subpackage, bytecode, a hidden file and data) importable from tmp_path."""
    root = tmp_path / "src" / "digestpkg"
    (root / "agents" / "__pycache__").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "__init__.py").write_bytes(b"")
    (root / "agents" / "__init__.py").write_bytes(b"from ..util import helper\n")
    (root / "agents" / "fire.py").write_bytes(b"def make():\n    return None\n")
    (root / "util.py").write_bytes(b"helper = 1\n")
    (root / "agents" / "__pycache__" / "fire.cpython-311.pyc").write_bytes(b"bytecode")
    (root / ".hidden" / "x.py").write_bytes(b"skipped")
    (root / ".dot.py").write_bytes(b"skipped")
    (root / "weights.bin").write_bytes(b"not source")
    (tmp_path / "src" / "single_policy.py").write_bytes(b"def make():\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    return root


def test_python_policy_lists_every_py_file_of_its_top_level_package(package: Path) -> None:
    """module:factory digests the .py files of the module's top-level package, named <package>/<path>."""
    code = policy_code_digest("digestpkg.agents.fire:make")
    expected = {"digestpkg/__init__.py": b"", "digestpkg/agents/__init__.py": b"from ..util import helper\n",
                "digestpkg/agents/fire.py": b"def make():\n    return None\n", "digestpkg/util.py": b"helper = 1\n"}
    assert (code.rule, code.files, code.digest) == ("python-package", 4, _listing(expected))
    assert policy_code_digest("digestpkg:anything") == code


def test_a_single_module_is_its_own_file(package: Path) -> None:
    """A top-level module file is listed alone, by its file name."""
    code = policy_code_digest("single_policy:make")
    assert (code.rule, code.files) == ("python-module", 1)
    assert code.digest == _listing({"single_policy.py": b"def make():\n    return None\n"})


def test_the_digest_follows_source_changes_only(package: Path) -> None:
    """Changing a .py file changes the digest; bytecode, data and hidden files do not; a new .py does."""
    before = policy_code_digest("digestpkg.agents.fire:make")
    (package / "weights.bin").write_bytes(b"other")
    (package / "agents" / "__pycache__" / "fire.cpython-311.pyc").write_bytes(b"other")
    assert policy_code_digest("digestpkg.agents.fire:make") == before
    (package / "util.py").write_bytes(b"helper = 2\n")
    changed = policy_code_digest("digestpkg.agents.fire:make")
    assert changed.digest != before.digest
    (package / "agents" / "new.py").write_bytes(b"")
    assert policy_code_digest("digestpkg.agents.fire:make").files == 5


def test_the_digest_does_not_depend_on_location_or_working_folder(package: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:  # noqa: ANN001
    """The same files in another folder, seen from another working folder, give the same digest."""
    import shutil

    here = policy_code_digest("digestpkg:make")
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "src", moved)
    monkeypatch.syspath_prepend(str(moved))
    for name in [m for m in sys.modules if m.startswith("digestpkg")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.chdir(tmp_path)
    again = policy_code_digest("digestpkg:make")
    assert again == here


def test_builtin_and_served_policies_digest_emberbench_itself() -> None:
    """Built-ins and openai: name EMBERBench's own source, store and Ray runner included, deterministically."""
    greedy = policy_code_digest("greedy")
    assert greedy.rule == "emberbench" and policy_code_digest("random") == greedy
    assert policy_code_digest("openai:gpt-test") == greedy == policy_code_digest("emberbench.policies:GreedyPolicy")
    names = set(emberbench_files())
    assert {"emberbench/__init__.py", "emberbench/store/core.py", "emberbench/cluster/session.py",
            "emberbench/provenance/code_digest.py"} <= names
    assert all(n.endswith(".py") and "__pycache__" not in n for n in names) and greedy.files == len(names)


def test_digesting_emberbench_does_not_import_ray() -> None:
    """The cluster package is located, never imported: the core stays free of ray."""
    code = ("import sys; from emberbench.provenance import policy_code_digest; policy_code_digest('greedy');"
            "print('ray' in sys.modules, 'emberbench.cluster' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_command_policy_digests_the_executable_on_path_and_named_files(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """cmd: the executable (looked up on PATH) and every later word that names a file, by the word as written."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "my-agent"
    exe.write_bytes(b"#!/bin/sh\n")
    exe.chmod(0o755)
    (tmp_path / "agent.py").write_bytes(b"print(1)\n")
    (tmp_path / "conf").mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    code = policy_code_digest("cmd:my-agent agent.py --depth 3 missing.py conf")
    assert (code.rule, code.files) == ("command", 2)
    assert code.digest == _listing({"my-agent": b"#!/bin/sh\n", "agent.py": b"print(1)\n"})
    (tmp_path / "agent.py").write_bytes(b"print(2)\n")
    assert policy_code_digest("cmd:my-agent agent.py --depth 3 missing.py conf").digest != code.digest
    assert policy_code_digest("cmd:./agent.py", cwd=tmp_path).files == 1


@pytest.mark.parametrize(("spec", "message"), [
    ("cmd:no-such-agent-anywhere x", "executable 'no-such-agent-anywhere' not found"),
    ("cmd:", "empty"),
    ("cmd:'unclosed", "cannot split"),
    ("no_such_module_xyz:make", "cannot find package 'no_such_module_xyz'"),
    ("sys:exit", "has no source file"),
    ("not-a-known-policy", "cannot be digested"),
])
def test_undigestable_policies_are_refused_in_one_line(spec: str, message: str) -> None:
    """A policy whose code cannot be found is an error, never an empty or guessed digest."""
    with pytest.raises(PolicyError, match=message) as info:
        policy_code_digest(spec)
    assert "\n" not in str(info.value)


def test_entry_point_policy_digests_its_distributions_record(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """An entry point is digested by its distribution's RECORD file."""
    site = tmp_path / "site"
    info = site / "fake_policy-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-policy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[emberbench.policies]\nfake-digest-policy = fake_policy:make\n")
    record = b"fake_policy.py,sha256=abc,10\nfake_policy-1.0.dist-info/RECORD,,\n"
    (info / "RECORD").write_bytes(record)
    monkeypatch.syspath_prepend(str(site))
    code = policy_code_digest("fake-digest-policy")
    assert (code.rule, code.files) == ("entry-point", 1)
    assert code.digest == _listing({"fake-policy/RECORD": record})
