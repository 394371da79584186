"""Families whose aggregates close by themselves at a deadline, as the timer service sees them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from athenaeum.events import Event, family_id
from athenaeum.services.command_handler import CommandHandler
from athenaeum.services.replies import Reply


class Deadline(NamedTuple):
    family: str  # the timer subjects' token: ``<T>.schedule.<family>.<id>``
    view: str  # the status view swept at start-up: documents with ``status`` and ``due_field``
    due_field: str
    due: Callable[[Event], datetime | None]  # the deadline an event sets, if it sets one
    expire: Callable[[CommandHandler, str, str], Reply]  # (handler, natural key, actor)
    project: Callable[[Any, Any], Any]  # the family's fold, to see whether it closed
    prefixed: bool = True  # whether aggregate ids carry the family (ratification's do not)

    def is_open(self, handler: CommandHandler, key: str) -> bool:
        state = handler.load(family_id(self.family, key) if self.prefixed else key, self.project)
        return state is not None and state.status.value == "open"


def ceil_second(moment: datetime) -> datetime:
    """``moment`` rounded up to a whole second: schedules keep whole seconds, and a deadline
    rounded up never fires before its time."""
    whole = moment.replace(microsecond=0)
    return whole + timedelta(seconds=1) if moment.microsecond else whole
