"""The damage table (issue 25): every part of a signed run and of the store's history, damaged every way, on both backends.

Each row damages one part of a finished, signed run around the store (plain
file writes, or plain S3 PUT/DELETE/COPY calls), as an accident or a careless
hand would. For every row, ``store audit`` and ``store fsck --connectivity``
must agree that the store is damaged (each names the damaged part), and
``store fsck --repair`` must either repair it (afterwards fsck passes and
audit says ok) or report it in one ``NOT repaired`` line with the reason.
Two parts are never rebuilt: an attestation object (it needs its signer's
key) and an entry of the ref log (write-once history is never rewritten):
those rows are reported.

Parts: a record object, the result object, the ``results/`` ref, the journal
(a local file, or S3 segments), the run-info (object and ``runs/`` ref), the
attestation, the ref log (one entry of it) and the catalog index (object and
``catalog/index`` ref). Damage: deleted, truncated, flipped, replaced (by
other valid bytes of the store, or re-pointed), reordered (swapped with
another part, or, for the run-info and the index, the ref moved back to an
earlier one). The journal also gets the S3 cases of defect 3 (segment 0, a
middle or the last segment deleted, an extra or a garbage segment, segment 2
overwritten by segment 1) and their local equivalents. The template store
holds a catalog index, so every row also checks that repairs keep it
current, and the index and ref log rows check that ``runs ls`` never lists
what a damaged index says.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emberbench.evaluation import store_runner
from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.provenance import attest_run
from emberbench.provenance.attest import attestation_ref
from emberbench.runs.catalog import CatalogRow
from emberbench.runs.index import INDEX_REF, CatalogIndex, IndexedRun, parse_index, query_index, reindex
from emberbench.store.journal import ENTRY, FINISH, HEADER, encode_entry
from emberbench.store.reflog import encode_entry as encode_log_entry
from emberbench.store.s3_journal import list_segments, piece_metadata, segment_key
from tests.run_support import invoke, small_manifest
from tests.unit.provenance.support import fixed_key


class Raw:
    """Reaches a store's bytes around the store, the same way on both backends."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.s3 = store.locator.startswith("s3://")

    # -- any entry by its store-relative name ------------------------------------------------

    def read(self, rel: str) -> bytes:
        if self.s3:
            b = self.store.backend
            return b.client.get_object(Bucket=b.bucket, Key=b.prefix + rel)["Body"].read()
        return (self.store.root / rel).read_bytes()

    def write(self, rel: str, data: bytes, **extra: Any) -> None:
        if self.s3:
            b = self.store.backend
            b.client.put_object(Bucket=b.bucket, Key=b.prefix + rel, Body=data, **extra)
            return
        path = self.store.root / rel
        if path.exists():
            os.chmod(path, 0o644)
        path.write_bytes(data)

    def delete(self, rel: str) -> None:
        if self.s3:
            b = self.store.backend
            b.client.delete_object(Bucket=b.bucket, Key=b.prefix + rel)
            return
        (self.store.root / rel).unlink()

    def swap(self, a: str, b: str) -> None:
        if self.s3:  # copies keep their metadata, as a careless `aws s3 mv` would
            backend = self.store.backend
            client, bucket = backend.client, backend.bucket
            client.copy_object(Bucket=bucket, Key=backend.prefix + "swap.tmp",
                               CopySource={"Bucket": bucket, "Key": backend.prefix + a})
            client.copy_object(Bucket=bucket, Key=backend.prefix + a, CopySource={"Bucket": bucket,
                                                                                 "Key": backend.prefix + b})
            client.copy_object(Bucket=bucket, Key=backend.prefix + b,
                               CopySource={"Bucket": bucket, "Key": backend.prefix + "swap.tmp"})
            client.delete_object(Bucket=bucket, Key=backend.prefix + "swap.tmp")
            return
        first, second = self.read(a), self.read(b)
        self.write(a, second)
        self.write(b, first)

    def truncate(self, rel: str) -> None:
        data = self.read(rel)
        self.write(rel, data[: len(data) // 2])

    def flip(self, rel: str, at: float = 0.6) -> None:
        data = bytearray(self.read(rel))
        data[int(len(data) * at)] ^= 0x10
        self.write(rel, bytes(data))

    # -- the run's parts ------------------------------------------------------------------------

    @staticmethod
    def obj(key: str) -> str:
        return f"objects/{key[:2]}/{key[2:]}"

    def journal_file(self, run: str) -> str:
        return f"journals/{run}.journal"

    def segment(self, run: str, seq: int) -> str:
        return f"journals/{run}/{seq:010d}"

    def write_journal(self, run: str, data: bytes) -> None:
        """Replace the local journal file by ``data``."""
        self.write(self.journal_file(run), data)

    @staticmethod
    def entry(seq: int) -> str:
        """Ref log entry ``seq``."""
        return f"reflog/{seq:012d}"

    def flip_in(self, rel: str, marker: bytes, at: int, mask: int = 0x10) -> None:
        """Flip bits of the byte ``at`` bytes into the JSON string value that follows ``marker``."""
        data = bytearray(self.read(rel))
        data[data.index(marker) + len(marker) + at] ^= mask
        self.write(rel, bytes(data))


class Run:
    """The signed run of a damage case: its store and the keys and refs of its parts."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.raw = Raw(store)
        (self.name,) = store.journal_names()
        state = store.read_journal(self.name)
        self.records = [e.data["digest"] for e in state.entries[1:]]
        self.result = store.refs.get(f"results/{self.name}")
        self.info = store.refs.get(run_info_ref(self.name))
        self.attestation = store.refs.get(attestation_ref(self.name))
        self.entries = state.entries
        self.finish = state.finish
        self.index = store.refs.get(INDEX_REF)
        log = [e for e in store.refs.log.entries()]
        # The index's first version, superseded by the one the ref names: an entry inside the log, whose
        # successor is the attestation's (the current index's anchor); the newest is the index's last change.
        first = next(e for e in log if e.ref == INDEX_REF)
        self.older_index, self.inner, self.newest = first.new, first.seq, log[-1].seq
        self.log = log

    def ref(self, what: str) -> str:
        return f"refs/{what}/{self.name}"

    def frames(self) -> list[bytes]:
        """The journal's entry frames (header entry first), then the finish marker's."""
        return [encode_entry(ENTRY, e.data, e.keys) for e in self.entries] + \
            [encode_entry(FINISH, self.finish.data, self.finish.keys)]


def _other_run_info(run: Run) -> str:
    """A run-info of another run, stored (a ref re-pointed at it is damage)."""
    info = read_run_info(run.store, run.name)
    return run.store.put(info.replace(run="run-" + "0" * 64).to_bytes())


def _earlier_run_info(run: Run) -> str:
    """The run's run-info as it was at its start, stored (the ref moved back in the run's history)."""
    info = read_run_info(run.store, run.name)
    return run.store.put(info.replace(state="running", ended=None, result=None, episodes_done=0).to_bytes())


def _forged_index(run: Run) -> str:
    """An index object like the run's own, but listing the run with a forged run-info (stored)."""
    index = parse_index(run.store.get(run.index))
    item = index.runs[run.name]
    forged = item.row.info.replace(model_id="forged-model", user="mallory")
    runs = {**index.runs, run.name: IndexedRun(item.key, CatalogRow(run.name, forged, None))}
    return run.store.put(CatalogIndex(index.position, index.entry, runs).to_bytes())


def _forged_entry(run: Run, seq: int) -> bytes:
    """Entry ``seq`` rewritten by another hand: well formed, with its own number and predecessor."""
    entry = run.log[seq]
    return encode_log_entry(type(entry)(seq, entry.ref, entry.old, entry.new, entry.time, "mallory@elsewhere",
                                        entry.run, entry.prev, None))


# Each damage: (part, how, backends, function of the run). "both" rows run on each backend.
Damage = Callable[[Run], None]
ROWS: list[tuple[str, str, str, Damage]] = [
    ("record", "deleted", "both", lambda r: r.raw.delete(Raw.obj(r.records[1]))),
    ("record", "truncated", "both", lambda r: r.raw.truncate(Raw.obj(r.records[1]))),
    ("record", "flipped", "both", lambda r: r.raw.flip(Raw.obj(r.records[1]))),
    ("record", "replaced", "both", lambda r: r.raw.write(Raw.obj(r.records[1]), r.raw.read(Raw.obj(r.records[2])))),
    ("record", "reordered", "both", lambda r: r.raw.swap(Raw.obj(r.records[1]), Raw.obj(r.records[2]))),
    ("result", "deleted", "both", lambda r: r.raw.delete(Raw.obj(r.result))),
    ("result", "truncated", "both", lambda r: r.raw.truncate(Raw.obj(r.result))),
    ("result", "flipped", "both", lambda r: r.raw.flip(Raw.obj(r.result))),
    ("result", "replaced", "both", lambda r: r.raw.write(Raw.obj(r.result), r.raw.read(Raw.obj(r.records[0])))),
    ("result", "reordered", "both", lambda r: r.raw.swap(Raw.obj(r.result), Raw.obj(r.records[0]))),
    ("result ref", "deleted", "both", lambda r: r.raw.delete(r.ref("results"))),
    ("result ref", "truncated", "both", lambda r: r.raw.truncate(r.ref("results"))),
    ("result ref", "flipped", "both", lambda r: r.raw.write(r.ref("results"), (
        ("0" if r.result[10] != "0" else "1").join((r.result[:10], r.result[11:])) + "\n").encode())),
    ("result ref", "replaced", "both", lambda r: r.raw.write(r.ref("results"), f"{r.records[0]}\n".encode())),
    ("result ref", "reordered", "both", lambda r: r.raw.swap(r.ref("results"), r.ref("runs"))),
    ("journal", "deleted", "local", lambda r: r.raw.delete(r.raw.journal_file(r.name))),
    ("journal", "truncated", "local", lambda r: r.raw.truncate(r.raw.journal_file(r.name))),
    ("journal", "flipped", "local", lambda r: r.raw.flip(r.raw.journal_file(r.name), 0.4)),
    ("journal", "replaced", "local", lambda r: r.raw.write_journal(r.name, HEADER + b"".join(
        r.frames()[:2] + [r.frames()[0]] + r.frames()[3:]))),
    ("journal", "reordered", "local", lambda r: r.raw.write_journal(r.name, HEADER + b"".join(
        [r.frames()[1], r.frames()[0]] + r.frames()[2:]))),
    ("journal", "header lost", "local", lambda r: r.raw.write_journal(r.name, HEADER + b"".join(r.frames()[1:]))),
    ("journal", "extra entry", "local", lambda r: r.raw.write_journal(r.name, HEADER + b"".join(
        r.frames() + [r.frames()[2]]))),
    ("journal", "garbage after its end", "local", lambda r: r.raw.write_journal(
        r.name, HEADER + b"".join(r.frames()) + b"EJ\x00\x00garbage")),
    ("journal", "deleted", "s3", lambda r: [r.raw.delete(s[1][len(r.store.backend.prefix):])
                                            for s in list_segments(r.store.backend, r.name)[0]]),
    ("journal", "segment 0 deleted", "s3", lambda r: r.raw.delete(r.raw.segment(r.name, 0))),
    ("journal", "middle segment deleted", "s3", lambda r: r.raw.delete(r.raw.segment(r.name, 3))),
    ("journal", "last segment deleted", "s3", lambda r: r.raw.delete(r.raw.segment(r.name, 6))),
    ("journal", "truncated", "s3", lambda r: r.raw.truncate(r.raw.segment(r.name, 3))),
    ("journal", "flipped", "s3", lambda r: r.raw.flip(r.raw.segment(r.name, 3))),
    ("journal", "replaced", "s3", lambda r: r.raw.write(r.raw.segment(r.name, 2), r.raw.read(r.raw.segment(r.name, 1)))),
    ("journal", "reordered", "s3", lambda r: r.raw.swap(r.raw.segment(r.name, 3), r.raw.segment(r.name, 4))),
    ("journal", "header emptied", "s3", lambda r: r.raw.write(r.raw.segment(r.name, 1), b"",
                                                             Metadata=piece_metadata(r.name, 1))),
    ("journal", "extra segment", "s3", lambda r: r.raw.write(r.raw.segment(r.name, 7), r.raw.read(r.raw.segment(r.name, 3)))),
    ("journal", "garbage segment", "s3", lambda r: r.raw.write(r.raw.segment(r.name, 7), b"garbage")),
    ("run-info", "deleted", "both", lambda r: r.raw.delete(r.ref("runs"))),
    ("run-info", "truncated", "both", lambda r: r.raw.truncate(Raw.obj(r.info))),
    ("run-info", "flipped", "both", lambda r: r.raw.flip(Raw.obj(r.info))),
    ("run-info", "replaced", "both", lambda r: r.raw.write(r.ref("runs"), f"{_other_run_info(r)}\n".encode())),
    ("run-info", "reordered", "both", lambda r: r.raw.write(r.ref("runs"), f"{_earlier_run_info(r)}\n".encode())),
    ("attestation", "deleted", "both", lambda r: r.raw.delete(Raw.obj(r.attestation))),
    ("attestation", "truncated", "both", lambda r: r.raw.truncate(Raw.obj(r.attestation))),
    ("attestation", "flipped", "both", lambda r: r.raw.flip(Raw.obj(r.attestation))),
    ("attestation", "replaced", "both", lambda r: r.raw.write(r.ref("attestations"), f"{r.records[0]}\n".encode())),
    ("attestation", "reordered", "both", lambda r: r.raw.swap(r.ref("attestations"), r.ref("results"))),
    ("attestation", "ref deleted", "both", lambda r: r.raw.delete(r.ref("attestations"))),
    ("ref log", "deleted", "both", lambda r: r.raw.delete(Raw.entry(r.inner))),
    ("ref log", "truncated", "both", lambda r: r.raw.truncate(Raw.entry(r.inner))),
    # One bit of its time: still a well-formed entry; only the chain catches it.
    ("ref log", "flipped", "both", lambda r: r.raw.flip_in(Raw.entry(r.inner), b'"time":"', 18, 0x01)),
    ("ref log", "replaced", "both", lambda r: r.raw.write(Raw.entry(r.inner), r.raw.read(Raw.entry(0)))),
    ("ref log", "forged", "both", lambda r: r.raw.write(Raw.entry(r.inner), _forged_entry(r, r.inner))),
    ("ref log", "reordered", "both", lambda r: r.raw.swap(Raw.entry(r.inner), Raw.entry(r.inner + 1))),
    ("ref log", "newest flipped", "both", lambda r: r.raw.flip_in(Raw.entry(r.newest), b'"prev":"', 5)),
    ("index", "deleted", "both", lambda r: r.raw.delete(Raw.obj(r.index))),
    ("index", "truncated", "both", lambda r: r.raw.truncate(Raw.obj(r.index))),
    ("index", "flipped", "both", lambda r: r.raw.flip(Raw.obj(r.index))),
    ("index", "replaced", "both", lambda r: r.raw.write(f"refs/{INDEX_REF}", f"{_forged_index(r)}\n".encode())),
    ("index", "reordered", "both", lambda r: r.raw.write(f"refs/{INDEX_REF}", f"{r.older_index}\n".encode())),
    ("index", "ref deleted", "both", lambda r: r.raw.delete(f"refs/{INDEX_REF}")),
]
REPORTED = {("attestation", how) for how in ("deleted", "truncated", "flipped")} | {
    ("ref log", how) for part, how, _, _ in ROWS if part == "ref log"}
"""Rows repair reports instead of repairing: an attestation object is rebuilt only by its signer (a ref
re-pointed or deleted is put back from the ref log), and the ref log is write-once history."""


def _names(run: Run, part: str, how: str) -> str:
    """What every line about the damage of a row names: the run, the ref log entry, or the index."""
    if part == "ref log":
        return f"entry {run.newest if how == 'newest flipped' else run.inner}"
    return INDEX_REF if part == "index" else run.name[:16]

CASES = [pytest.param(backend, part, how, damage, id=f"{backend}-{part}-{how}".replace(" ", "_"),
                      # On the test server (a Python process on the same cores) a case takes seconds, not a fraction.
                      marks=[pytest.mark.slow] if backend == "s3" else [])
         for part, how, where, damage in ROWS for backend in ("local", "s3") if where in ("both", backend)]


def _template(out: Path, locator: str, suite: Any) -> None:
    """A finished run (model m, 4 episodes) signed with the fixed test key, and a catalog index built twice;
    on S3, one segment per episode."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_runner, "JOURNAL_BATCH", 1)
        store = open_store(locator)
        run_evaluation(small_manifest(suite), suite, "greedy", "m", out, store=store)
        (name,) = store.journal_names()
        reindex(store)  # an index from before the signature, superseded by the next
        attest_run(store, name, fixed_key(0))
        reindex(store)
        store.close()


BUCKET = "emberbench-damage-table"
"""A bucket of its own: the test server lists a prefix in time proportional to the whole bucket."""
_CASES = iter(range(1_000_000))


@pytest.fixture(scope="module")
def templates(tmp_path_factory, suite, s3_endpoint):  # noqa: ANN001
    """Locators of one signed run's store on each backend, to copy for every case."""
    import boto3

    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)
    tmp = tmp_path_factory.mktemp("damage-template")
    local = str(tmp / "local")
    _template(tmp / "local.json", local, suite)
    remote = f"s3://{BUCKET}/template-{os.getpid()}?endpoint={s3_endpoint}"
    _template(tmp / "s3.json", remote, suite)
    return {"local": local, "s3": remote, "endpoint": s3_endpoint}


