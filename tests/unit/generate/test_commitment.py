"""Commit-then-reveal: the round trip works, a tampered suite is caught, the secret seed is never written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from emberbench.io.canonical import digest
from emberbench.errors import CommitmentError, GenerationError, SuiteError
from emberbench.generate import check_commitment, load_commitment, load_reveal, make_commitment, make_reveal
from emberbench.generate import read_secret_seed
from emberbench.generate.commands import generate_into
from emberbench.generate.writer import json_file_bytes
from emberbench.sim.suite import load_suite, public_suite_path

SECRET = 16_045_690_984_503_098_046


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A four-scenario dev suite generated with a secret seed (read from a file)."""
    base = tmp_path_factory.mktemp("held")
    (base / "secret.txt").write_text(f"{SECRET}\n")
    generate_into("dev", 4, base / "suite", secret_seed_file=base / "secret.txt")
    return base


def _copy(held: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(held / "suite", out)
    return out


def test_round_trip_commit_reveal_check(held: Path) -> None:
    """A commitment matches its suite; the reveal's seed regenerates it from the committed recipe."""
    folder = held / "suite"
    suite = load_suite(folder)
    commitment = make_commitment(suite, folder)
    assert commitment["suite_hash"] == suite.hash and commitment["generation"]["seed_secret"] is True
    assert len(check_commitment(suite, folder, commitment)) == 1
    reveal = make_reveal(suite, folder, read_secret_seed(held / "secret.txt"))
    assert reveal["seed"] == SECRET
    lines = check_commitment(suite, folder, commitment, reveal)
    assert len(lines) == 2 and "regenerates it from recipe 'dev'" in lines[1]


def test_the_secret_seed_is_written_nowhere(held: Path) -> None:
    """Neither the suite's files nor the commitment hold the secret seed, in decimal or in hex."""
    folder = held / "suite"
    commitment = json.dumps(make_commitment(load_suite(folder), folder)).encode()
    for blob in [commitment, *(p.read_bytes() for p in folder.rglob("*") if p.is_file())]:
        assert str(SECRET).encode() not in blob and f"{SECRET:x}".encode() not in blob.lower()


def _edit_scenario(folder: Path, repin: bool) -> None:
    manifest = json.loads((folder / "suite.json").read_text())
    entry = manifest["scenarios"][0]
    data = json.loads((folder / entry["file"]).read_text())
    data["max_steps"] += 1
    (folder / entry["file"]).write_text(json.dumps(data))
    if repin:
        entry["scenario_hash"] = digest(data)
        (folder / "suite.json").write_bytes(json_file_bytes(manifest))


def test_a_re_pinned_edited_scenario_is_not_the_committed_suite(held: Path, tmp_path: Path) -> None:
    """Editing a scenario and re-pinning it makes a valid suite, but not the committed one."""
    commitment = make_commitment(load_suite(held / "suite"), held / "suite")
    folder = _copy(held, tmp_path)
    _edit_scenario(folder, repin=True)
    with pytest.raises(CommitmentError, match="suite_hash .* this is not the committed suite"):
        check_commitment(load_suite(folder), folder, commitment)


def test_an_edited_scenario_that_is_not_re_pinned_does_not_even_load(held: Path, tmp_path: Path) -> None:
    """Editing a scenario file without touching suite.json fails the suite's own hash check."""
    folder = _copy(held, tmp_path)
    _edit_scenario(folder, repin=False)
    with pytest.raises(SuiteError, match="differs from the pinned"):
        load_suite(folder)


def test_a_wrong_seed_does_not_reveal(held: Path) -> None:
    """A seed that does not regenerate the suite cannot make a reveal, nor pass a check."""
    folder = held / "suite"
    suite = load_suite(folder)
    with pytest.raises(CommitmentError, match="not the committed"):
        make_reveal(suite, folder, SECRET + 1)
    commitment = make_commitment(suite, folder)
    forged = {"reveal_format": "1.0", "commitment": commitment, "seed": SECRET + 1}
    with pytest.raises(CommitmentError, match="not the committed"):
        check_commitment(suite, folder, commitment, forged)


def test_a_reveal_for_another_commitment_is_refused(held: Path) -> None:
    """The reveal must carry exactly the commitment being checked."""
    folder = held / "suite"
    suite = load_suite(folder)
    commitment = make_commitment(suite, folder)
    reveal = make_reveal(suite, folder, SECRET)
    other = json.loads(json.dumps(commitment))
    other["generation"]["count"] = 5
    reveal["commitment"] = other
    with pytest.raises(CommitmentError, match="another commitment"):
        check_commitment(suite, folder, commitment, reveal)


def test_a_tampered_generation_record_is_caught(held: Path, tmp_path: Path) -> None:
    """A generation.json that no longer describes the suite is refused."""
    folder = _copy(held, tmp_path)
    record = json.loads((folder / "generation.json").read_text())
    record["suite_hash"] = "0" * 64
    (folder / "generation.json").write_bytes(json_file_bytes(record))
    with pytest.raises(CommitmentError, match="describes suite 0000"):
        make_commitment(load_suite(folder), folder)


def test_commitment_and_reveal_files_round_trip(held: Path, tmp_path: Path) -> None:
    """Written commitments and reveals read back equal; a future format is refused."""
    folder = held / "suite"
    suite = load_suite(folder)
    commitment = make_commitment(suite, folder)
    (tmp_path / "c.json").write_text(json.dumps(commitment))
    (tmp_path / "r.json").write_text(json.dumps(make_reveal(suite, folder, SECRET)))
    assert load_commitment(tmp_path / "c.json") == commitment
    assert load_reveal(tmp_path / "r.json")["seed"] == SECRET
    (tmp_path / "f.json").write_text(json.dumps({**commitment, "commitment_format": "2.0"}))
    with pytest.raises(CommitmentError, match="unsupported commitment_format '2.0'"):
        load_commitment(tmp_path / "f.json")


def test_a_hand_made_suite_can_be_committed_but_not_revealed() -> None:
    """The public suite has no generation record: its commitment names no recipe and no seed can reveal it."""
    folder = public_suite_path()
    suite = load_suite(folder)
    commitment = make_commitment(suite, folder)
    assert commitment["generation"] is None
    assert check_commitment(suite, folder, commitment)
    with pytest.raises(CommitmentError, match="no generation record"):
        make_reveal(suite, folder, SECRET)


@pytest.mark.parametrize("text", ["42", "", "abc", "-5", str(1 << 64), "1 2"])
def test_weak_or_malformed_secret_seeds_are_refused(tmp_path: Path, text: str) -> None:
    """A secret seed must be one decimal integer in [2**32, 2**64 - 1]; the error never repeats it."""
    path = tmp_path / "s.txt"
    path.write_text(text)
    with pytest.raises(GenerationError) as info:
        read_secret_seed(path)
    assert "secrets.randbits(64)" in str(info.value) and (not text or text not in str(info.value).split(":", 1)[1])


GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def test_golden_commitment_and_reveal_of_the_generated_suite() -> None:
    """The golden commitment is the generated suite's commitment, and the golden reveal proves it."""
    from emberbench.sim.suite import GENERATED_SUITE_ID, shipped_suite_path

    folder = shipped_suite_path(GENERATED_SUITE_ID)
    suite = load_suite(GENERATED_SUITE_ID)
    commitment = load_commitment(GOLDEN / "commitment-1.0.json")
    assert commitment == make_commitment(suite, folder)
    lines = check_commitment(suite, folder, commitment, load_reveal(GOLDEN / "reveal-1.0.json"))
    assert "seed 1 regenerates it from recipe 'standard'" in lines[1]


@pytest.mark.parametrize(("name", "loader", "message"), [
    ("commitment", load_commitment, "unsupported commitment_format '2.0'"),
    ("reveal", load_reveal, "not a reveal of format '1.0'"),
])
def test_future_commitment_documents_are_refused(name: str, loader, message: str) -> None:  # noqa: ANN001
    """Commitments and reveals of a later format are refused by their readers."""
    with pytest.raises(CommitmentError, match=message):
        loader(GOLDEN / f"{name}-future.json")


def test_future_generation_record_is_refused(tmp_path: Path) -> None:
    """A generation record of a later format is refused, naming the version."""
    from emberbench.generate import load_generation

    shutil.copy(GOLDEN / "generation-future.json", tmp_path / "generation.json")
    with pytest.raises(GenerationError, match="unsupported generation_format '2.0'"):
        load_generation(tmp_path)
