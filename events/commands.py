"""Commands: what agents ask for, validated at the edge. Unknown fields are refused."""

from __future__ import annotations

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``command_id`` is the idempotency key: the same id again appends nothing and gets
    the first reply. Clients make one when the caller does not."""

    command_id: str | None = None