@pytest.fixture
def case_store(templates, tmp_path):  # noqa: ANN001
    """A function that copies the template of a backend into a fresh store for one case; S3 copies are removed
    at the end of the case."""
    made: list[Any] = []

    def copy(backend: str) -> str:
        if backend == "local":
            shutil.copytree(templates["local"], tmp_path / "s", symlinks=True)
            return str(tmp_path / "s")
        locator = f"s3://{BUCKET}/case-{next(_CASES):05d}-{os.getpid()}?endpoint={templates['endpoint']}"
        source = open_store(templates["s3"], create=False)
        client, bucket, target = source.backend.client, source.backend.bucket, locator.split("/", 3)[3].split("?")[0]
        for item in source.backend.list_prefix(source.backend.prefix):
            rel = item["Key"][len(source.backend.prefix):]
            if not rel.startswith("leases/"):
                client.copy_object(Bucket=bucket, Key=f"{target}/{rel}", CopySource={"Bucket": bucket,
                                                                                     "Key": item["Key"]})
        made.append((client, target))
        return locator

    yield copy
    for client, prefix in made:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{prefix}/"):
            for item in page.get("Contents", []):
                client.delete_object(Bucket=BUCKET, Key=item["Key"])


@pytest.mark.parametrize(("backend", "part", "how", "damage"), CASES)
def test_damage_is_found_alike_and_repaired_or_reported(backend, part, how, damage, case_store, suite) -> None:  # noqa: ANN001
    """fsck and audit agree the store is damaged; `fsck --repair` repairs it, or says in one line why not."""
    locator = case_store(backend)
    store = open_store(locator, create=False)
    assert invoke("store", "audit", "--store", locator).exit_code == 0  # the copy is sound
    run = Run(store)
    if backend == "s3":
        assert [seq for seq, _, _ in list_segments(store.backend, run.name)[0]] == list(range(7))
    damage(run)
    names = _names(run, part, how)
    audit = invoke("store", "audit", "--store", locator)
    check = invoke("store", "fsck", "--store", locator, "--connectivity")
    # A run's damage is the run's verdict (audit: `damaged  run-…`, fsck: `damaged  run run-…`); history's is a line
    # of its own naming the entry, the index or the ref.
    history = part in ("ref log", "index") or how == "ref deleted"
    for found in (audit, check):
        assert found.exit_code == 1, found.output
        assert any(line.startswith("damaged ") and names in line if history else
                   line.startswith((f"damaged  {names}", f"damaged  run {names}"))
                   for line in found.output.splitlines()), found.output
    if part in ("index", "ref log"):
        _listing_is_right(run, locator, fell_back=part == "index" or how in ("reordered", "newest flipped"))
    repair = invoke("store", "fsck", "--store", locator, "--connectivity", "--repair")
    unrepaired = [line for line in repair.output.splitlines() if line.startswith("NOT repaired: ")]
    if (part, how) in REPORTED:
        assert repair.exit_code == 1 and len(unrepaired) == 1, repair.output
        prefix = f"NOT repaired: run {run.name}: " if part == "attestation" else "NOT repaired: ref log"
        assert unrepaired[0].startswith(prefix) and part in unrepaired[0] and names in unrepaired[0], repair.output
        return
    assert repair.exit_code == 0 and unrepaired == [], repair.output
    assert invoke("store", "fsck", "--store", locator, "--connectivity").exit_code == 0
    assert invoke("store", "audit", "--store", locator).exit_code == 0
    assert store.refs.get(attestation_ref(run.name)) == run.attestation  # the signature still binds the run
    assert invoke("runs", "verify", run.name[4:12], "--store", locator).exit_code == 0
    assert query_index(open_store(locator, create=False)).reason is None  # the index answers again


def _listing_is_right(run: Run, locator: str, *, fell_back: bool) -> None:
    """`runs ls` lists the run as it is (never as a damaged index says), saying when it read every run instead."""
    listing = invoke("runs", "ls", "--store", locator, "--read-only")
    assert listing.exit_code == 0, listing.output
    (row,) = [line for line in listing.output.splitlines() if line.startswith(run.name[4:12])]
    assert row.split()[1:5] == ["m", "greedy", "v1-public", "4/4"] and "complete" in row, listing.output
    assert "forged" not in listing.output
    assert ("listed by reading every run; none was saved (read-only)" in listing.output) == fell_back, listing.output
