"""Thread items of the ``pending`` view: a participant contributes when the last entry is
someone else's; a closure waits for a human to recognize (or refuse) it."""

from __future__ import annotations

from functools import singledispatch

from athenaeum.events import Event
from athenaeum.events.thread import (
    ClosureRecognized, ClosureRefused, EntryAppended, EntryKind, ThreadCrystallized, ThreadImported, ThreadReopened,
)
from athenaeum.projectors import thread_status
from athenaeum.projectors.pending_work import HUMANS, Pending, pending_projector


@singledispatch
def _apply(event: Event, pending: Pending) -> None:
    pass


project = pending_projector("thread", _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: EntryAppended, pending: Pending) -> None:
    # The threads view, already updated for this event, has the author among the participants.
    participants = (pending.lookup(thread_status.VIEW, event.key) or {}).get("participants", [])
    for agent in participants:
        if agent == event.author or event.kind is EntryKind.CLOSURE:
            pending.remove(agent, event.key)
        else:
            pending.add(agent, event.key, "contribute")
    if event.kind is EntryKind.CLOSURE:
        pending.add(HUMANS, event.key, "recognize")


@_apply.register
def _(event: ThreadImported, pending: Pending) -> None:
    for step in event.history():
        _apply(step, pending)


@_apply.register(ClosureRecognized)
@_apply.register(ClosureRefused)
@_apply.register(ThreadCrystallized)  # (an imported thread's comes with no recognition before it)
@_apply.register(ThreadReopened)
def _(event: Event, pending: Pending) -> None:
    pending.remove(HUMANS, event.key)
