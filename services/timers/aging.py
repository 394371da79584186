"""Time passing on canon pages and the fleet, as the timer service meets it: a revision's 14
days (soft-canonical aging) and an agent's 60 idle days (dormancy). Each is a real schedule that
fires an idempotent command; the rules read the clock and the fleet's activity, and record the
fact only when it is true.

Time also moves a page's readiness by each agent's clock (14 days as a newcomer or since it
returned, 30 idle days out of the active set): ``unready_offers`` finds the pages where the
rules now disagree with the approvals ``check`` offers the humans, for the timer to reassess."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import msgspec

from athenaeum.aggregates import page_canon
from athenaeum.aggregates.context import Member
from athenaeum.events import Event, family_id
from athenaeum.events.fleet import DORMANT_AFTER, FLEET_ID, AgentRegistered
from athenaeum.events.page import SOFT_CANONICAL_AGING, PageInitialized, PageRevised
from athenaeum.events.fleet_commands import AgeAgent
from athenaeum.events.page_commands import AgePage, ReassessPage
from athenaeum.projectors import fleet_activity, page_status, pending_work
from athenaeum.projectors.views import Lookup
from athenaeum.services.timers.deadlines import Deadline
from athenaeum.services.views.read_models import ReadModelStore


# Soft-canonical aging: 14 days after each significant revision.
def _revision_due(event: Event, lookup: Lookup) -> tuple[str, datetime] | None:
    if isinstance(event, PageInitialized) or (isinstance(event, PageRevised) and event.significant):
        return event.key, event.timestamp + SOFT_CANONICAL_AGING
    return None


def _age_page(key: str, state: Any, store: ReadModelStore) -> AgePage:
    # One command per revision: a timer fired twice for one rev is one command.
    return AgePage(page=key, command_id=f"age:v{state.rev if state is not None else 0}")


def _page_next_due(key: str, state: Any, store: ReadModelStore) -> datetime | None:
    return None if state is None or state.aged_rev >= state.rev else state.revised_at + SOFT_CANONICAL_AGING


def _pages_overdue(store: ReadModelStore, now: datetime) -> Iterable[str]:
    return [
        key
        for key, document in store.documents(page_status.VIEW).items()
        if key != page_status.INDEX and document.get("aging_due") and document.get("aged_rev", 0) < document["rev"]
        and msgspec.convert(document["aging_due"], datetime) <= now
    ]


PAGE_AGING = Deadline("page-aging", _revision_due, lambda key: family_id("page", key), _age_page, _page_next_due,
                      _pages_overdue)


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


def _mark_dormant(key: str, roster: Any, store: ReadModelStore) -> AgeAgent:
    # One command per agent and idle span: the same span fired again is the same command.
    last = _last_active(store, key)
    return AgeAgent(name=key, command_id=f"dormant:{key}:{last.isoformat() if last else ''}")


def _agent_next_due(key: str, roster: Any, store: ReadModelStore) -> datetime | None:
    last = _last_active(store, key)
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


DORMANCY = Deadline("dormancy", _activity_due, lambda key: FLEET_ID, _mark_dormant, _agent_next_due, _agents_overdue,
                    slack=timedelta(days=1))


def approvals_offered(store: ReadModelStore) -> tuple[list[str], set[str]]:
    """Every page, and those whose approval ``check`` offers the humans now."""
    humans = store.get(pending_work.VIEW, pending_work.HUMANS) or {}
    offered = {item["id"] for item in humans.get("items", []) if item["kind"] == "page" and item["action"] == "approve"}
    return (store.get(page_status.VIEW, page_status.INDEX) or {}).get("pages", []), offered


def reassessment(key: str, state: Any, members: tuple[Member, ...], offered: set[str], now: datetime) -> ReassessPage | None:
    """The command that records a page's readiness, when the rules' verdict now differs from
    the approval ``check`` offers (or not): one per state and verdict, so replicas sweeping at
    once append it once."""
    if state is None or (ready := page_canon.ready_for_approval(state, members, now)) == (key in offered):
        return None
    return ReassessPage(page=key, command_id=f"readiness:v{state.version}:{ready}")
