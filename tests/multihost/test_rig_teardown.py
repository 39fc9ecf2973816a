"""The rig's teardown after a crash: what a killed rig left (namespaces, processes, files) is found and removed.

Each test builds a small rig of its own (hosts and network, no services; its
own prefix and root), lets its owner die, and checks what ``down`` or the
next ``up`` removes. The state file's reader is checked without root.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.rig import Rig, RigConfig, RigError, RigUnavailable
from tests.rig import net, state

from .conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ebcrash"

_OWNER = """
import sys, time
from pathlib import Path
from tests.rig import Rig, RigConfig
rig = Rig(RigConfig(prefix=sys.argv[1], root=Path(sys.argv[2]), services=False)).up(owned=True)
for host in rig.state.hosts:
    rig.start(host, "sleep", ["sleep", "600"])
print("ready", flush=True)
time.sleep(600)
"""


@pytest.fixture
def config(tmp_path: Path) -> Iterator[RigConfig]:
    """A network-only rig config of this test's own; after the test nothing of its prefix may be left."""
    try:
        net.require_tools()
    except RigUnavailable as exc:
        unavailable(str(exc))
    config = RigConfig(prefix=PREFIX, root=tmp_path / "rig", services=False)
    yield config
    Rig(config).down()  # in case the test failed half-way
    assert not [ns for ns in net.namespaces() if ns.startswith(f"{PREFIX}-")]


def _owner(config: RigConfig) -> subprocess.Popen[str]:
    """A process that builds the rig, starts a sleeper on every host, and then waits to be killed."""
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, config.prefix, str(config.folder)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None and owner.stdout.readline() == "ready\n"
    return owner


def _crashed(config: RigConfig) -> tuple[list[str], list[state.Process]]:
    """Build a rig in an owner process and SIGKILL the owner (no cleanup runs); what it left."""
    owner = _owner(config)
    owner.kill()
    owner.wait()
    return _left(config)


def _left(config: RigConfig) -> tuple[list[str], list[state.Process]]:
    """The rig's namespaces that exist, and the recorded processes still alive."""
    recorded = state.load(config.folder / "state.json")
    assert recorded is not None
    live = [p for p in recorded.processes if net.same_process(p.pid, p.start)]
    return [ns for ns in net.namespaces() if ns.startswith(f"{config.prefix}-")], live


@pytest.mark.multihost(seconds=120)
def test_down_after_the_owner_was_killed_removes_everything(config):
    """SIGKILL to the rig's owner runs no cleanup; ``down`` then ends its processes and deletes its namespaces."""
    namespaces, live = _crashed(config)
    assert sorted(namespaces) == sorted(f"{PREFIX}-{h}" for h in ["net", "s3", "head", "w1", "w2", "client"])
    assert {p.role for p in live} == {"host", "sleep"} and len(live) == 10
    Rig(config).down()
    assert not [ns for ns in net.namespaces() if ns.startswith(f"{PREFIX}-")]
    assert not [p.pid for p in live if net.same_process(p.pid, p.start)]
    assert not config.folder.exists()


@pytest.mark.multihost(seconds=120)
def test_the_next_up_removes_a_crashed_rig_and_what_its_state_file_missed(config):
    """A crashed rig, plus a namespace of its prefix that its state never recorded: the next ``up`` removes both."""
    _, live = _crashed(config)
    net.ip("netns", "add", f"{PREFIX}-stray")  # made in the instant before a crash, never recorded
    rig = Rig(config).up(owned=True)
    try:
        assert not [p.pid for p in live if net.same_process(p.pid, p.start)]
        assert f"{PREFIX}-stray" not in net.namespaces()
        assert rig.leftovers() == []
        assert rig.run("w1", ["ip", "-o", "-4", "addr", "show", "eth0"], timeout=30).stdout.split()[3] == \
            f"{rig.address('w1')}/24"
    finally:
        rig.down()
    assert rig.remains() == []


@pytest.mark.multihost(seconds=120)
def test_sigterm_to_the_owner_tears_the_rig_down(config):
    """SIGTERM to the owner: its handler tears the rig down, then the owner ends as SIGTERM ends it."""
    owner = _owner(config)
    _, live = _left(config)
    owner.send_signal(signal.SIGTERM)
    assert owner.wait(60) == -signal.SIGTERM
    assert not [ns for ns in net.namespaces() if ns.startswith(f"{PREFIX}-")]
    assert not [p.pid for p in live if net.same_process(p.pid, p.start)]


@pytest.mark.multihost(seconds=60)
def test_up_refuses_a_rig_whose_owner_is_alive(config):
    """A second ``up`` of the same prefix while the first owner lives is refused, and the first rig is untouched."""
    owner = _owner(config)
    try:
        with pytest.raises(RigUnavailable, match=f"in use by process {owner.pid}"):
            Rig(config).up()
        namespaces, live = _left(config)
        assert len(namespaces) == 6 and len(live) == 10
    finally:
        owner.kill()
        owner.wait()


def test_a_recorded_pid_is_signalled_only_while_it_is_the_same_process():
    """A pid in the state file with another start time is a reused number: never killed."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        started = net.start_time(sleeper.pid)
        assert started is not None and net.same_process(sleeper.pid, started)
        net.kill_recorded([(sleeper.pid, started + 1)])
        time.sleep(0.1)
        assert sleeper.poll() is None
        net.kill_recorded([(sleeper.pid, started)])
        assert sleeper.wait(10) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


@pytest.mark.parametrize("text, reason", [
    ('{"rig_state": "2.0"}', "not a rig_state 1.0 document"),
    ("[]", "must be a JSON object"),
    ("{", "not valid JSON"),
    ("{}" + " " * (1 << 20), "exceeds the cap of 1048576 bytes"),
    (json.dumps({"rig_state": "1.0", "prefix": "p"}), "missing or unknown"),
    (json.dumps({"rig_state": "1.0", "prefix": "p", "subnet": "10.1.2.0/24", "owner": None, "namespaces": [],
                 "hosts": {}, "processes": [{"host": "h", "role": "r", "pid": 1, "start": 5, "log": "l"}]}),
     "bad process entry"),
])
def test_the_state_reader_refuses_what_it_does_not_understand(tmp_path, text, reason):
    """An unknown version, a damaged or incomplete file: one-line RigError (``down`` then goes by the prefix)."""
    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(RigError, match=reason):
        state.load(path)


def test_the_state_file_round_trips(tmp_path):
    """What the rig records is what it reads back."""
    recorded = state.RigState(prefix="p", subnet="10.1.2.0/24", owner={"pid": os.getpid(), "start": 7},
                              namespaces=["p-net", "p-w1"], hosts={"w1": state.Host("p-w1", "10.1.2.21", "w1")},
                              processes=[state.Process("w1", "ray", 4242, 99, "logs/w1-ray.log")])
    state.save(tmp_path / "state.json", recorded)
    assert state.load(tmp_path / "state.json") == recorded
    assert state.load(tmp_path / "absent.json") is None
