"""Time passing, as the timer service meets it: a revision's 14 days (soft-canonical aging) and
an agent's 60 idle days (dormancy). Each is a real schedule that fires an idempotent command;
the rules read the clock and the fleet's activity, and record the fact only when it is true.

Time also moves a page's readiness by each agent's clock (14 days as a newcomer or since it
returned, 30 idle days out of the active set): a periodic sweep reassesses the pages where the
rules now disagree with the approvals ``check`` offers the humans."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

import msgspec

from athenaeum.aggregates import fleet
from athenaeum.aggregates import page as rules
from athenaeum.events import Event, family_id
from athenaeum.events.fleet import DORMANT_AFTER, FLEET_ID, AgentRegistered
from athenaeum.events.page import SOFT_CANONICAL_AGING, PageInitialized, PageRevised
from athenaeum.events.page_commands import AgeAgent, AgePage, ReassessPage
from athenaeum.projectors import fleet_activity, page_status, pending_work
from athenaeum.projectors.views import Lookup
from athenaeum.services.commands.handler import CommandHandler, existing, project_fleet
from athenaeum.services.timers.deadlines import Deadline
from athenaeum.services.commands.page_routes import project
from athenaeum.services.views.read_models import ReadModelStore
from athenaeum.services.commands.replies import Reply

log = logging.getLogger(__name__)


def age_page(handler: CommandHandler, command: AgePage, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.age(state, context, **handler.activity().as_read())

    checked = existing(decide, f"page {command.page!r}", "page")
    return handler.handle(family_id("page", command.page), project, checked, actor, command.command_id)


def reassess_page(handler: CommandHandler, command: ReassessPage, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.reassess(state, context, **handler.activity().as_read())

    checked = existing(decide, f"page {command.page!r}", "page")
    return handler.handle(family_id("page", command.page), project, checked, actor, command.command_id)


def sweep_readiness(handler: CommandHandler, store: ReadModelStore, actor: str) -> None:
    """Reassess every page whose readiness for approval the clock changed: where the rules'
    verdict now differs from the approval ``check`` offers (or not) the humans."""
    humans = store.get(pending_work.VIEW, pending_work.HUMANS) or {}
    offered = {item["id"] for item in humans.get("items", []) if item["kind"] == "page" and item["action"] == "approve"}
    activity, now = handler.activity(), handler.clock()
    for key in (store.get(page_status.VIEW, page_status.INDEX) or {}).get("pages", []):
        state = handler.load(family_id("page", key), project)
        if state is None or (ready := rules.ready_for_approval(state, activity.members, now)) == (key in offered):
            continue
        # One command per state and verdict: replicas sweeping at once append it once.
        reply = reassess_page(handler, ReassessPage(page=key, command_id=f"readiness:v{state.version}:{ready}"), actor)
        if not reply.ok:
            log.warning("reassessing %s: %s", key, reply.error)


def age_agent(handler: CommandHandler, command: AgeAgent, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return fleet.mark_dormant(state, context, name=command.name, **handler.activity().as_read())

    return handler.handle(FLEET_ID, project_fleet, decide, actor, command.command_id)


# Soft-canonical aging: 14 days after each significant revision.
def _revision_due(event: Event, lookup: Lookup) -> tuple[str, datetime] | None:
    if isinstance(event, PageInitialized) or (isinstance(event, PageRevised) and event.significant):
        return event.key, event.timestamp + SOFT_CANONICAL_AGING
    return None


def _age_page_by_timer(handler: CommandHandler, key: str, actor: str) -> Reply:
    state = handler.load(family_id("page", key), project)
    rev = state.rev if state is not None else 0
    return age_page(handler, AgePage(page=key, command_id=f"age:v{rev}"), actor)


def _page_next_due(handler: CommandHandler, store: ReadModelStore, key: str) -> datetime | None:
    state = handler.load(family_id("page", key), project)
    return None if state is None or state.aged_rev >= state.rev else state.revised_at + SOFT_CANONICAL_AGING


def _pages_overdue(store: ReadModelStore, now: datetime) -> Iterable[str]:
    return [
        key
        for key, document in store.documents(page_status.VIEW).items()
        if key != page_status.INDEX and document.get("aging_due") and document.get("aged_rev", 0) < document["rev"]
        and msgspec.convert(document["aging_due"], datetime) <= now
    ]


PAGE_AGING = Deadline("page-aging", _revision_due, _age_page_by_timer, _page_next_due, _pages_overdue)


# Dormancy: 60 days after an agent's last accepted event.
def _activity_due(event: Event, lookup: Lookup) -> tuple[str, datetime] | None:
    if isinstance(event, AgentRegistered):
        return None if event.human else (event.name, event.timestamp + DORMANT_AFTER)
    agent = lookup(fleet_activity.VIEW, event.actor)
    if agent is None or agent["human"]:
        return None
    return event.actor, event.timestamp + DORMANT_AFTER


def _last_active(store: ReadModelStore, key: str) -> datetime | None:
    agent = store.get(fleet_activity.VIEW, key)
    return None if agent is None or agent["human"] else msgspec.convert(agent["last_active"], datetime)


def _mark_dormant_by_timer(handler: CommandHandler, key: str, actor: str) -> Reply:
    # One command per agent and idle span: the same span fired again is the same command.
    last = next((m.last_active for m in handler.activity().members if m.name == key), None)
    command_id = f"dormant:{key}:{last.isoformat() if last else ''}"
    return age_agent(handler, AgeAgent(name=key, command_id=command_id), actor)


def _agent_next_due(handler: CommandHandler, store: ReadModelStore, key: str) -> datetime | None:
    last = _last_active(store, key)
    roster = handler.load(FLEET_ID, project_fleet)
    if last is None or (roster is not None and roster.dormant.get(key) == last):
        return None
    return last + DORMANT_AFTER


def _agents_overdue(store: ReadModelStore, now: datetime) -> Iterable[str]:
    return [
        key
        for key, agent in store.documents(fleet_activity.VIEW).items()
        if not agent["human"] and agent.get("dormant_since") != agent["last_active"]
        and msgspec.convert(agent["last_active"], datetime) + DORMANT_AFTER <= now
    ]


DORMANCY = Deadline("dormancy", _activity_due, _mark_dormant_by_timer, _agent_next_due, _agents_overdue,
                    slack=timedelta(days=1))
