"""Where does task N stand: the ``tasks`` view, one document per task id, with the original
contract's field names (``reviewerVerdicts``, ``arbitrationPendingTrigger``, ``completedAt``,
...) and a progress log of what happened."""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.task import (
    ArbitrationRequested,
    BuildReported,
    ContradictionReported,
    EngineeringStarted,
    ReviewConcluded,
    ReviewOutcome,
    ReviewPosted,
    ReviewStarted,
    RoleSessionEnded,
    Ruling,
    RulingPosted,
    TaskClaimed,
    TaskCompleted,
    TaskCreated,
    TaskFailed,
    TaskImported,
    TaskIntegrated,
    TaskReset,
    VerdictRecorded,
)
from athenaeum.projectors.views import Document, per_aggregate

VIEW = "tasks"
_to_builtins = msgspec.to_builtins


def addendum_path(task: int) -> str:
    """Where the original's engineer reads a contradiction ruling, in its workspace; the ledger
    keeps the addendum itself (``GET /tasks/{id}/arbitrations/reviewer_contradiction/addendum``)."""
    return f".scratch/arbitrations/{task}/contradiction-ruling.md"


def _logged(event: Event, current: Document, line: str, **changes: object) -> Document:
    at = _to_builtins(event.timestamp)
    entry = {"at": at, "by": event.actor, "event": event.tag, "detail": line}
    return current | {"progressLog": [*current["progressLog"], entry], "updatedAt": at} | changes


@singledispatch
def _apply(event: Event, current: Document) -> Document | None:
    return None


project = per_aggregate(VIEW, _apply)  # the cases below register on ``_apply``


def _opened(event: TaskCreated | TaskImported) -> Document:
    """A task as it starts: pending, nothing done (an imported one then says where it stood)."""
    return {
        "id": int(event.key),
        "projectId": event.project_id,
        "title": event.title,
        "planPath": event.plan_path,
        "status": "pending",
        "epoch": 0,
        "reviewCycleCount": 0,
        "reviewCycleBudget": event.review_cycle_budget,
        "reviewerRoles": list(event.reviewer_roles),
        "reviewerVerdicts": {},
        "arbitrationPendingTrigger": None,
        "arbitrationAddendumPath": None,
        "contradictionFindingIds": [],
        "claimedBy": None,
        "claimedAt": None,
        "buildStatus": None,
        "commitSha": None,
        "failureReason": None,
        "failureDetail": None,
        "createdAt": _to_builtins(event.timestamp),
        "completedAt": None,
        "progressLog": [],
    }


@_apply.register
def _(event: TaskCreated, current: Document) -> Document:
    return _logged(event, _opened(event), f"created: {event.title}")


@_apply.register
def _(event: TaskImported, current: Document) -> Document:
    reviewing = event.status.value == "reviewing"
    verdicts = {r.reviewer_role: r.verdict.value
                for r in event.reviews if reviewing and r.cycle == event.review_cycle_count}
    where = {
        "status": event.status.value,
        "reviewCycleCount": event.review_cycle_count,
        "reviewerVerdicts": verdicts,
        "arbitrationPendingTrigger": event.pending_trigger.value if event.pending_trigger else None,
        "claimedBy": event.claimed_by,
        "buildStatus": event.build_status.value if event.build_status else None,
        "commitSha": event.commit_sha,
        "failureReason": event.failure_reason.value if event.failure_reason else None,
        "failureDetail": event.failure_detail or None,
        "createdAt": _to_builtins(event.created_at or event.timestamp),
        "importedFrom": event.source,
    }
    return _logged(event, _opened(event) | where, f"imported from {event.source}: {event.title} "
                                                  f"({event.status.value}, cycle {event.review_cycle_count})")


@_apply.register
def _(event: TaskClaimed, current: Document) -> Document:
    return _logged(event, current, f"claimed by {event.by}", status="claimed", claimedBy=event.by,
                   claimedAt=_to_builtins(event.timestamp))


