"""A dialogue thread's state, folded from its events. Applies facts only: never raises."""

from __future__ import annotations

import enum

import msgspec

from athenaeum.aggregates.state import AggregateState
from athenaeum.events import Event
from athenaeum.events.thread import (
    ZERO,
    ClosureRecognized,
    ClosureRefused,
    Crystallization,
    EntryAppended,
    EntryKind,
    OpenQuestionAdded,
    ThreadCrystallized,
    ThreadImported,
    ThreadOpened,
    ThreadReopened,
    Vector,
)


class Status(enum.Enum):
    OPEN = "open"
    AWAITING_CRYSTALLIZATION = "awaiting-crystallization"
    CRYSTALLIZED = "crystallized"
    CLOSED_WITHOUT_CRYSTALLIZATION = "closed-without-crystallization"  # a human refused the closure


class Closure(msgspec.Struct, frozen=True):
    n: int
    author: str
    summary: str
    current_at_close: Vector
    crystallization: Crystallization
    reopened: bool = False


class Thread(AggregateState, tag="Thread"):
    opened_by: str
    target: Vector
    participants: tuple[str, ...]
    status: Status = Status.OPEN
    last_n: int = 0
    last_author: str = ""
    current: Vector = ZERO  # Σ of every entry's last_eval.v, across reopens
    questions: int = 0
    closure: Closure | None = None  # the latest closure
    imported_sha256: str | None = None  # an imported record's content: importing it again adds nothing
    archival: bool = False  # imported as historical text: its entries are none the rules can continue


def evolve(state: Thread | None, event: Event) -> Thread | None:
    replace = msgspec.structs.replace
    match event:
        case ThreadImported():  # its history as Athenaeum would have recorded it, folded
            imported = None
            for step in event.history():
                imported = evolve(imported, step)
            if imported is None:
                return None
            if event.archival and event.settled is not None:  # no closure read: its status, as found
                imported = replace(imported, status=Status(event.settled.status.value))
            return replace(imported, imported_sha256=event.content_sha256, archival=event.archival)
        case ThreadOpened():
            return Thread(
                id=event.originator_id,
                version=event.originator_version,
                opened_by=event.opened_by,
                target=event.target,
                participants=event.participants,
                questions=len(event.open_questions),
            )
    if state is None:
        return None  # history before the opening is not a thread; the audit reports it
    match event:
        case OpenQuestionAdded():
            return replace(state, questions=state.questions + 1)
        case EntryAppended():
            current = state.current + event.last_eval.v if event.last_eval else state.current
            participants = state.participants if event.author in state.participants else (*state.participants, event.author)
            state = replace(state, last_n=event.n, last_author=event.author, current=current, participants=participants)
            if event.kind is EntryKind.CLOSURE:
                assert event.current_at_close is not None and event.proposed_crystallization is not None
                closure = Closure(event.n, event.author, event.summary or event.body, event.current_at_close,
                                  event.proposed_crystallization)
                return replace(state, status=Status.AWAITING_CRYSTALLIZATION, closure=closure)
            return state
        case ThreadReopened():
            closure = replace(state.closure, reopened=True) if state.closure else None
            return replace(state, status=Status.OPEN, closure=closure)
        case ClosureRefused():
            return replace(state, status=Status.CLOSED_WITHOUT_CRYSTALLIZATION)
        case ClosureRecognized():
            return state  # ThreadCrystallized, in the same command, completes it
        case ThreadCrystallized():
            return replace(state, status=Status.CRYSTALLIZED)
    return state
