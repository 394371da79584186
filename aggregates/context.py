"""What a decision knows beside its aggregate's state and its command: everything, as data.

No rule calls out: the command service reads what a decision needs before deciding (the fleet's
activity at a position it records, any other aggregate the decision reads), and the audit gives
the same decision the same data again, from the ledger as it stood.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec


class Member(msgspec.Struct, frozen=True):
    """A registered agent (not a human principal) as the fleet's activity view knows it."""

    name: str
    registered_at: datetime
    last_active: datetime
    returned_at: datetime | None = None  # back after being dormant: older statuses are stale


@dataclass(frozen=True)
class Context:
    """Who sends the command, when the service took it, and its idempotency key; whether the
    sender is a human principal, and whether the deployment names its humans (then they, not
    the first comer, register the fleet); the fleet's agents as read at ``as_of_position``, for
    the rules that weigh consensus; and the other aggregates the decision reads, by id (None:
    no events yet)."""

    actor: str
    now: datetime
    command_id: str
    actor_is_human: bool = False
    humans_configured: bool = False
    members: tuple[Member, ...] = ()
    as_of_position: int | None = None
    states: Mapping[str, Any] = field(default_factory=dict)
