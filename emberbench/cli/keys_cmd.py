"""``emberbench keys generate|add|list``: signing keys and the keyring of trusted public keys.

Also the options other commands share: ``--signing-key FILE`` (default
``$EMBERBENCH_SIGNING_KEY``, a path) and ``--keyring FILE`` (default
``$EMBERBENCH_KEYRING``). Only this CLI layer reads those variables.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ._common import user_errors
from .args import parse_output_file

SIGNING_KEY_ENV_VAR = "EMBERBENCH_SIGNING_KEY"
KEYRING_ENV_VAR = "EMBERBENCH_KEYRING"

SigningKeyOption = Annotated[
    Optional[Path],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option("--signing-key", metavar="FILE",
                 help=f"Ed25519 private key (PEM) to sign the run's attestation with (default: ${SIGNING_KEY_ENV_VAR}, "
                      "a path; unset: the run is not signed)."),
]
KeyringOption = Annotated[
    Optional[Path],  # noqa: UP007
    typer.Option("--keyring", metavar="FILE",
                 help=f"Keyring of trusted public keys to check signatures with (default: ${KEYRING_ENV_VAR}).")]


def signing_key_from(option: Path | None) -> Any:
    """The signing key of ``--signing-key``, else of ``$EMBERBENCH_SIGNING_KEY``, else None (do not sign)."""
    path = option if option is not None else os.environ.get(SIGNING_KEY_ENV_VAR) or None
    if path is None:
        return None
    from ..provenance import load_signing_key

    return load_signing_key(path)


def keyring_from(option: Path | None) -> Any:
    """The keyring of ``--keyring``, else of ``$EMBERBENCH_KEYRING``, else None."""
    path = option if option is not None else os.environ.get(KEYRING_ENV_VAR) or None
    if path is None:
        return None
    from ..provenance import read_keyring

    return read_keyring(path)


def parse_time(value: object) -> str:
    """An ISO 8601 UTC time option (``2026-01-31T00:00:00Z``); anything else is a usage error."""
    from ..errors import SigningKeyError
    from ..provenance.keys import check_time

    try:
        return check_time(value, "the time")
    except SigningKeyError as exc:
        raise typer.BadParameter(str(exc)) from None


def generate(
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="KEY",
                                      help="Private key file to create (mode 0600); the public key goes to KEY.pub.")],
) -> None:
    """Create an Ed25519 signing key (KEY, readable only by you) and its public key (KEY.pub); never replaces a file.

    Keep KEY outside the store and out of version control; give KEY.pub to
    whoever verifies (`emberbench keys add KEY.pub --keyring FILE --name NAME`).
    """
    from ..provenance import generate_key_files

    keyid, private, public = generate_key_files(out)
    typer.echo(f"{private}: signing key {keyid} (mode 0600; keep it secret, outside the store)")
    typer.echo(f"{public}: its public key, for keyrings")


def add(
    public_key: Annotated[Path, typer.Argument(metavar="PUBLIC_KEY", help="A public key file (KEY.pub).")],
    keyring: Annotated[Path, typer.Option("--keyring", parser=parse_output_file, metavar="FILE",
                                          help="Keyring file to add to (created if missing).")],
    name: Annotated[str, typer.Option("--name", help="Who or what signs with this key (shown by verify).")],
    not_before: Annotated[Optional[str], typer.Option("--not-before", parser=parse_time, metavar="TIME", help="Trust attestations made at or after this UTC time (2026-01-31T00:00:00Z).")] = None,  # noqa: UP007
    not_after: Annotated[Optional[str], typer.Option("--not-after", parser=parse_time, metavar="TIME", help="Trust attestations made at or before this UTC time.")] = None,  # noqa: UP007
    replace: Annotated[bool, typer.Option("--replace", help="Replace the key's entry if the keyring has it.")] = False,
) -> None:
    """Trust a public key: add it to a keyring file, with a name and an optional validity period."""
    from ..provenance import trust_key

    entry = trust_key(keyring, public_key, name, not_before=not_before, not_after=not_after, replace=replace)
    typer.echo(f"{keyring}: trusts {entry.describe()}")


def list_keys(keyring: Annotated[Path, typer.Option("--keyring", metavar="FILE", help="Keyring file.")]) -> None:
    """List the keys of a keyring: key id, validity period, name."""
    from ..provenance import read_keyring

    for key in read_keyring(keyring).keys:
        typer.echo(f"{key.keyid}  {key.not_before or '-'} .. {key.not_after or '-'}  {key.name}")


def register(app: typer.Typer) -> None:
    """Add the ``keys`` command group to ``app``."""
    keys_app = typer.Typer(name="keys", help="Signing keys and keyrings for signed run attestations.",
                           no_args_is_help=True)
    keys_app.command("generate")(user_errors(generate))
    keys_app.command("add")(user_errors(add))
    keys_app.command("list")(user_errors(list_keys))
    app.add_typer(keys_app, name="keys")
