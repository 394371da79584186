"""Fleet roster commands (PROTOCOLS.md conventions): who the principals are, and their keys."""

from __future__ import annotations

from typing import ClassVar

from athenaeum.events.commands import Command


class RegisterAgent(Command, frozen=True):
    """A human registers a principal, bound to its Ed25519 public key (an nkey, ``U...``)."""

    name: str
    human: bool = False
    public_key: str | None = None


class RotateKey(Command, frozen=True):
    """The principal itself, or a human, binds the principal to a new key; what the old key
    signed before stays valid."""

    name: str
    public_key: str


class RevokeAgent(Command, frozen=True):
    """A human, or the principal itself, ends a principal's key: its later commands are
    refused, what it signed before stays valid."""

    name: str
    reason: str = ""


class IssueToken(Command, frozen=True):
    """The principal itself, or a human, issues an HTTP bearer token for it: the command
    carries the token's SHA-256 only (the CLI makes the token and shows it once)."""

    name: str
    token_sha256: str


class RevokeToken(Command, frozen=True):
    name: str
    token_sha256: str


class AgeAgent(Command, frozen=True):
    """Sent by the timer when an agent may have gone dormant."""

    reads_fleet: ClassVar[bool] = True

    name: str


FleetCommand = RegisterAgent | RotateKey | RevokeAgent | IssueToken | RevokeToken | AgeAgent