@_apply.register
def _(event: EngineeringStarted, current: Document) -> Document:
    return _logged(event, current, "engineering", status="engineering")


@_apply.register
def _(event: BuildReported, current: Document) -> Document:
    at = f" at {event.commit_sha}" if event.commit_sha else ""
    return _logged(event, current, f"build {event.build_status.value}{at}", status="built",
                   buildStatus=event.build_status.value, commitSha=event.commit_sha)


@_apply.register
def _(event: ReviewStarted, current: Document) -> Document:
    return _logged(event, current, f"reviewing cycle {event.cycle}", status="reviewing", reviewerVerdicts={})


@_apply.register
def _(event: ReviewPosted, current: Document) -> Document:
    ids = [finding.id for finding in event.findings]
    return _logged(event, current, f"{event.reviewer_role} review of cycle {event.cycle}: {event.verdict.value}, "
                                   f"findings {ids}")


@_apply.register
def _(event: VerdictRecorded, current: Document) -> Document:
    verdicts = current.get("reviewerVerdicts", {}) | {event.reviewer_role: event.verdict.value}
    return _logged(event, current, f"{event.reviewer_role} verdict: {event.verdict.value}", reviewerVerdicts=verdicts)


@_apply.register
def _(event: ReviewConcluded, current: Document) -> Document:
    changes: dict = {"reviewCycleCount": event.review_cycle_count}
    if event.outcome is ReviewOutcome.REVISE:
        changes["status"] = "revising"
    return _logged(event, current, f"cycle {event.cycle} concluded: {event.outcome.value}", **changes)


@_apply.register
def _(event: ContradictionReported, current: Document) -> Document:
    ids = list(event.finding_ids)
    return _logged(event, current, f"contradiction between findings {ids}: {event.notes}",
                   contradictionFindingIds=ids)


@_apply.register
def _(event: ArbitrationRequested, current: Document) -> Document:
    return _logged(event, current, f"arbitration requested: {event.trigger.value}", status="arbitrating",
                   arbitrationPendingTrigger=event.trigger.value)


@_apply.register
def _(event: RulingPosted, current: Document) -> Document:
    changes: dict = {"arbitrationPendingTrigger": None}
    if event.ruling is Ruling.RULE:
        changes |= {"status": "revising", "arbitrationAddendumPath": addendum_path(int(event.key))}
    return _logged(event, current, f"ruling on {event.trigger.value}: {event.ruling.value}", **changes)


@_apply.register
def _(event: TaskCompleted, current: Document) -> Document:
    return _logged(event, current, "completed", status="completed", completedAt=_to_builtins(event.timestamp))


@_apply.register
def _(event: TaskIntegrated, current: Document) -> Document:
    return _logged(event, current, "integrated", status="integrated")


@_apply.register
def _(event: TaskFailed, current: Document) -> Document:
    # A task failed while arbitrating (its arbitrator's no-op) waits on a ruling no longer.
    return _logged(event, current, f"failed: {event.failure_reason.value}", status="failed",
                   failureReason=event.failure_reason.value, failureDetail=event.failure_detail,
                   arbitrationPendingTrigger=None, completedAt=_to_builtins(event.timestamp))


@_apply.register
def _(event: RoleSessionEnded, current: Document) -> Document:
    return _logged(event, current, f"{event.role} session ended with exit code {event.exit_code}")


@_apply.register
def _(event: TaskReset, current: Document) -> Document:
    fresh = {"status": "pending", "epoch": event.epoch, "reviewCycleCount": 0, "reviewerVerdicts": {},
             "arbitrationPendingTrigger": None, "arbitrationAddendumPath": None, "contradictionFindingIds": [],
             "claimedBy": None, "claimedAt": None, "buildStatus": None, "commitSha": None, "failureReason": None,
             "failureDetail": None, "completedAt": None}
    return _logged(event, current, f"reset by {event.by}: epoch {event.epoch}", **fresh)
