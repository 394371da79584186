"""Task commands (PROTOCOLS.md section 5). Field names are camelCase on the wire, as in the
arbitrator's original HTTP contract (``rulingMarkdown``, ``contradictionResolution``, ...)."""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.task import DEFAULT_REVIEW_CYCLE_BUDGET, Ruling, Severity, Trigger, Verdict


class TaskCommand(Command, frozen=True, rename="camel"):
    project_id: str  # over HTTP, the X-Project-Id header


class OnTask(TaskCommand, frozen=True):
    task_id: int


class CreateTask(TaskCommand, frozen=True):
    title: str
    plan_path: str
    review_cycle_budget: int = DEFAULT_REVIEW_CYCLE_BUDGET
    reviewer_roles: list[str] = []


class ClaimTask(OnTask, frozen=True):
    pass


class TransitionTask(OnTask, frozen=True):
    """``to``: engineering, built (buildStatus, commitSha), reviewing, completed or revising
    (the ledger classifies the reviews), arbitrating (findingIds, notes: a contradiction), or
    failed (failureReason, failureDetail)."""

    to: str
    payload: dict[str, Any] = {}


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


def _one_of(kind: type[enum.Enum]) -> str:
    return "one of " + ", ".join(str(member.value) for member in kind)


class PostRuling(OnTask, frozen=True):
    # Plain strings, described: PROTOCOLS.md fixes the order in which a ruling's fields are checked.
    trigger: Annotated[str, msgspec.Meta(description=_one_of(Trigger))]
    ruling: Annotated[str, msgspec.Meta(description=_one_of(Ruling))]
    ruling_markdown: Annotated[str, msgspec.Meta(description="required: 1 to 512,000 characters")] = ""
    contradiction_resolution: Annotated[ResolutionInput | None, msgspec.Meta(
        description="required for a rule ruling, absent otherwise")] = None


class EndRoleSession(OnTask, frozen=True):
    role: str
    exit_code: int


class ResetTask(OnTask, frozen=True):
    pass
