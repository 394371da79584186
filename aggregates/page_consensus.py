"""Where each agent stands on a page, and whether it is ready for canon (PROTOCOLS.md section 4).

Derived, never stored: it depends on the fleet's activity and on the clock, so the approval
rule and the ``page show`` query both compute it here, from the page and the fleet.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from athenaeum.aggregates.context import Member
from athenaeum.aggregates.page_state import Page
from athenaeum.events.fleet import ACTIVE_WINDOW, DORMANT_AFTER
from athenaeum.events.page import SOFT_CANONICAL_AGING

AGREEING = ("accepted", "contributed")


class Standing(msgspec.Struct, omit_defaults=True):
    agent: str
    status: str  # pending, reviewed, accepted, contributed, disputed, stale, dormant
    rev: int
    since: datetime
    active: bool
    disputed: str | None = None
    thread: str | None = None
    decision: str | None = None
    note: str | None = None


class Consensus(msgspec.Struct):
    standings: list[Standing]
    active_agents: list[str]
    canonical_ready: bool
    canonical_reasons: list[str]
    soft_canonical_ready: bool
    soft_canonical_reasons: list[str]


def consensus(page: Page, members: Sequence[Member], now: datetime) -> Consensus:
    standings = [_standing(page, member, now) for member in sorted(members, key=lambda m: m.name)]
    active = [s for s in standings if s.active]
    # Any open dispute blocks, a registered agent's or not (a human's, a newcomer's).
    disputes = [f"{agent} disputes {e.disputed!r}" for agent, e in sorted(page.endorsements.items())
                if e.status == "disputed"]
    shared = ([] if active else ["no agent is active"]) + disputes
    canonical = shared + [f"{s.agent} is {s.status} (page at v{page.rev})" for s in active if s.status not in AGREEING]
    return Consensus(
        standings=standings,
        active_agents=[s.agent for s in active],
        canonical_ready=not canonical,
        canonical_reasons=canonical,
        soft_canonical_ready=not (soft := shared + _soft_canonical_gaps(active, now)),
        soft_canonical_reasons=soft,
    )


def _soft_canonical_gaps(active: list[Standing], now: datetime) -> list[str]:
    agreeing = [s for s in active if s.status in AGREEING]
    gaps = []
    if 3 * len(agreeing) < 2 * len(active):
        gaps.append(f"{len(agreeing)} of {len(active)} active agents accept, fewer than two thirds")
    for s in active:
        if s.status in AGREEING:
            continue
        if s.status not in ("pending", "stale"):
            gaps.append(f"{s.agent} is {s.status}")
        elif now - s.since < SOFT_CANONICAL_AGING:
            gaps.append(f"{s.agent} is {s.status} since {s.since:%Y-%m-%d}, under 14 days")
    return gaps


def _standing(page: Page, member: Member, now: datetime) -> Standing:
    idle = now - member.last_active
    endorsement = page.endorsements.get(member.name)
    active = idle < ACTIVE_WINDOW
    if idle >= DORMANT_AFTER:
        return Standing(member.name, "dormant", page.rev, member.last_active + DORMANT_AFTER, active)
    if endorsement is None:
        return Standing(member.name, "pending", page.rev, max(page.revised_at, member.registered_at), active)
    details = {"disputed": endorsement.disputed, "thread": endorsement.thread, "decision": endorsement.decision,
               "note": endorsement.note}
    returned = member.returned_at is not None and endorsement.since < member.returned_at
    if endorsement.status != "disputed" and (endorsement.rev != page.rev or endorsement.status == "stale" or returned):
        since = endorsement.since if endorsement.status == "stale" else max(page.revised_at, member.returned_at or page.revised_at)
        return Standing(member.name, "stale", endorsement.rev, since, active, **details)
    return Standing(member.name, endorsement.status, endorsement.rev, endorsement.since, active, **details)
