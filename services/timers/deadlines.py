"""What the timer service schedules: for each kind of deadline, when an event sets it, the
command that meets it, whether it is met, and what is overdue at start-up."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import msgspec

from athenaeum.events import Event, family_id
from athenaeum.projectors.views import Lookup
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.views.read_models import ReadModelStore
from athenaeum.services.commands.replies import Reply


class Deadline(NamedTuple):
    family: str  # the timer subjects' token: ``<T>.schedule.<family>.<key>``
    due: Callable[[Event, Lookup], tuple[str, datetime] | None]  # (key, when) an event sets, if any
    expire: Callable[[CommandHandler, str, str], Reply]  # (handler, key, actor): the idempotent command
    next_due: Callable[[CommandHandler, ReadModelStore, str], datetime | None]  # None: met; else still due then
    overdue: Callable[[ReadModelStore, datetime], Iterable[str]]  # keys already due, for the start-up sweep
    # A new due this close after the one already scheduled needs no new schedule (an agent's
    # every action pushes its dormancy back; one schedule a day is plenty).
    slack: timedelta = timedelta(0)


def closing(
    family: str,
    view: str,
    due_field: str,
    event_due: Callable[[Event], datetime | None],
    expire: Callable[[CommandHandler, str, str], Reply],
    project: Callable[[Any, Any], Any],
    prefixed: bool = True,
) -> Deadline:
    """A family whose aggregates close at a deadline (``due_field`` of the state and of the
    status view): met once the aggregate is no longer open."""

    def due(event: Event, lookup: Lookup) -> tuple[str, datetime] | None:
        when = event_due(event)
        return None if when is None else (event.key, when)

    def next_due(handler: CommandHandler, store: ReadModelStore, key: str) -> datetime | None:
        state = handler.load(family_id(family, key) if prefixed else key, project)
        return getattr(state, due_field) if state is not None and state.status.value == "open" else None

    def overdue(store: ReadModelStore, now: datetime) -> Iterable[str]:
        return [
            key
            for key, document in store.documents(view).items()
            if document["status"] == "open" and msgspec.convert(document[due_field], datetime) <= now
        ]

    return Deadline(family, due, expire, next_due, overdue)


def ceil_second(moment: datetime) -> datetime:
    """``moment`` rounded up to a whole second: schedules keep whole seconds, and a deadline
    rounded up never fires before its time."""
    whole = moment.replace(microsecond=0)
    return whole + timedelta(seconds=1) if moment.microsecond else whole
