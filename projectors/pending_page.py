"""Page items of the ``pending`` view: an agent reviews a page where its endorsement is
pending or stale; a human resolves a page's open disputes, and approves a page that is ready."""

from __future__ import annotations

from functools import singledispatch

from athenaeum.events import Event
from athenaeum.events.fleet import AgentRegistered, AgentWentDormant
from athenaeum.events.page import (
    CanonApproved,
    DisputeResolved,
    EndorsementDisputed,
    EndorsementRecorded,
    EndorsementStaled,
    PageImported,
    PageInitialized,
    PageRevised,
    PendingAged,
    ReadinessReassessed,
)
from athenaeum.projectors import fleet_activity, page_status
from athenaeum.projectors.pending_work import HUMANS, Pending, pending_projector


@singledispatch
def _apply(event: Event, pending: Pending) -> None:
    pass


def _with_returns(event: Event, pending: Pending) -> None:
    """Any event can be an agent's return after going dormant: its standing on every page is
    stale now, so every page asks for its review again."""
    agent = pending.lookup(fleet_activity.VIEW, event.actor) or {}
    if agent.get("returned_at") and agent["returned_at"] == agent.get("last_active") and not agent.get("human"):
        for page in (pending.lookup(page_status.VIEW, page_status.INDEX) or {}).get("pages", []):
            pending.add(event.actor, page, "review")
    _apply(event, pending)


project = pending_projector("page", _with_returns)  # the cases below register on ``_apply``


@_apply.register
def _initialized(event: PageInitialized, pending: Pending) -> None:
    roster = pending.lookup(fleet_activity.ROSTER_VIEW, fleet_activity.ROSTER_KEY) or {}
    for agent in roster.get("agents", []):
        if agent != event.author:
            pending.add(agent, event.key, "review")


@_apply.register
def _(event: PageImported, pending: Pending) -> None:
    # Whoever the file shows reviewed, accepted or contributed at its rev has nothing to review;
    # a dispute it lists waits for a human.
    _initialized(event, pending)
    for standing in event.standings:
        if standing.rev == event.rev and standing.status in ("reviewed", "accepted", "contributed"):
            pending.remove(standing.agent, event.key, "review")
        elif standing.status == "disputed":
            pending.remove(standing.agent, event.key, "review")
            pending.add(HUMANS, event.key, "resolve")


@_apply.register
def _(event: AgentRegistered, pending: Pending) -> None:
    # A new agent starts pending on every page, so no page is ready for approval without it.
    if not event.human:
        for page in (pending.lookup(page_status.VIEW, page_status.INDEX) or {}).get("pages", []):
            pending.add(event.name, page, "review")
            pending.remove(HUMANS, page, "approve")


@_apply.register
def _(event: EndorsementRecorded, pending: Pending) -> None:
    pending.remove(event.agent, event.key, "review")
    _resolved_unless_disputed(pending, event.key)
    _approvable(event, pending)


@_apply.register
def _(event: EndorsementStaled, pending: Pending) -> None:
    pending.add(event.agent, event.key, "review")


@_apply.register
def _(event: PageRevised, pending: Pending) -> None:
    if event.significant:
        pending.remove(event.editor, event.key, "review")
        pending.remove(HUMANS, event.key, "approve")  # a new rev: its own 14 days


@_apply.register
def _(event: EndorsementDisputed, pending: Pending) -> None:
    pending.remove(event.agent, event.key, "review")
    pending.remove(HUMANS, event.key, "approve")
    pending.add(HUMANS, event.key, "resolve")


@_apply.register
def _(event: PendingAged, pending: Pending) -> None:
    # The 14 days are up: if that leaves the page ready, a human has an approval to give.
    lifecycle = (pending.lookup(page_status.VIEW, event.key) or {}).get("lifecycle")
    canonical = lifecycle == "canonical" or (lifecycle == "soft-canonical" and not event.canonical_ready)
    if (event.canonical_ready or event.soft_canonical_ready) and not canonical:
        pending.add(HUMANS, event.key, "approve")


@_apply.register
def _(event: CanonApproved, pending: Pending) -> None:
    pending.remove(HUMANS, event.key, "approve")


@_apply.register
def _(event: AgentWentDormant, pending: Pending) -> None:
    # A dormant agent's pending statuses stop blocking: nothing is asked of it until it acts.
    for page in (pending.lookup(page_status.VIEW, page_status.INDEX) or {}).get("pages", []):
        pending.remove(event.name, page, "review")


@_apply.register
def _(event: DisputeResolved, pending: Pending) -> None:
    _resolved_unless_disputed(pending, event.key)
    _approvable(event, pending)


@_apply.register
def _(event: ReadinessReassessed, pending: Pending) -> None:
    _approvable(event, pending)


def _approvable(event: EndorsementRecorded | DisputeResolved | ReadinessReassessed, pending: Pending) -> None:
    # The rules say, as they record it, whether the page is now ready for a human's approval.
    if event.approvable:
        pending.add(HUMANS, event.key, "approve")
    else:
        pending.remove(HUMANS, event.key, "approve")


def _resolved_unless_disputed(pending: Pending, page: str) -> None:
    # The pages view, already updated for this event, says whether disputes remain.
    if not (pending.lookup(page_status.VIEW, page) or {}).get("disputes"):
        pending.remove(HUMANS, page, "resolve")
