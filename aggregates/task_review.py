"""Reviews of a task's cycle (PROTOCOLS.md section 5): one per role per cycle with ledger-issued
finding ids, the verdicts the original's reviewer fan-out records, and the ledger's
classification of the cycle: accept, revise, or past the budget to an arbitrator."""

from __future__ import annotations

from collections.abc import Sequence

from athenaeum.aggregates.rules import Context, Invalid, Stamp
from athenaeum.aggregates.task_checks import (
    MARKDOWN_LIMIT,
    AlreadyReviewed,
    IllegalTransition,
    one_of,
    require_role,
    require_status,
    require_title,
)
from athenaeum.aggregates.task_state import Task
from athenaeum.events import Event
from athenaeum.events.task import (
    ArbitrationRequested,
    Finding,
    ImportedReview,
    ReviewConcluded,
    ReviewOutcome,
    ReviewPosted,
    Severity,
    TaskCompleted,
    TaskStatus,
    Trigger,
    Verdict,
    VerdictRecorded,
)
from athenaeum.events.task_commands import LONG_TEXT_LIMIT, PostReview, TransitionPayload


def post_review(task: Task, command: PostReview, context: Context) -> list[Event]:
    reviewer_role, raw_markdown, findings = command.reviewer_role, command.raw_markdown, command.findings
    require_role(reviewer_role, "reviewerRole")
    if len(raw_markdown) > MARKDOWN_LIMIT:
        raise Invalid(f"rawMarkdown is over {MARKDOWN_LIMIT} characters", "rawMarkdown")
    for finding in findings:
        require_title(finding.title, "findings.title")
        for name in ("description", "evidence", "fix"):
            if len(getattr(finding, name)) > LONG_TEXT_LIMIT:
                raise Invalid(f"findings.{name} is over {LONG_TEXT_LIMIT} characters", f"findings.{name}")
    require_status(task, "a review", TaskStatus.REVIEWING)
    if command.cycle != task.review_cycle_count:
        raise IllegalTransition(f"task {task.key} is reviewing cycle {task.review_cycle_count}, not {command.cycle}",
                                "cycle")
    if reviewer_role in task.reviewed_roles:
        raise AlreadyReviewed(f"{reviewer_role!r} has already reviewed cycle {task.review_cycle_count}", "reviewerRole")
    numbered = tuple(
        Finding(
            id=task.next_finding_id + offset,
            ordinal=f.ordinal if f.ordinal is not None else offset + 1,
            **{field: getattr(f, field) for field in ("severity", "title", "description", "evidence", "fix",
                                                      "file_path", "line")},
        )
        for offset, f in enumerate(findings)
    )
    return [Stamp(task.id, task.version, context)(
        ReviewPosted, cycle=task.review_cycle_count, reviewer_role=reviewer_role, verdict=command.verdict,
        raw_markdown=raw_markdown, findings=numbered,
    )]


def record_verdict(task: Task, payload: TransitionPayload, context: Context) -> list[Event]:
    """``reviewing → reviewing``: a reviewer's verdict on the current cycle, which the original's
    reviewer fan-out posts for its dashboard (``reviewerVerdicts``). The cycle's classification
    reads the reviews, never these."""
    if payload.reviewer_role is None:
        raise Invalid("payload.reviewerRole is required on reviewing→reviewing", "reviewerRole")
    require_role(payload.reviewer_role, "reviewerRole")
    if payload.verdict is None:
        raise Invalid(f"payload.verdict is required and must be one of: {one_of(Verdict)}", "verdict")
    return [Stamp(task.id, task.version, context)(VerdictRecorded, reviewer_role=payload.reviewer_role,
                                                  verdict=payload.verdict)]


def revision_reason(reviews: Sequence[ReviewPosted | ImportedReview]) -> str | None:
    """Why the cycle must be revised, or None when it is accepted: any request_changes, any
    reviewer with 4 or more findings, two reviewers with 2 or more each, or any BLOCKING
    finding; out_of_scope counts as clear."""
    counted = [r for r in reviews if r.verdict is not Verdict.OUT_OF_SCOPE]
    if changes := [r.reviewer_role for r in counted if r.verdict is Verdict.REQUEST_CHANGES]:
        return f"{', '.join(changes)} requested changes"
    if many := [r.reviewer_role for r in counted if len(r.findings) >= 4]:
        return f"{', '.join(many)} raised 4 or more findings"
    if len(several := [r.reviewer_role for r in counted if len(r.findings) >= 2]) >= 2:
        return f"{', '.join(several)} each raised 2 or more findings"
    if blocking := [r.reviewer_role for r in counted if any(f.severity is Severity.BLOCKING for f in r.findings)]:
        return f"{', '.join(blocking)} raised a BLOCKING finding"
    return None


def classify(reviews: Sequence[ReviewPosted | ImportedReview]) -> ReviewOutcome:
    return ReviewOutcome.ACCEPT if revision_reason(reviews) is None else ReviewOutcome.REVISE


def conclude(task: Task, to: TaskStatus, context: Context) -> list[Event]:
    """The cycle ends as the requester says, ``completed`` or ``revising``, when that is what
    its reviews call for; the other is refused (409), as the original does. A revise past the
    budget goes to the arbitrator instead."""
    require_status(task, to.value, TaskStatus.REVIEWING)
    cycle = task.review_cycle_count
    if not task.reviews:
        raise IllegalTransition(f"cycle {cycle} of task {task.key} has no review yet", "to")
    reason = revision_reason(task.reviews)
    if to is TaskStatus.COMPLETED and reason is not None:
        raise IllegalTransition(f"the reviews of cycle {cycle} call for revising, not completed: {reason}", "to")
    if to is TaskStatus.REVISING and reason is None:
        raise IllegalTransition(
            f"the reviews of cycle {cycle} call for completed, not revising: no revision trigger fired (a "
            "request_changes verdict, 4 findings from one reviewer, 2 each from two, or a BLOCKING finding)", "to")
    stamp = Stamp(task.id, task.version, context)
    if reason is None:
        return [stamp(ReviewConcluded, cycle=cycle, outcome=ReviewOutcome.ACCEPT, review_cycle_count=cycle),
                stamp(TaskCompleted)]
    count = cycle + 1
    concluded = stamp(ReviewConcluded, cycle=cycle, outcome=ReviewOutcome.REVISE, review_cycle_count=count)
    if count > task.review_cycle_budget:
        return [concluded, stamp(ArbitrationRequested, trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED)]
    return [concluded]
