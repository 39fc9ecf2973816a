"""The rig's two errors; each message is one line."""

from __future__ import annotations


class RigError(Exception):
    """The rig could not be built, driven or torn down (the message says what and where)."""


class RigUnavailable(RigError):
    """This machine cannot run the rig at all (not root, no iproute2, its subnet in use)."""
