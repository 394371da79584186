"""Commands: what agents ask for, validated at the edge. Unknown fields are refused."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``command_id`` is the idempotency key: the same id again appends nothing and gets
    the first reply. Clients make one when the caller does not."""

    # Whether the decision weighs the fleet's activity (who is active, dormant, newly back):
    # the service then reads it, at a position it records with the command.
    reads_fleet: ClassVar[bool] = False

    command_id: str | None = None


class CommandRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A command as the ledger stores it, with the events it appended: enough to decide it
    again, as the audit does, and to answer its retry as it was first answered.

    ``command`` is the command's own canonical JSON (its ``command_id`` filled in); the rest is
    the context it was decided in, as the service knew it: who sent it and when, whether the
    sender was a human principal and whether the deployment named its humans, and where the
    fleet's activity was read (for the rules that weigh it). Other aggregates a decision reads
    are not copied: the ledger holds them, as they stood."""

    route: str  # <family>.<verb>, as in the NATS subject athenaeum.cmd.<family>.<verb>
    command: msgspec.Raw
    fingerprint: str  # SHA-256 of the command without its id: an id reused for another command shows
    actor: str
    at: datetime
    events: int  # how many events it appended, the first on its own aggregate
    scoped: bool = True  # the id is the actor's on this aggregate; False: one id for everyone (A2A tasks)
    actor_is_human: bool = False
    humans_configured: bool = False
    as_of_position: int | None = None
