"""The dialogue rules the audit re-runs: threads, canon pages and the fleet (PROTOCOLS sections 3 and 4)."""

from __future__ import annotations

from collections.abc import Sequence

from athenaeum.aggregates import crystallization, fleet
from athenaeum.aggregates import page as p
from athenaeum.aggregates import thread as t
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event
from athenaeum.events.fleet import FLEET_ID, AgentRegistered, AgentWentDormant
from athenaeum.events.page import (
    CanonApproved,
    DisputeResolved,
    DocumentRead,
    EndorsementDisputed,
    EndorsementRecorded,
    LifecycleChanged,
    PageInitialized,
    PageRevised,
    PendingAged,
    ReadinessReassessed,
)
from athenaeum.events.thread import (
    ClosureRecognized,
    ClosureRefused,
    EntryAppended,
    EntryKind,
    OpenQuestionAdded,
    ThreadOpened,
)
from athenaeum.services.audit.recheck import Rechecks, Replayed, own

RECHECKS = Rechecks()


@RECHECKS.of(ThreadOpened)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e, first = g[0], g[1] if len(g) > 1 else None
    assert isinstance(e, ThreadOpened)
    body = first.body if isinstance(first, EntryAppended) else ""
    axis = first.declared_axis if isinstance(first, EntryAppended) else None
    return t.open_thread(own(g, x), c, slug=e.key, text=e.context, target=e.target, body=body, declared_axis=axis,
                         questions=[oq.text for oq in e.open_questions], topics=e.topics, participants=e.participants)


@RECHECKS.of(OpenQuestionAdded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, OpenQuestionAdded)
    return t.ask(own(g, x), c, question=e.text)


@RECHECKS.of(EntryAppended)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EntryAppended)
    scores = e.last_eval.v if e.last_eval else None
    state = own(g, x)
    if e.kind is EntryKind.CLOSURE:
        assert e.current_at_close is not None and e.proposed_crystallization is not None
        return t.close(state, c, evaluation=scores, current=e.current_at_close, summary=e.summary or "",
                       pages=e.proposed_crystallization.canon_pages,
                       patch_summary=e.proposed_crystallization.patch_summary)
    if e.kind is EntryKind.REOPEN:
        return t.reopen(state, c, evaluation=scores, reason=e.reason or "", discovery=e.body)
    return t.contribute(state, c, body=e.body, evaluation=scores, declared_axis=e.declared_axis)


@RECHECKS.of(ClosureRecognized)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return crystallization.recognize(own(g, x), c, x.state)


@RECHECKS.of(ClosureRefused)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ClosureRefused)
    return t.refuse(own(g, x), c, reason=e.reason)


@RECHECKS.of(PageInitialized)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PageInitialized)
    return p.init_page(own(g, x), c, page=e.key, content=e.content, scope=e.scope, from_thread=e.crystallized_from)


@RECHECKS.of(DocumentRead)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, DocumentRead)
    return p.read(own(g, x), c, session_id=e.session_id)


@RECHECKS.of(EndorsementRecorded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EndorsementRecorded)
    return p.endorse(own(g, x), c, status=e.status, session_id=e.session_id, members=x.members(e.as_of_position),
                     as_of_position=e.as_of_position)


@RECHECKS.of(EndorsementDisputed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EndorsementDisputed)
    return p.dispute(own(g, x), c, section=e.disputed, thread=e.thread)


@RECHECKS.of(PageRevised)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PageRevised)
    return p.edit(own(g, x), c, content=e.content, significant=e.significant, crystallized_from=e.crystallized_from)


@RECHECKS.of(DisputeResolved)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, DisputeResolved)
    return p.resolve(own(g, x), c, agent=e.agent, decision=e.decision, thread=e.thread,
                     members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@RECHECKS.of(CanonApproved)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CanonApproved)
    return p.approve(own(g, x), c, level=e.level, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@RECHECKS.of(LifecycleChanged)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, LifecycleChanged)
    return p.change_lifecycle(own(g, x), c, to=e.to, reason=e.reason)


@RECHECKS.of(PendingAged)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PendingAged)
    return p.age(own(g, x), c, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@RECHECKS.of(ReadinessReassessed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ReadinessReassessed)
    return p.reassess(own(g, x), c, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@RECHECKS.of(AgentWentDormant)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AgentWentDormant)
    return fleet.mark_dormant(x.state(FLEET_ID), c, name=e.name, members=x.members(e.as_of_position),
                              as_of_position=e.as_of_position)


@RECHECKS.of(AgentRegistered)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AgentRegistered)
    return fleet.register(x.state(FLEET_ID), c, name=e.name, human=e.human, bootstrap=x.bootstrap)
