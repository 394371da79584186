"""Fleet roster commands (PROTOCOLS.md conventions): who the principals are, and their keys."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import PUBLIC_KEY, SHA256_HEX, Agent, Text

PublicKey = Annotated[str, msgspec.Meta(pattern=PUBLIC_KEY, description="a user's public nkey, its checksum valid")]
TokenSha256 = Annotated[str, msgspec.Meta(pattern=SHA256_HEX, description="64 lowercase hex digits")]


class RegisterAgent(Command, frozen=True):
    """A human registers a principal, bound to its Ed25519 public key (an nkey, ``U...``)."""

    name: Agent
    human: bool = False
    public_key: PublicKey | None = None


class RotateKey(Command, frozen=True):
    """The principal itself, or a human, binds the principal to a new key; what the old key
    signed before stays valid."""

    name: Agent
    public_key: PublicKey


class RevokeAgent(Command, frozen=True):
    """A human, or the principal itself, ends a principal's key: its later commands are
    refused, what it signed before stays valid."""

    name: Agent
    reason: Text = ""


class IssueToken(Command, frozen=True):
    """The principal itself, or a human, issues an HTTP bearer token for it: the command
    carries the token's SHA-256 only (the CLI makes the token and shows it once)."""

    name: Agent
    token_sha256: TokenSha256


class RevokeToken(Command, frozen=True):
    """End an HTTP bearer token of a principal, named by its SHA-256."""
    name: Agent
    token_sha256: TokenSha256


class AgeAgent(Command, frozen=True):
    """Sent by the timer when an agent may have gone dormant."""

    reads_fleet: ClassVar[bool] = True

    name: Agent


FleetCommand = RegisterAgent | RotateKey | RevokeAgent | IssueToken | RevokeToken | AgeAgent
