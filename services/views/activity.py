"""The fleet's activity, as the command rules need it, read from the ``agents`` view."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import msgspec

from athenaeum.aggregates.page_consensus import Member
from athenaeum.projectors import fleet_activity
from athenaeum.services.commands.handler import Activity
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore


def activity_from(store: ReadModelStore) -> Callable[[], Activity]:
    def read() -> Activity:
        # One snapshot: a decision records the position its members were read at, and the audit
        # re-checks it against the fleet there (0: the views were empty, so no members).
        agents, position = store.documents_at(fleet_activity.VIEW, PROJECTION)
        members = tuple(
            Member(
                name=agent["name"],
                registered_at=msgspec.convert(agent["registered_at"], datetime),
                last_active=msgspec.convert(agent["last_active"], datetime),
                returned_at=msgspec.convert(agent["returned_at"], datetime | None),
            )
            for agent in agents.values()
            if fleet_activity.in_consensus(agent)
        )
        return Activity(members, position or 0)

    return read
