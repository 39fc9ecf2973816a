"""The quick loop's selection: tests are marked by what they use (tests/markers.py), checked on real collections.

Each test here writes a small suite into a temporary folder, with stand-ins
for the server fixtures under their real names and the conftest hooks of
tests/markers.py, and runs pytest on it in this process (pytester). So what
is checked is what pytest itself selects with the quick loop's ``-m``
expression, not a model of it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from tests import hypothesis_profiles, markers

ROOT = Path(__file__).resolve().parents[2]
QUICK = markers.quick_expression()

CONFTEST = '''
import pytest
from tests.markers import pytest_collection_modifyitems, pytest_fixture_setup  # noqa: F401
from tests.markers import pytest_runtest_call, pytest_runtest_protocol  # noqa: F401
''' + "".join(f'''

@pytest.fixture(scope="session")
def {name}():
    return "{name}"
''' for name in sorted(markers.FIXTURE_MARKERS))


@pytest.fixture
def suite_dir(pytester: pytest.Pytester) -> pytest.Pytester:
    """An empty suite with the real marker registry, the marking hooks and stand-ins for every server fixture."""
    registered = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\nmarkers =\n"
                     + "".join(f"    {line}\n" for line in registered))
    pytester.makeconftest(CONFTEST)
    return pytester


def collected(pytester: pytest.Pytester, *args: str) -> list[pytest.Item]:
    """The tests pytest selects from the suite under ``args`` (after ``-m`` has deselected its part)."""
    recorder = pytester.inline_run("--collect-only", *args)
    (call,) = recorder.getcalls("pytest_collection_finish")
    return list(call.session.items)


def selected(pytester: pytest.Pytester, *args: str) -> set[str]:
    """The names of the tests pytest selects from the suite under ``args``."""
    return {item.name for item in collected(pytester, *args)}


def test_a_test_using_a_server_fixture_is_never_quick(suite_dir: pytest.Pytester) -> None:
    """Named directly, reached through another fixture or via usefixtures: the test leaves the quick loop."""
    suite_dir.mkpydir("tests")
    unit = suite_dir.path / "tests" / "unit"
    unit.mkdir()
    (unit / "test_uses.py").write_text('''
import pytest

@pytest.fixture
def store(s3_locator):
    return s3_locator

@pytest.fixture
def cluster_run(ray_cluster):
    return ray_cluster

def test_plain(tmp_path): pass
def test_s3_directly(s3_endpoint): pass
def test_s3_through_a_fixture(store): pass
def test_ray_through_a_fixture(cluster_run): pass
def test_model_server(model_server): pass
def test_browser(driver): pass
def test_rig(rig): pass
def test_token(ray_token): pass

@pytest.mark.usefixtures("s3_locator")
def test_s3_by_usefixtures(): pass

@pytest.mark.slow
def test_slow_by_hand(): pass

@pytest.fixture(params=["local", "s3"])
def backend(request):
    return request.param

def test_backend_pair(backend): pass

@pytest.mark.parametrize("kind", ["local", "s3"])
def test_parametrized_pair(kind): pass
''')
    assert selected(suite_dir, "-m", QUICK) == {"test_plain", "test_backend_pair[local]", "test_parametrized_pair[local]"}
    assert selected(suite_dir, "-m", "s3") == {"test_s3_directly", "test_s3_through_a_fixture", "test_s3_by_usefixtures",
                                               "test_backend_pair[s3]", "test_parametrized_pair[s3]"}
    assert selected(suite_dir, "-m", "ray") == {"test_ray_through_a_fixture", "test_token"}
    assert selected(suite_dir, "-m", "served_server") == {"test_model_server"}
    assert selected(suite_dir, "-m", "browser") == {"test_browser"}
    assert selected(suite_dir, "-m", "multihost") == {"test_rig"}


def test_folders_and_docs_helpers_mark_their_tests(suite_dir: pytest.Pytester) -> None:
    """tests/integration and tests/multihost never run in the quick loop, nor a module using the docs build helpers."""
    for folder in ("unit", "property", "integration", "multihost"):
        (suite_dir.path / "tests" / folder).mkdir(parents=True)
        (suite_dir.path / "tests" / folder / f"test_in_{folder}.py").write_text(f"def test_{folder}(): pass\n")
    (suite_dir.path / "tests" / "unit" / "test_site.py").write_text(
        "from tests.docs_support import require_docs_tools\n\ndef test_site(): pass\n")
    assert selected(suite_dir, "-m", QUICK) == {"test_unit", "test_property"}
    assert selected(suite_dir, "-m", "integration") == {"test_integration"}
    assert selected(suite_dir, "-m", "multihost") == {"test_multihost"}
    assert selected(suite_dir, "-m", "docs") == {"test_site"}


def test_reaching_a_server_fixture_unmarked_fails_and_names_the_marker(suite_dir: pytest.Pytester) -> None:
    """``request.getfixturevalue`` hides a fixture from collection: the test then fails, saying which marker to add.

    That holds also when an earlier test already set the session fixture up.
    """
    suite_dir.makepyfile(test_hidden='''
import pytest

@pytest.mark.ray
def test_marked(request):
    request.getfixturevalue("ray_cluster")

def test_hidden_ray(request):
    request.getfixturevalue("ray_cluster")

def test_hidden_s3(request):
    request.getfixturevalue("s3_locator")

def test_plain():
    pass
''')
    result = suite_dir.runpytest("-p", "no:xdist")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*test_hidden_ray uses the ray_cluster fixture without the 'ray' marker*"
                                 "@pytest.mark.ray*",
                                 "*test_hidden_s3 uses the s3_locator fixture without the 's3' marker*"
                                 "@pytest.mark.s3*"])


def test_shared_resources_stay_on_one_worker(suite_dir: pytest.Pytester) -> None:
    """Under xdist: all Ray and rig tests in one group, a module with a module fixture (or under integration) in its own."""
    tests = suite_dir.path / "tests"
    for folder in ("unit", "integration", "multihost"):
        (tests / folder).mkdir(parents=True)
    (tests / "unit" / "test_a.py").write_text("def test_ray_a(ray_cluster): pass\ndef test_free(): pass\n")
    (tests / "integration" / "test_b.py").write_text("def test_ray_b(ray_cluster): pass\ndef test_crash(): pass\n")
    (tests / "multihost" / "test_c.py").write_text("def test_rig_c(rig): pass\ndef test_host(): pass\n")
    (tests / "unit" / "test_d.py").write_text('''
import pytest

@pytest.fixture(scope="module")
def totals():
    return 1

def test_d1(totals): pass
def test_d2(totals): pass
def test_d3(): pass
''')
    items = collected(suite_dir)
    groups = {item.name: (m.args[0] if (m := item.get_closest_marker("xdist_group")) else None) for item in items}
    assert groups == {"test_ray_a": "clusters", "test_free": None, "test_ray_b": "clusters",
                      "test_crash": "tests/integration/test_b.py", "test_rig_c": "clusters",
                      "test_host": "clusters", "test_d1": "tests/unit/test_d.py", "test_d2": "tests/unit/test_d.py",
                      "test_d3": None}


def test_under_xdist_a_group_really_runs_on_one_worker(suite_dir: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """With two workers, the Ray and rig tests of several modules, and the tests of a module sharing a
    module fixture, each run on one worker (xdist reads the groups, so the markers must be there first)."""
    tests = suite_dir.path / "tests"
    (tests / "unit").mkdir(parents=True)
    record = '''
import os, pathlib, pytest

@pytest.fixture(autouse=True)
def _where(request):
    folder = pathlib.Path(os.environ["WHERE"])
    (folder / request.node.name).write_text(os.environ.get("PYTEST_XDIST_WORKER", "none"))
'''
    for name in "abcd":
        body = "".join(f"def test_{name}_ray{i}(ray_cluster): pass\ndef test_{name}_free{i}(): pass\n" for i in range(4))
        (tests / "unit" / f"test_{name}.py").write_text(record + body)
    (tests / "unit" / "test_e.py").write_text(record + "@pytest.fixture(scope='module')\ndef shared():\n    return 1\n"
                                               + "".join(f"def test_e{i}(shared): pass\n" for i in range(8)))
    (tests / "unit" / "test_f.py").write_text(record + "def test_f_rig(rig): pass\n")
    where = suite_dir.path / "where"
    where.mkdir()
    monkeypatch.setenv("WHERE", str(where))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = suite_dir.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-v")
    result.assert_outcomes(passed=41)
    ran = {path.name: path.read_text() for path in where.iterdir()}
    assert len({ran[n] for n in ran if "ray" in n or "rig" in n}) == 1, ran
    assert len({ran[n] for n in ran if n.startswith("test_e")}) == 1, ran
    assert set(ran.values()) == {"gw0", "gw1"}, "the free tests spread over both workers"


def test_every_marker_is_registered_and_the_quick_loop_leaves_out_every_automatic_one() -> None:
    """pyproject registers each marker the rules add, and the quick expression excludes all of them."""
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":", 1)[0] for line in ini["markers"]}
    automatic = {*markers.FIXTURE_MARKERS.values(), *markers.PARAM_MARKERS.values(),
                 *markers.FOLDER_MARKERS.values(), *markers.MODULE_MARKERS.values()}
    assert automatic <= set(markers.QUICK_EXCLUDES)
    assert registered == set(markers.QUICK_EXCLUDES), "a marker the quick loop keeps needs a reason here"
    assert "--dist loadgroup" in ini["addopts"]


def test_the_quick_expression_is_the_one_documented() -> None:
    """pyproject's comment, the README and the testing page show the expression scripts/test.sh uses."""
    assert QUICK == "not (integration or ray or s3 or served_server or browser or docs or multihost or slow)"
    assert f'-m "{QUICK}"' in (ROOT / "pyproject.toml").read_text()
    for doc in ("README.md", "docs/testing.md"):
        text = " ".join((ROOT / doc).read_text().split())
        assert "scripts/test.sh --quick" in text and QUICK in text, doc
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "from tests.markers import quick_expression" in script
    assert '"$status" -eq 5' in script  # a run that collects no test still fails


