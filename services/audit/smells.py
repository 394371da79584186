"""What the auditor checks once the ledger is read: deadlines that passed with nothing recorded
(a timer that never fired), and whether the live views are what the ledger gives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from athenaeum.aggregates import page_state, quorum_state, ratification_state
from athenaeum.aggregates.context import Member
from athenaeum.events import family_of_id, natural_key
from athenaeum.events.fleet import DORMANT_AFTER, FLEET_ID
from athenaeum.events.page import SOFT_CANONICAL_AGING
from athenaeum.services.audit.findings import Finding
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore

# A timer meets its deadline a moment after it: only a deadline unmet for longer is a smell.
TIMER_GRACE = timedelta(minutes=1)


def overdue(states: Mapping[str, Any], members: Sequence[Member], now: datetime) -> list[Finding]:
    """Deadlines that passed with nothing recorded: a timer that never fired."""
    findings = []
    for aggregate_id, state in states.items():
        family = family_of_id(aggregate_id)
        deadline = _deadline(family, state)
        if deadline is not None and _missed(*deadline, now):
            findings.append(Finding("WARN", "deadline_missed", family, natural_key(aggregate_id), None,
                                    f"due {(deadline[0] + deadline[1]).isoformat()} and not met: a timer never fired"))
    roster = states.get(FLEET_ID)
    for member in members:
        if _missed(member.last_active, DORMANT_AFTER, now) and (
                roster is None or roster.dormant.get(member.name) != member.last_active):
            findings.append(Finding("WARN", "deadline_missed", "fleet", member.name, None,
                                    f"idle since {member.last_active.isoformat()}, not marked dormant"))
    return findings


def views_compared(live: ReadModelStore, rebuilt: Mapping[tuple[str, str], Any], position: int) -> list[Finding]:
    """Where the live views differ from those the ledger gives, up to ``position``."""
    live_position = live.position(PROJECTION) or 0
    if live_position != position:
        return [Finding("INFO", "views_not_compared", "views", "*", live_position,
                        f"the live views are at position {live_position}, the ledger at {position}")]
    documents = {(view, key): document for view in live.views() for key, document in live.documents(view).items()}
    if (live.position(PROJECTION) or 0) != live_position:  # the projector wrote while they were read
        return [Finding("INFO", "views_not_compared", "views", "*", live_position,
                        "the live views moved on while the audit read them")]
    return [
        Finding("HARD", "view_differs", "views", f"{view}/{key}", live_position,
                f"the live {view} document {key!r} is not what the ledger gives")
        for view, key in sorted(set(documents) | set(rebuilt))
        if documents.get((view, key)) != rebuilt.get((view, key))
    ]


def _missed(start: datetime, span: timedelta, now: datetime) -> bool:
    """Whether a deadline ``span`` after ``start`` passed more than the grace before ``now``;
    a difference of times, which cannot overflow as a recorded time near year 9999 plus a
    span would."""
    return now - start > span + TIMER_GRACE


def _deadline(family: str, state: Any) -> tuple[datetime, timedelta] | None:
    """An aggregate's own deadline still unmet: the time it counts from, and how long after."""
    if family == "ratification" and isinstance(state, ratification_state.Ratification):
        return (state.expires_at, timedelta(0)) if state.status is ratification_state.Status.OPEN else None
    if family == "quorum" and isinstance(state, quorum_state.Proposal):
        return (state.deadline, timedelta(0)) if state.status is quorum_state.Status.OPEN else None
    if family == "page" and isinstance(state, page_state.Page) and state.aged_rev < state.rev:
        return state.revised_at, SOFT_CANONICAL_AGING
    return None
