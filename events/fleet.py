"""The fleet roster: who the registered agents and human principals are.

One aggregate, ``fleet``, holds every registration.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from athenaeum.events.base import Event, family_id

FLEET_ID = family_id("fleet", "roster")
ACTIVE_WINDOW = timedelta(days=30)  # active: authored an accepted event this recently
DORMANT_AFTER = timedelta(days=60)  # dormant: its pending statuses stop blocking; on return, stale


class AgentRegistered(Event, tag="AgentRegistered"):
    name: str
    human: bool
    by: str
    public_key: str | None = None  # the Ed25519 nkey its commands must be signed with


class KeyRotated(Event, tag="KeyRotated"):
    """From here on the principal signs with ``public_key``; what it signed before stays valid."""

    name: str
    public_key: str
    previous_key: str | None
    by: str


class TokenIssued(Event, tag="TokenIssued"):
    """A bearer token for HTTP, proving ``name``; the ledger keeps its SHA-256 only."""

    name: str
    token_sha256: str
    by: str


class TokenRevoked(Event, tag="TokenRevoked"):
    name: str
    token_sha256: str
    by: str


class AgentRevoked(Event, tag="AgentRevoked"):
    """The principal's key ends here: its later commands are refused."""

    name: str
    public_key: str | None
    reason: str
    by: str


class AgentWentDormant(Event, tag="AgentWentDormant"):
    """Appended by the timer when an agent has been idle for ``DORMANT_AFTER``: its pending
    statuses stop blocking, and it is asked for nothing until it acts again."""

    name: str
    idle_since: datetime
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it
