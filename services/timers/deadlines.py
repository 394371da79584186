"""What the timer service schedules: for each kind of deadline, when an event sets it, the
idempotent command that meets it, whether it is met, and what is overdue.

The closing deadlines live here: a ratification's window and a proposal's deadline. Time's
other marks on canon pages and the fleet are in ``aging``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import msgspec

from athenaeum.events import Event, family_id
from athenaeum.events.commands import Command
from athenaeum.events.quorum import ImportedStatus, ProposalImported, ProposalOpened
from athenaeum.events.quorum_commands import ExpireProposal
from athenaeum.events.ratification import ArtifactFrozen
from athenaeum.events.ratification_commands import ExpireRatification
from athenaeum.projectors import quorum_status, ratification_status
from athenaeum.projectors.views import Lookup
from athenaeum.services.views.read_models import ReadModelStore


class Deadline(NamedTuple):
    family: str  # the timer subjects' token: ``<T>.schedule.<family>.<key>``
    due: Callable[[Event, Lookup], tuple[str, datetime] | None]  # (key, when) an event sets, if any
    aggregate: Callable[[str], str]  # the aggregate a key names
    # (key, the aggregate's state, the views) -> the idempotent command that meets it (blocking: a thread's)
    command: Callable[[str, Any, ReadModelStore], Command]
    # (key, the aggregate's state, the views) -> None once met, else when it is still due (blocking too)
    next_due: Callable[[str, Any, ReadModelStore], datetime | None]
    overdue: Callable[[ReadModelStore, datetime], Iterable[str]]  # keys already due, for the sweeps
    # A new due this close after the one already scheduled needs no new schedule (an agent's
    # every action pushes its dormancy back; one schedule a day is plenty).
    slack: timedelta = timedelta(0)


def closing(
    family: str,
    view: str,
    due_field: str,
    event_due: Callable[[Event], datetime | None],
    expiry: Callable[[str], Command],
    aggregate: Callable[[str], str],
) -> Deadline:
    """A family whose aggregates close at a deadline (``due_field`` of the state and of the
    status view): met once the aggregate is no longer open."""

    def due(event: Event, lookup: Lookup) -> tuple[str, datetime] | None:
        when = event_due(event)
        return None if when is None else (event.key, when)

    def command(key: str, state: Any, store: ReadModelStore) -> Command:
        return expiry(key)

    def next_due(key: str, state: Any, store: ReadModelStore) -> datetime | None:
        return getattr(state, due_field) if state is not None and state.status.value == "open" else None

    def overdue(store: ReadModelStore, now: datetime) -> Iterable[str]:
        return [
            key
            for key, document in store.documents(view).items()
            if document["status"] == "open" and msgspec.convert(document[due_field], datetime) <= now
        ]

    return Deadline(family, due, aggregate, command, next_due, overdue)


RATIFICATION = closing(
    "ratification", ratification_status.VIEW, "expires_at",
    lambda event: event.expires_at if isinstance(event, ArtifactFrozen) else None,
    lambda topic: ExpireRatification(topic=topic, command_id=f"expire:{topic}"),
    lambda topic: topic,
)
PROPOSAL = closing(
    "quorum", quorum_status.VIEW, "deadline",
    lambda event: event.deadline if isinstance(event, ProposalOpened) or (
        isinstance(event, ProposalImported) and event.status is ImportedStatus.OPEN) else None,
    lambda proposal_id: ExpireProposal(proposal_id=proposal_id, command_id=f"expire:{proposal_id}"),
    lambda proposal_id: family_id("quorum", proposal_id),
)
