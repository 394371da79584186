"""Reviews of a task's cycle (PROTOCOLS.md section 5): one per role per cycle with ledger-issued
finding ids, and the ledger's classification of the cycle: accept, revise, or past the budget
to an arbitrator."""

from __future__ import annotations

from collections.abc import Sequence

from athenaeum.aggregates.rules import Context, Invalid, Stamp
from athenaeum.aggregates.task_checks import (
    MARKDOWN_LIMIT,
    AlreadyReviewed,
    IllegalTransition,
    require_role,
    require_status,
    require_title,
)
from athenaeum.aggregates.task_state import Task
from athenaeum.events import Event
from athenaeum.events.task import (
    ArbitrationRequested,
    Finding,
    ReviewConcluded,
    ReviewOutcome,
    ReviewPosted,
    Severity,
    TaskCompleted,
    TaskStatus,
    Trigger,
    Verdict,
)
from athenaeum.events.task_commands import LONG_TEXT_LIMIT, PostReview


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
    if command.cycle is not None and command.cycle != task.review_cycle_count:
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


def classify(reviews: Sequence[ReviewPosted]) -> ReviewOutcome:
    """revise on any request_changes, any reviewer with 4 or more findings, two reviewers with
    2 or more each, or any BLOCKING finding; out_of_scope counts as clear."""
    counted = [r for r in reviews if r.verdict is not Verdict.OUT_OF_SCOPE]
    if any(r.verdict is Verdict.REQUEST_CHANGES for r in counted):
        return ReviewOutcome.REVISE
    if any(len(r.findings) >= 4 for r in counted) or sum(len(r.findings) >= 2 for r in counted) >= 2:
        return ReviewOutcome.REVISE
    if any(f.severity is Severity.BLOCKING for r in counted for f in r.findings):
        return ReviewOutcome.REVISE
    return ReviewOutcome.ACCEPT


def conclude(task: Task, context: Context) -> list[Event]:
    require_status(task, "a review's conclusion", TaskStatus.REVIEWING)
    if not task.reviews:
        raise IllegalTransition(f"cycle {task.review_cycle_count} of task {task.key} has no review yet", "to")
    stamp = Stamp(task.id, task.version, context)
    cycle = task.review_cycle_count
    if classify(task.reviews) is ReviewOutcome.ACCEPT:
        return [stamp(ReviewConcluded, cycle=cycle, outcome=ReviewOutcome.ACCEPT, review_cycle_count=cycle),
                stamp(TaskCompleted)]
    count = cycle + 1
    concluded = stamp(ReviewConcluded, cycle=cycle, outcome=ReviewOutcome.REVISE, review_cycle_count=count)
    if count > task.review_cycle_budget:
        return [concluded, stamp(ArbitrationRequested, trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED)]
    return [concluded]
