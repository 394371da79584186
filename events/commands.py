"""Commands: what agents ask for, validated at the edge. Unknown fields are refused."""

from __future__ import annotations

from typing import ClassVar

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``command_id`` is the idempotency key: the same id again appends nothing and gets
    the first reply. Clients make one when the caller does not."""

    # Whether the decision weighs the fleet's activity (who is active, dormant, newly back):
    # the service then reads it, at a position it records with the command.
    reads_fleet: ClassVar[bool] = False

    command_id: str | None = None
