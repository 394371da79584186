"""Canon page rules (PROTOCOLS.md section 4): endorsements per revision, staled atomically by
a significant edit; a human approves canon when the fleet's consensus allows it.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Sequence
from datetime import datetime

import msgspec

from athenaeum.aggregates.page_consensus import Consensus, Member, consensus
from athenaeum.aggregates.page_state import Page, evolve
from athenaeum.aggregates.rules import (
    ARTIFACT_LIMIT,
    ActorMismatch,
    AlreadyExists,
    Context,
    Invalid,
    NotFound,
    NotHuman,
    RuleViolation,
    Stamp,
    require_page_path,
    require_slug,
    require_text,
)
from athenaeum.events import Event, family_id
from athenaeum.events.page import (
    CanonApproved,
    CanonLevel,
    DisputeResolved,
    DocumentRead,
    EndorsementDisputed,
    EndorsementRecorded,
    EndorsementStaled,
    Endorsing,
    Lifecycle,
    LifecycleChanged,
    PageInitialized,
    PageRevised,
    SOFT_CANONICAL_AGING,
    PendingAged,
    ReadinessReassessed,
    Scope,
)

SIGNIFICANT_RATIO = 0.30  # an edit changing more than this share of lines is significant
_HEADING = re.compile(r"^#{1,6}\s")
_STALED = ("reviewed", "accepted", "contributed")


class NotReadInSession(RuleViolation):
    code = "not_read_in_session"


class StaleRevision(RuleViolation):
    code = "stale_revision"


class ConsensusIncomplete(RuleViolation):
    code = "consensus_incomplete"


def content_sha256(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def change_ratio(old: str, new: str) -> float:
    """The share of lines changed: lines replaced, removed or added, over the longer version."""
    before, after = old.splitlines(), new.splitlines()
    opcodes = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
    return round(changed / max(len(before), len(after), 1), 4)


def headings(content: str) -> list[str]:
    """The heading structure: spacing within a heading line is no change to it."""
    return [" ".join(line.split()) for line in content.splitlines() if _HEADING.match(line)]


def init_page(
    state: Page | None,
    context: Context,
    *,
    page: str,
    content: str,
    scope: Scope = Scope.STRUCTURAL,
    from_thread: str | None = None,
) -> list[Event]:
    require_page_path(page, "page")
    if state is not None:
        raise AlreadyExists(f"page {page!r} already exists; edit it instead", "page")
    require_text(content, "content", ARTIFACT_LIMIT)
    if from_thread is not None:
        require_slug(from_thread, "from_thread")
    return [Stamp(family_id("page", page), 0, context)(
        PageInitialized, author=context.actor, content=content, content_sha256=content_sha256(content),
        scope=scope, crystallized_from=from_thread,
    )]


def crystallize(
    state: Page | None, context: Context, *, page: str, thread: str, closure_n: int, summary: str, patch_summary: str
) -> list[Event]:
    """A recognized closure lands on its page: initialised by the closer, or revised, with a
    link back to the thread. The thread's scores never become endorsements."""
    section = f"## From thread {thread} (closure {closure_n})\n\n{patch_summary}\n"
    if state is None:
        title = page.rsplit("/", 1)[-1].removesuffix(".md")
        content = f"# {title}\n\n{summary}\n\n{section}"
        return init_page(None, context, page=page, content=content, from_thread=thread)
    return edit(state, context, content=f"{state.content.rstrip()}\n\n{section}", crystallized_from=thread)


def read(state: Page, context: Context, *, session_id: str) -> list[Event]:
    """A read receipt for the current content, in one session."""
    require_text(session_id, "session_id")
    return [Stamp(state.id, state.version, context)(
        DocumentRead, agent=context.actor, rev=state.rev, content_sha256=state.content_sha256, session_id=session_id
    )]


