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


class AgentWentDormant(Event, tag="AgentWentDormant"):
    """Appended by the timer when an agent has been idle for ``DORMANT_AFTER``: its pending
    statuses stop blocking, and it is asked for nothing until it acts again."""

    name: str
    idle_since: datetime
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it
