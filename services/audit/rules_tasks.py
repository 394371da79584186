"""The task rules the audit re-runs: the engineer/reviewer FSM and its arbitration (PROTOCOLS section 5)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from athenaeum.aggregates import task as k
from athenaeum.aggregates import task_arbitration as arbitration
from athenaeum.aggregates import task_review as review
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event
from athenaeum.events.task import (
    TASK_IDS,
    BuildReported,
    ContradictionReported,
    EngineeringStarted,
    ReviewConcluded,
    ReviewPosted,
    ReviewStarted,
    RoleSessionEnded,
    RulingPosted,
    TaskClaimed,
    TaskFailed,
    TaskIdIssued,
    TaskReset,
)
from athenaeum.events.task_commands import FindingInput, ResolutionInput
from athenaeum.services.audit.recheck import Rechecks, Replayed, own

RECHECKS = Rechecks()


@RECHECKS.of(TaskIdIssued)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    created = g[1] if len(g) > 1 else None  # the creation issued with the id
    names = ("project_id", "title", "plan_path", "review_cycle_budget", "reviewer_roles")
    return k.create(x.state(TASK_IDS), c, **{name: getattr(created, name, "") for name in names})


@RECHECKS.of(TaskClaimed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return k.claim(own(g, x), c)


_TRANSITIONS: dict[type, Callable[[Event], tuple[str, dict[str, Any]]]] = {
    EngineeringStarted: lambda e: ("engineering", {}),
    BuildReported: lambda e: ("built", {"buildStatus": e.build_status.value, "commitSha": e.commit_sha}),
    ReviewStarted: lambda e: ("reviewing", {}),
    ContradictionReported: lambda e: ("arbitrating", {"findingIds": list(e.finding_ids), "notes": e.notes}),
    TaskFailed: lambda e: ("failed", {"failureReason": e.failure_reason.value, "failureDetail": e.failure_detail}),
}


@RECHECKS.of(*_TRANSITIONS)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    to, payload = _TRANSITIONS[type(g[0])](g[0])
    return k.transition(own(g, x), c, to=to, payload=payload)


@RECHECKS.of(ReviewConcluded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return review.conclude(own(g, x), c)


@RECHECKS.of(ReviewPosted)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ReviewPosted)
    findings = [FindingInput(severity=f.severity, title=f.title, description=f.description, evidence=f.evidence,
                             fix=f.fix, file_path=f.file_path, line=f.line, ordinal=f.ordinal) for f in e.findings]
    return review.post_review(own(g, x), c, reviewer_role=e.reviewer_role, verdict=e.verdict, raw_markdown=e.raw_markdown,
                         findings=findings, cycle=e.cycle)


@RECHECKS.of(RulingPosted)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, RulingPosted)
    state = own(g, x)
    resolution = e.contradiction_resolution
    given = None if resolution is None else ResolutionInput(
        upheld_finding_id=resolution.upheld_finding_id, retired_finding_id=resolution.retired_finding_id,
        rationale=resolution.rationale)
    return arbitration.post_ruling(state, c, project_id=state.project_id if state else "", trigger=e.trigger.value,
                         ruling=e.ruling.value, ruling_markdown=e.ruling_markdown, resolution=given)


@RECHECKS.of(RoleSessionEnded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, RoleSessionEnded)
    return k.end_role_session(own(g, x), c, role=e.role, exit_code=e.exit_code)


@RECHECKS.of(TaskReset)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return k.reset(own(g, x), c)
