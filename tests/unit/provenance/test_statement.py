"""The signed statement: in-toto's layout, a strict predicate, and a command line without secrets."""

from __future__ import annotations

import json

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.errors import AttestationError
from emberbench.provenance.statement import parse_statement, redact_command
from tests.unit.provenance.support import GOLDEN, golden_statement


def test_golden_statement_reads_back() -> None:
    """The golden statement parses to the statement that made it."""
    data = (GOLDEN / "attestation-statement-1.0.json").read_bytes()
    assert parse_statement(data, where="golden") == golden_statement()
    document = json.loads(data)
    assert document["_type"] == "https://in-toto.io/Statement/v1"
    assert document["subject"] == [{"name": f"results/{document['predicate']['run_info']['run']}",
                                    "digest": {"sha256": document["predicate"]["run_info"]["result"]}}]


def _golden() -> dict:
    return json.loads((GOLDEN / "attestation-statement-1.0.json").read_bytes())


def test_statement_level_extension_fields_are_ignored() -> None:
    """in-toto: unknown statement and subject fields are ignored (other digests too)."""
    document = _golden()
    document["x-extension"] = 1
    document["subject"][0]["uri"] = "s3://b/p"
    document["subject"][0]["digest"]["sha512"] = "ab"
    assert parse_statement(canonical_bytes(document), where="s") == golden_statement()


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(_type="https://in-toto.io/Statement/v0.1"), "statement _type .* is not supported"),
    (lambda d: d.update(subject=[]), "exactly one subject"),
    (lambda d: d.update(subject=d["subject"] * 2), "exactly one subject"),
    (lambda d: d["subject"][0]["digest"].pop("sha256"), "no lowercase hex sha256"),
    (lambda d: d["predicate"].update(extra=1), r"unknown key\(s\) \['extra'\]"),
    (lambda d: d["predicate"]["attested"].pop("platform"), r"missing key\(s\) \['platform'\]"),
    (lambda d: d["predicate"]["policy_code"].update(rule="guess"), "policy_code must have a rule"),
    (lambda d: d["predicate"]["run_info"].update(result="x"), "run_info.result"),
    (lambda d: d["predicate"]["run_info"].update(verification={"verdict": "ok"}), "verification must be null"),
    (lambda d: d["predicate"]["invocation"].update(executor="slurm"), "executor must be one of"),
    (lambda d: d["predicate"]["attested"].update(at="yesterday"), "ISO 8601"),
    (lambda d: d["predicate"]["attested"].update(end_of_run="yes"), "true or false"),
])
def test_malformed_statements_are_refused(change, message) -> None:  # noqa: ANN001
    """Each rule of the statement and predicate is enforced, as a statement error."""
    document = _golden()
    change(document)
    with pytest.raises(AttestationError, match=message) as info:
        parse_statement(canonical_bytes(document), where="s")
    assert info.value.check == "statement"


def test_command_line_loses_credentials_and_secret_option_values() -> None:
    """URL credentials (nested ones too) and --runtime-env values never reach the signed statement."""
    argv = ["/home/u/.venv/bin/emberbench", "run", "--store", "s3://b/p?endpoint=http://user:pw@host:9000",
            "--runtime-env", '{"env_vars": {"TOKEN": "s3cret"}}', "--address=ray://admin:pw@head:10001",
            "--runtime-env={\"env_vars\": {}}"]
    assert redact_command(argv) == ["emberbench", "run", "--store", "s3://b/p?endpoint=http://host:9000",
                                    "--runtime-env", "<redacted>", "--address=ray://head:10001",
                                    "--runtime-env=<redacted>"]


def test_any_command_line_fits_the_statement() -> None:
    """Control characters are escaped and overlong words or lines are cut, so signing never fails on argv."""
    from emberbench.provenance.statement import Invocation

    argv = ["emberbench", "run", "--policy", "cmd:agent --x 'a\nb'", "y" * 5000] + ["w"] * 600
    command = redact_command(argv)
    assert command[3] == "cmd:agent --x 'a\\nb'" and len(command[4]) == 4096 and command[4].endswith("...")
    assert len(command) == 512 and command[-1] == "..."
    Invocation(tuple(command), "local", None, ("host",))
