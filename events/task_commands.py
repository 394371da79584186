"""Task commands (PROTOCOLS.md section 5). Field names are camelCase on the wire, as in the
arbitrator's original HTTP contract (``rulingMarkdown``, ``contradictionResolution``, ...).

Statuses, triggers, rulings and a transition's payload are typed: a value outside its enum, a
misspelt payload key or an over-long text is refused where the command is decoded, naming it."""

from __future__ import annotations

from typing import Annotated

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.task import (
    DEFAULT_REVIEW_CYCLE_BUDGET,
    BuildStatus,
    FailureReason,
    Ruling,
    Severity,
    TaskStatus,
    Trigger,
    Verdict,
)

COMMIT_SHA_LIMIT = 128
LONG_TEXT_LIMIT = 32_768  # characters: a contradiction's notes, a finding's fix, a ruling's rationale
FAILURE_DETAIL_LIMIT = 4096


class InProject(Command, frozen=True, rename="camel"):
    project_id: str  # over HTTP, the X-Project-Id header


class OnTask(InProject, frozen=True):
    task_id: int


class CreateTask(InProject, frozen=True):
    title: str
    plan_path: str | None = None  # the original's tasks may be a title alone
    review_cycle_budget: int = DEFAULT_REVIEW_CYCLE_BUDGET
    reviewer_roles: list[str] = []


class ClaimTask(OnTask, frozen=True):
    pass


class Contradiction(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Two findings that cannot both be addressed, in the original's nested shape."""

    finding_ids: list[int] | None = None
    notes: Annotated[str, msgspec.Meta(max_length=LONG_TEXT_LIMIT)] = ""


class TransitionPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """What transitions' payloads say. Each edge reads its own keys and lets the others be (a
    pump may send one payload shape for every edge); a key no transition takes is refused.

    A contradiction comes as the original sends it, ``{"trigger": "reviewer_contradiction",
    "contradiction": {"findingIds", "notes"}}``, or flat, ``{"findingIds", "notes"}``."""

    build_status: BuildStatus | None = None  # built
    commit_sha: Annotated[str, msgspec.Meta(max_length=COMMIT_SHA_LIMIT)] | None = None  # built
    reviewer_role: str | None = None  # reviewing, while reviewing: a reviewer's verdict
    verdict: Verdict | None = None  # reviewing, while reviewing
    trigger: Trigger | None = None  # arbitrating
    contradiction: Contradiction | None = None  # arbitrating
    finding_ids: list[int] | None = None  # arbitrating
    notes: Annotated[str, msgspec.Meta(max_length=LONG_TEXT_LIMIT)] = ""  # arbitrating
    failure_reason: FailureReason | None = None  # failed
    failure_detail: Annotated[str, msgspec.Meta(max_length=FAILURE_DETAIL_LIMIT)] = ""  # failed


class TransitionTask(OnTask, frozen=True):
    """``to``: engineering, built (buildStatus, commitSha), reviewing (from built: a new cycle;
    while reviewing: reviewerRole and verdict), completed or revising (as the ledger classifies
    the reviews; revising past the budget goes to arbitrating), arbitrating (a contradiction),
    failed (failureReason, failureDetail), or integrated (a completed task's work merged)."""

    to: TaskStatus
    payload: TransitionPayload = TransitionPayload()


class FindingInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    severity: Severity
    title: str
    description: str = ""
    evidence: str = ""
    fix: str = ""
    file_path: str | None = None
    line: Annotated[int, msgspec.Meta(ge=0)] | None = None
    ordinal: Annotated[int, msgspec.Meta(ge=0)] | None = None  # default: its place in the list


class PostReview(OnTask, frozen=True):
    cycle: Annotated[int, msgspec.Meta(ge=0)]  # the cycle reviewed: the task's current one
    reviewer_role: str
    verdict: Verdict
    raw_markdown: str = ""
    findings: list[FindingInput] = []


class ResolutionInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    upheld_finding_id: int
    retired_finding_id: int
    rationale: str = ""


class PostRuling(OnTask, frozen=True):
    # The rest is checked by the rule, in the order PROTOCOLS.md fixes, after the enums here.
    trigger: Trigger
    ruling: Ruling
    ruling_markdown: Annotated[str, msgspec.Meta(description="required: 1 to 512,000 characters")] = ""
    contradiction_resolution: Annotated[ResolutionInput | None, msgspec.Meta(
        description="required for a rule ruling, absent otherwise")] = None


class EndRoleSession(OnTask, frozen=True):
    role: str
    exit_code: int


class ResetTask(OnTask, frozen=True):
    pass


TaskCommand = CreateTask | ClaimTask | TransitionTask | PostReview | PostRuling | EndRoleSession | ResetTask
