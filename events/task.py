"""Durable engineer/reviewer task events and their arbitration (PROTOCOLS.md section 5).

The aggregate id is ``task:<n>``: integer ids, issued by the ``task-ids`` counter in the same
append as the task's creation.
"""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from athenaeum.events.base import Event, family_id
from athenaeum.events.imported import ImportedFile, ImportFinding

TASK_IDS = family_id("task-ids", "counter")
DEFAULT_REVIEW_CYCLE_BUDGET = 5


def task_id(number: int) -> str:
    return family_id("task", str(number))


class TaskStatus(enum.Enum):
    PENDING = "pending"
    CLAIMED = "claimed"
    ENGINEERING = "engineering"
    BUILT = "built"
    REVIEWING = "reviewing"
    REVISING = "revising"
    ARBITRATING = "arbitrating"
    COMPLETED = "completed"
    FAILED = "failed"
    INTEGRATED = "integrated"  # a completed task whose work is merged


class BuildStatus(enum.Enum):
    CLEAN = "clean"
    DIRTY = "dirty"
    FAILED = "failed"


class Verdict(enum.Enum):
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    OUT_OF_SCOPE = "out_of_scope"


class Severity(enum.Enum):
    BLOCKING = "BLOCKING"
    NOTE = "NOTE"


class Trigger(enum.Enum):
    REVIEW_CYCLE_BUDGET_EXHAUSTED = "review_cycle_budget_exhausted"
    REVIEWER_CONTRADICTION = "reviewer_contradiction"


class Ruling(enum.Enum):
    APPROVE = "approve"
    RULE = "rule"
    ESCALATE = "escalate"


class FailureReason(enum.Enum):
    REVIEW_CYCLE_BUDGET_EXHAUSTED = "review_cycle_budget_exhausted"
    REVIEWER_CONTRADICTION = "reviewer_contradiction"
    ENGINEER_BUILD_FAILURE = "engineer_build_failure"
    REVIEWER_INFRASTRUCTURE_FAILURE = "reviewer_infrastructure_failure"
    ROLE_SESSION_NO_OP = "role_session_no_op"
    ARBITRATOR_ESCALATED = "arbitrator_escalated"


class ReviewOutcome(enum.Enum):
    ACCEPT = "accept"
    REVISE = "revise"


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    id: int  # assigned by the ledger, unique within the task
    severity: Severity
    ordinal: int
    title: str
    description: str = ""
    evidence: str = ""
    fix: str = ""
    file_path: str | None = None
    line: int | None = None


class Resolution(msgspec.Struct, frozen=True, kw_only=True):
    upheld_finding_id: int
    retired_finding_id: int
    rationale: str


class TaskIdIssued(Event, tag="TaskIdIssued"):
    number: int


class TaskCreated(Event, tag="TaskCreated"):
    project_id: str
    title: str
    plan_path: str | None  # None: the task is its title alone
    review_cycle_budget: int
    reviewer_roles: tuple[str, ...]


class TaskClaimed(Event, tag="TaskClaimed"):
    by: str


class EngineeringStarted(Event, tag="EngineeringStarted"):
    pass


class BuildReported(Event, tag="BuildReported"):
    build_status: BuildStatus
    commit_sha: str | None = None


class ReviewStarted(Event, tag="ReviewStarted"):
    cycle: int


class ReviewPosted(Event, tag="ReviewPosted"):
    cycle: int
    reviewer_role: str
    verdict: Verdict
    raw_markdown: str
    findings: tuple[Finding, ...]


class VerdictRecorded(Event, tag="VerdictRecorded"):
    """A reviewer's verdict on the current cycle, as the original's dashboard shows it; the
    cycle is classified from the reviews, not from these."""

    reviewer_role: str
    verdict: Verdict


class ReviewConcluded(Event, tag="ReviewConcluded"):
    cycle: int
    outcome: ReviewOutcome
    review_cycle_count: int  # after this conclusion


class ContradictionReported(Event, tag="ContradictionReported"):
    finding_ids: tuple[int, int]
    notes: str


class ArbitrationRequested(Event, tag="ArbitrationRequested"):
    trigger: Trigger
    finding_ids: tuple[int, ...] = ()


class RulingPosted(Event, tag="RulingPosted"):
    trigger: Trigger
    ruling: Ruling
    ruling_markdown: str
    contradiction_resolution: Resolution | None = None
    addendum: str | None = None  # for ``rule``: what the engineer's next cycle reads


class TaskCompleted(Event, tag="TaskCompleted"):
    pass


class TaskIntegrated(Event, tag="TaskIntegrated"):
    pass


class TaskFailed(Event, tag="TaskFailed"):
    failure_reason: FailureReason
    failure_detail: str = ""


class RoleSessionEnded(Event, tag="RoleSessionEnded"):
    role: str
    exit_code: int


class TaskReset(Event, tag="TaskReset"):
    by: str
    epoch: int  # the new epoch


class ImportedReview(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A ``review_runs`` row of the original, with its ``review_findings`` (their ids as the
    original issued them, unique across its tables, so unique within the task)."""

    cycle: int
    reviewer_role: str
    verdict: Verdict
    raw_markdown: str
    findings: tuple[Finding, ...] = ()
    posted_at: datetime


class ImportedRuling(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An ``arbitration_runs`` row of the original."""

    trigger: Trigger
    ruling: Ruling
    ruling_markdown: str
    contradiction_resolution: Resolution | None = None
    posted_at: datetime


class TaskImported(Event, tag="TaskImported"):
    """A task of the original arbitrator's tables, recorded as found: where it stood (its
    status, cycle, pending trigger), its reviews and rulings, the rows themselves as JSON, and
    the rules its history breaks. From here it continues under the rules like any task."""

    project_id: str
    title: str
    plan_path: str | None
    review_cycle_budget: int
    reviewer_roles: tuple[str, ...]
    status: TaskStatus
    review_cycle_count: int
    build_status: BuildStatus | None
    commit_sha: str | None
    claimed_by: str | None
    pending_trigger: Trigger | None
    failure_reason: FailureReason | None
    failure_detail: str
    created_at: datetime | None
    reviews: tuple[ImportedReview, ...]
    rulings: tuple[ImportedRuling, ...]
    source: str
    content_sha256: str
    files: tuple[ImportedFile, ...]
    findings: tuple[ImportFinding, ...]


TaskEvent = (
    TaskCreated
    | TaskImported
    | TaskClaimed
    | EngineeringStarted
    | BuildReported
    | ReviewStarted
    | ReviewPosted
    | VerdictRecorded
    | ReviewConcluded
    | ContradictionReported
    | ArbitrationRequested
    | RulingPosted
    | TaskCompleted
    | TaskIntegrated
    | TaskFailed
    | RoleSessionEnded
    | TaskReset
)