def endorse(
    state: Page,
    context: Context,
    *,
    status: Endorsing,
    session_id: str,
    rev: int | None = None,
    members: Sequence[Member] = (),
    as_of_position: int | None = None,
) -> list[Event]:
    """``members``: the fleet, to see whether a soft-canonical page has become canonical, and
    whether the endorsement leaves the page ready for a human's approval; ``as_of_position``:
    where they were read, recorded so that an audit reads them there too."""
    require_text(session_id, "session_id")
    if rev is not None and rev != state.rev:
        raise StaleRevision(f"{state.key!r} is at rev v{state.rev}, not v{rev}", "rev")
    if state.read_in(context.actor, session_id) != state.rev:
        raise NotReadInSession(
            f"{context.actor!r} has not read rev v{state.rev} of {state.key!r} in session {session_id!r}", "session_id"
        )
    stamp = Stamp(state.id, state.version, context)
    recorded = stamp(EndorsementRecorded, agent=context.actor, status=status, rev=state.rev, session_id=session_id,
                     as_of_position=as_of_position)
    report = consensus(_evolved(state, recorded), members, context.now)
    if state.lifecycle is Lifecycle.SOFT_CANONICAL and report.canonical_ready:
        return [recorded, stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.CANONICAL,
                                reason="every active agent accepts")]
    return [msgspec.structs.replace(recorded, approvable=_approvable(state.lifecycle, report))]


def edit(
    state: Page, context: Context, *, content: str, significant: bool = False, crystallized_from: str | None = None
) -> list[Event]:
    """Significance is computed (over 30% of lines, or the headings changed); the editor may
    also claim it. A significant edit stales every other endorsement in the same command."""
    require_text(content, "content", ARTIFACT_LIMIT)
    if content == state.content:
        raise Invalid(f"the content of {state.key!r} is unchanged", "content")
    ratio = change_ratio(state.content, content)
    significant = significant or ratio > SIGNIFICANT_RATIO or headings(state.content) != headings(content)
    rev = state.rev + 1 if significant else state.rev
    stamp = Stamp(state.id, state.version, context)
    events: list[Event] = [stamp(
        PageRevised, editor=context.actor, content=content, content_sha256=content_sha256(content), rev=rev,
        significant=significant, change_ratio=ratio, crystallized_from=crystallized_from,
    )]
    if not significant:
        return events
    for agent, endorsement in sorted(state.endorsements.items()):
        if agent != context.actor and endorsement.status in _STALED:
            events.append(stamp(EndorsementStaled, agent=agent, previous_status=endorsement.status, rev=rev))
    if state.lifecycle in (Lifecycle.CANONICAL, Lifecycle.SOFT_CANONICAL):
        events.append(stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.WORKING,
                            reason=f"significant revision v{rev}"))
    return events


def dispute(state: Page, context: Context, *, section: str, thread: str | None = None) -> list[Event]:
    require_text(section, "section")
    if thread is not None:
        require_slug(thread, "thread")
    stamp = Stamp(state.id, state.version, context)
    events: list[Event] = [stamp(EndorsementDisputed, agent=context.actor, rev=state.rev, disputed=section,
                                 thread=thread)]
    if state.lifecycle is Lifecycle.SOFT_CANONICAL:
        events.append(stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.WORKING,
                            reason=f"disputed by {context.actor}"))
    return events


def resolve(
    state: Page, context: Context, *, agent: str, decision: str, thread: str, members: Sequence[Member] = (),
    as_of_position: int | None = None,
) -> list[Event]:
    """(human) The final word on a dispute, recorded as accepted (user decision); ``members``
    as for ``endorse``."""
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human resolves a dispute", "actor")
    endorsement = state.endorsements.get(agent)
    if endorsement is None or endorsement.status != "disputed":
        raise NotFound(f"{agent!r} has no open dispute on {state.key!r}", "agent")
    require_text(decision, "decision")
    require_slug(thread, "thread")
    resolved = Stamp(state.id, state.version, context)(
        DisputeResolved, agent=agent, decided_by=context.actor, decision=decision, thread=thread,
        as_of_position=as_of_position,
    )
    report = consensus(_evolved(state, resolved), members, context.now)
    return [msgspec.structs.replace(resolved, approvable=_approvable(state.lifecycle, report))]


