"""A canon page's state, folded from its events. Applies facts only: never raises."""

from __future__ import annotations

import hashlib
from datetime import datetime

import msgspec

from athenaeum.aggregates.state import AggregateState
from athenaeum.events import Event
from athenaeum.events.page import (
    CanonApproved,
    DisputeResolved,
    DocumentRead,
    EndorsementDisputed,
    EndorsementRecorded,
    EndorsementStaled,
    Lifecycle,
    LifecycleChanged,
    PageImported,
    PageInitialized,
    PageRevised,
    PendingAged,
    Scope,
)


class Endorsement(msgspec.Struct, frozen=True, omit_defaults=True):
    """One agent's standing on the page: reviewed, accepted, contributed, disputed or stale."""

    status: str
    rev: int
    since: datetime
    session_id: str | None = None
    disputed: str | None = None  # what a dispute contests
    thread: str | None = None  # where a dispute is discussed, or the decision's thread
    decision: str | None = None  # a human's final word on a dispute
    note: str | None = None  # an imported entry's words in parentheses, written back with it


class Page(AggregateState, tag="Page"):
    author: str
    scope: Scope
    content: str
    content_sha256: str
    rev: int
    revised_at: datetime  # when the current rev began: pending statuses age from here
    lifecycle: Lifecycle = Lifecycle.WORKING
    endorsements: dict[str, Endorsement] = {}
    reads: dict[str, int] = {}  # "<agent>/<session>" -> rev read, of the current content only
    aged_rev: int = 0  # the last rev whose 14 days have run
    imported_sha256: str | None = None  # an imported page file's digest: importing it again adds nothing

    def read_in(self, agent: str, session_id: str) -> int | None:
        return self.reads.get(f"{agent}/{session_id}")


def content_sha256(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def evolve(state: Page | None, event: Event) -> Page | None:
    replace = msgspec.structs.replace
    match event:
        case PageImported():  # (a kind of initialisation: matched first)
            return _imported(event)
        case PageInitialized():
            author = Endorsement("contributed", event.rev, event.timestamp)
            return Page(
                id=event.originator_id,
                version=event.originator_version,
                author=event.author,
                scope=event.scope,
                content=event.content,
                content_sha256=event.content_sha256,
                rev=event.rev,
                revised_at=event.timestamp,
                endorsements={event.author: author},
            )
    if state is None:
        return None  # history before the initialisation is not a page; the audit reports it
    match event:
        case DocumentRead():
            return replace(state, reads=state.reads | {f"{event.agent}/{event.session_id}": event.rev})
        case EndorsementRecorded():
            endorsement = Endorsement(event.status.value, event.rev, event.timestamp, event.session_id)
            return _endorse(state, event.agent, endorsement)
        case EndorsementDisputed():
            endorsement = Endorsement("disputed", event.rev, event.timestamp, disputed=event.disputed, thread=event.thread)
            return _endorse(state, event.agent, endorsement)
        case DisputeResolved():
            endorsement = Endorsement("accepted", state.rev, event.timestamp, thread=event.thread, decision=event.decision)
            return _endorse(state, event.agent, endorsement)
        case EndorsementStaled():
            previous = state.endorsements[event.agent]
            return _endorse(state, event.agent, replace(previous, status="stale", since=event.timestamp))
        case PageRevised():
            # Reads were of the old content: every endorsement from here on needs a new one.
            state = replace(state, content=event.content, content_sha256=event.content_sha256, reads={})
            if not event.significant:
                return state
            state = replace(state, rev=event.rev, revised_at=event.timestamp)
            return _endorse(state, event.editor, Endorsement("contributed", event.rev, event.timestamp))
        case LifecycleChanged():
            return replace(state, lifecycle=event.to)
        case CanonApproved():
            return state  # the LifecycleChanged beside it moves the page
        case PendingAged():
            return replace(state, aged_rev=event.rev)
    return state


def _imported(event: PageImported) -> Page:
    """The page as its file stood: the standings its consensus block recorded; the rev begins
    at the import (the file says not when), so pending agents age from it."""
    endorsements = {s.agent: Endorsement(s.status, s.rev, s.since, disputed=s.disputed, thread=s.thread,
                                         decision=s.decision, note=s.note) for s in event.standings}
    return Page(id=event.originator_id, version=event.originator_version, author=event.author, scope=event.scope,
                content=event.content, content_sha256=event.content_sha256, rev=event.rev,
                revised_at=event.timestamp, lifecycle=event.lifecycle, endorsements=endorsements,
                imported_sha256=event.imported_sha256)


def _endorse(state: Page, agent: str, endorsement: Endorsement) -> Page:
    return msgspec.structs.replace(state, endorsements=state.endorsements | {agent: endorsement})
