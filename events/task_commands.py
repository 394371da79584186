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
    plan_path: str
    review_cycle_budget: int = DEFAULT_REVIEW_CYCLE_BUDGET
    reviewer_roles: list[str] = []


class ClaimTask(OnTask, frozen=True):
    pass


class TransitionPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """What transitions' payloads say. Each edge reads its own keys and lets the others be (a
    pump may send one payload shape for every edge); a key no transition takes is refused."""

    build_status: BuildStatus | None = None  # built
    commit_sha: Annotated[str, msgspec.Meta(max_length=COMMIT_SHA_LIMIT)] | None = None  # built
    finding_ids: list[int] | None = None  # arbitrating: the two contradicting findings
    notes: Annotated[str, msgspec.Meta(max_length=LONG_TEXT_LIMIT)] = ""  # arbitrating
    failure_reason: FailureReason | None = None  # failed
    failure_detail: Annotated[str, msgspec.Meta(max_length=FAILURE_DETAIL_LIMIT)] = ""  # failed


class TransitionTask(OnTask, frozen=True):
    """``to``: engineering, built (buildStatus, commitSha), reviewing, completed or revising
    (the ledger classifies the reviews), arbitrating (findingIds, notes: a contradiction), or
    failed (failureReason, failureDetail)."""

    to: TaskStatus
    payload: TransitionPayload = TransitionPayload()


class FindingInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    severity: Severity
    title: str
    description: str = ""
    evidence: str = ""
    fix: str = ""
    file_path: str | None = None
    line: int | None = None
    ordinal: int | None = None  # default: its place in the list


class PostReview(OnTask, frozen=True):
    reviewer_role: str
    verdict: Verdict
    raw_markdown: str = ""
    findings: list[FindingInput] = []
    cycle: int | None = None  # default: the task's current cycle


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