def ready_for_approval(state: Page, members: Sequence[Member], now: datetime) -> bool:
    """Whether a human has an approval to give on the page now."""
    return _approvable(state.lifecycle, consensus(state, members, now))


def reassess(state: Page, context: Context, *, members: Sequence[Member], as_of_position: int | None) -> list[Event]:
    """The timer's command when time alone may have made a page ready, or unready: records
    whether a human has an approval to give now."""
    return [Stamp(state.id, state.version, context)(
        ReadinessReassessed, rev=state.rev, approvable=ready_for_approval(state, members, context.now),
        as_of_position=as_of_position,
    )]


def _approvable(lifecycle: Lifecycle, report: Consensus) -> bool:
    """Whether a human has an approval to give: one the page does not have yet, and is ready for."""
    if lifecycle is Lifecycle.CANONICAL:
        return False
    return report.canonical_ready or (report.soft_canonical_ready and lifecycle is not Lifecycle.SOFT_CANONICAL)


AUTHOR_LIFECYCLES = (Lifecycle.PROPOSAL, Lifecycle.WORKING, Lifecycle.ACCEPTED)


def change_lifecycle(state: Page, context: Context, *, to: Lifecycle, reason: str) -> list[Event]:
    """Authors own the lifecycle up to accepted; canon comes only from a human's approval."""
    if context.actor != state.author:
        raise ActorMismatch(f"only the author {state.author!r} moves {state.key!r} through its lifecycle", "actor")
    if to not in AUTHOR_LIFECYCLES:
        raise Invalid(f"{to.value} comes from a human's approval, not from the author", "to")
    if state.lifecycle in (Lifecycle.CANONICAL, Lifecycle.SOFT_CANONICAL):
        raise Invalid(f"{state.key!r} is {state.lifecycle.value}: a significant revision or a dispute moves it", "to")
    if to is state.lifecycle:
        raise Invalid(f"{state.key!r} is already {to.value}", "to")
    require_text(reason, "reason")
    return [Stamp(state.id, state.version, context)(LifecycleChanged, from_=state.lifecycle, to=to, reason=reason)]


def age(state: Page, context: Context, *, members: Sequence[Member], as_of_position: int | None = None) -> list[Event]:
    """The timer's command when a revision's 14 days are up: records it, with the readiness it
    leaves; idempotent, and nothing before its time."""
    if state.aged_rev >= state.rev or context.now < state.revised_at + SOFT_CANONICAL_AGING:
        return []
    report = consensus(state, members, context.now)
    return [Stamp(state.id, state.version, context)(
        PendingAged, rev=state.rev, canonical_ready=report.canonical_ready,
        soft_canonical_ready=report.soft_canonical_ready, as_of_position=as_of_position,
    )]


def approve(
    state: Page, context: Context, *, level: CanonLevel, members: Sequence[Member], as_of_position: int | None
) -> list[Event]:
    """(human) Canon, when the consensus of the active agents allows it at this rev."""
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human approves canon", "actor")
    target = Lifecycle(level.value)
    if state.lifecycle is target or state.lifecycle is Lifecycle.CANONICAL:
        raise Invalid(f"{state.key!r} is already {state.lifecycle.value}", "level")
    report = consensus(state, members, context.now)
    ready, reasons = (
        (report.canonical_ready, report.canonical_reasons)
        if level is CanonLevel.CANONICAL
        else (report.soft_canonical_ready, report.soft_canonical_reasons)
    )
    if not ready:
        raise ConsensusIncomplete(f"{state.key!r} is not ready for {level.value}: {'; '.join(reasons)}", "level")
    stamp = Stamp(state.id, state.version, context)
    return [
        stamp(CanonApproved, level=level, approved_by=context.actor, rev=state.rev,
              active_agents=tuple(report.active_agents), as_of_position=as_of_position),
        stamp(LifecycleChanged, from_=state.lifecycle, to=target, reason=f"approved by {context.actor}"),
    ]


def _evolved(state: Page, event: Event) -> Page:
    evolved = evolve(state, event)
    assert evolved is not None
    return evolved
