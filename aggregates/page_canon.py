"""The canon page rules that weigh the fleet's consensus (PROTOCOLS.md section 4): endorsing,
a human's word on a dispute, approval, and the timers' aging and readiness.

Each takes the fleet's agents from the context, as the service read them at the position the
context also gives (``as_of_position``); the events record that position, so an audit weighs
the same agents again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from athenaeum.aggregates.page_consensus import Consensus, Member, consensus
from athenaeum.aggregates.page_state import Page, evolve
from athenaeum.aggregates.rules import (
    Context,
    Invalid,
    NotFound,
    NotHuman,
    RuleViolation,
    Stamp,
    require_slug,
    require_text,
)
from athenaeum.events import Event
from athenaeum.events.page import (
    SOFT_CANONICAL_AGING,
    CanonApproved,
    CanonLevel,
    DisputeResolved,
    EndorsementRecorded,
    Lifecycle,
    LifecycleChanged,
    PendingAged,
    ReadinessReassessed,
)
from athenaeum.events.page_commands import ApprovePage, EndorsePage, ResolveDispute


class NotReadInSession(RuleViolation):
    code = "not_read_in_session"


class StaleRevision(RuleViolation):
    code = "stale_revision"


class ConsensusIncomplete(RuleViolation):
    code = "consensus_incomplete"


class ConsensusPending(RuleViolation):
    code = "consensus_pending"


def endorse(state: Page, command: EndorsePage, context: Context) -> list[Event]:
    """The fleet in the context says whether a soft-canonical page has become canonical, and
    whether the endorsement leaves the page ready for a human's approval."""
    session_id, rev = command.session_id, command.rev
    require_text(session_id, "session_id")
    if rev is not None and rev != state.rev:
        raise StaleRevision(f"{state.key!r} is at rev v{state.rev}, not v{rev}", "rev")
    if state.read_in(context.actor, session_id) != state.rev:
        raise NotReadInSession(
            f"{context.actor!r} has not read rev v{state.rev} of {state.key!r} in session {session_id!r}", "session_id"
        )
    stamp = Stamp(state.id, state.version, context)
    recorded = stamp(EndorsementRecorded, agent=context.actor, status=command.status, rev=state.rev,
                     session_id=session_id, as_of_position=context.as_of_position)
    report = consensus(_evolved(state, recorded), context.members, context.now)
    if state.lifecycle is Lifecycle.SOFT_CANONICAL and report.canonical_ready:
        return [recorded, stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.CANONICAL,
                                reason="every active agent accepts")]
    return [msgspec.structs.replace(recorded, approvable=_approvable(state.lifecycle, report))]


def resolve(state: Page, command: ResolveDispute, context: Context) -> list[Event]:
    """(human) The final word on a dispute, recorded as accepted (user decision); the fleet
    in the context, as for ``endorse``."""
    agent = command.agent
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human resolves a dispute", "actor")
    endorsement = state.endorsements.get(agent)
    if endorsement is None or endorsement.status != "disputed":
        raise NotFound(f"{agent!r} has no open dispute on {state.key!r}", "agent")
    require_text(command.decision, "decision")
    require_slug(command.thread, "thread")
    resolved = Stamp(state.id, state.version, context)(
        DisputeResolved, agent=agent, decided_by=context.actor, decision=command.decision, thread=command.thread,
        as_of_position=context.as_of_position,
    )
    report = consensus(_evolved(state, resolved), context.members, context.now)
    return [msgspec.structs.replace(resolved, approvable=_approvable(state.lifecycle, report))]


def approve(state: Page, command: ApprovePage, context: Context) -> list[Event]:
    """(human) Canon, when the consensus of the active agents allows it at this rev."""
    level = command.level
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human approves canon", "actor")
    target = Lifecycle(level.value)
    if state.lifecycle is target or state.lifecycle is Lifecycle.CANONICAL:
        raise Invalid(f"{state.key!r} is already {state.lifecycle.value}", "level")
    report = consensus(state, context.members, context.now)
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
              active_agents=tuple(report.active_agents), as_of_position=context.as_of_position),
        stamp(LifecycleChanged, from_=state.lifecycle, to=target, reason=f"approved by {context.actor}"),
    ]


def require_none_pending(state: Page, context: Context) -> None:
    """An author's ``accepted`` holds only while no active agent is pending at the current rev
    (the original audit's C4): whoever has not looked at this revision has not accepted it."""
    report = consensus(state, context.members, context.now)
    pending = [s.agent for s in report.standings if s.active and s.status == "pending"]
    if pending:
        raise ConsensusPending(
            f"{state.key!r} cannot be accepted while {', '.join(pending)} "
            f"{'is' if len(pending) == 1 else 'are'} pending at v{state.rev}", "to")


def ready_for_approval(state: Page, members: Sequence[Member], now: datetime) -> bool:
    """Whether a human has an approval to give on the page now, given the fleet's agents."""
    return _approvable(state.lifecycle, consensus(state, members, now))


def age(state: Page, context: Context) -> list[Event]:
    """The timer's command when a revision's 14 days are up: records it, with the readiness it
    leaves; idempotent, and nothing before its time."""
    if state.aged_rev >= state.rev or context.now < state.revised_at + SOFT_CANONICAL_AGING:
        return []
    report = consensus(state, context.members, context.now)
    return [Stamp(state.id, state.version, context)(
        PendingAged, rev=state.rev, canonical_ready=report.canonical_ready,
        soft_canonical_ready=report.soft_canonical_ready, as_of_position=context.as_of_position,
    )]


def reassess(state: Page, context: Context) -> list[Event]:
    """The timer's command when time alone may have made a page ready, or unready: records
    whether a human has an approval to give now."""
    return [Stamp(state.id, state.version, context)(
        ReadinessReassessed, rev=state.rev, approvable=ready_for_approval(state, context.members, context.now),
        as_of_position=context.as_of_position,
    )]


def _approvable(lifecycle: Lifecycle, report: Consensus) -> bool:
    """Whether a human has an approval to give: one the page does not have yet, and is ready for."""
    if lifecycle is Lifecycle.CANONICAL:
        return False
    return report.canonical_ready or (report.soft_canonical_ready and lifecycle is not Lifecycle.SOFT_CANONICAL)


def _evolved(state: Page, event: Event) -> Page:
    evolved = evolve(state, event)
    assert evolved is not None
    return evolved