@pytest.mark.parametrize(("environ", "profile", "count"), [
    ({"CI": "true"}, "ci", 60), ({}, "dev", 20), ({"CI": "false"}, "dev", 20),
    ({"EMBERBENCH_HYPOTHESIS_PROFILE": "ci"}, "ci", 60), ({"CI": "true", "EMBERBENCH_HYPOTHESIS_PROFILE": "dev"}, "dev", 20),
])
def test_ci_keeps_the_full_example_count(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], profile: str,
                                         count: int) -> None:
    """CI runs every property at full strength; elsewhere a third of it, and a test's own count scales alike."""
    for name in ("CI", "EMBERBENCH_HYPOTHESIS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert hypothesis_profiles.profile_name() == profile
    assert hypothesis_profiles.examples(60) == count
    assert hypothesis_profiles.examples(16) == (16 if profile == "ci" else 5)


def test_an_unknown_profile_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBERBENCH_HYPOTHESIS_PROFILE", "fast")
    with pytest.raises(ValueError, match="EMBERBENCH_HYPOTHESIS_PROFILE='fast'"):
        hypothesis_profiles.profile_name()


def test_the_loaded_profile_is_the_environments() -> None:
    """The suite runs under the profile its environment names (so CI=true really means 60 examples)."""
    from hypothesis import settings

    assert settings.get_current_profile_name() == hypothesis_profiles.profile_name()
    expected = os.environ.get("EMBERBENCH_HYPOTHESIS_EXAMPLES")
    assert settings().max_examples == (int(expected) if expected else hypothesis_profiles.examples(60))
