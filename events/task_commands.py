"""Task commands (PROTOCOLS.md section 5). Field names are camelCase on the wire, as in the
arbitrator's original HTTP contract (``rulingMarkdown``, ``contradictionResolution``, ...).

Statuses, triggers, rulings and a transition's payload are typed: a value outside its enum, a
misspelt payload key or an over-long text is refused where the command is decoded, naming it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import (
    FINDINGS_LIMIT, NON_BLANK, ROLES_LIMIT, Said, Text, listing, schema_only, texts,
)
from athenaeum.events.imported import ImportFindings, SourceFiles
from athenaeum.events.task import (
    DEFAULT_REVIEW_CYCLE_BUDGET,
    BuildStatus,
    FailureReason,
    ImportedReview,
    ImportedRuling,
    Ruling,
    Severity,
    TaskStatus,
    Trigger,
    Verdict,
)

COMMIT_SHA_LIMIT = 128
LONG_TEXT_LIMIT = 32_768  # characters: a contradiction's notes, a finding's fix, a ruling's rationale
FAILURE_DETAIL_LIMIT = 4096
MARKDOWN_LIMIT = 512_000  # characters, for raw reviews and ruling markdown
TITLE_LIMIT = 1024
ROLE = r"^[A-Za-z0-9_-]{1,64}$"

Role = Annotated[str, msgspec.Meta(pattern=ROLE)]
Title = Annotated[str, texts(TITLE_LIMIT, "characters"), schema_only(pattern=NON_BLANK)]
LongText = Annotated[str, texts(LONG_TEXT_LIMIT, "characters")]
Markdown = Annotated[str, texts(MARKDOWN_LIMIT, "characters")]
# Cross-field rules (which transition reads which key, the pair a ruling names) and the
# original's messages and order are the family's rules: the schema shows these bounds only.
FindingIds = Annotated[list[int], schema_only(minItems=2, maxItems=2)]
FindingId = Annotated[int, schema_only(minimum=1)]


class InProject(Command, frozen=True, rename="camel"):
    project_id: Said  # over HTTP, the X-Project-Id header


class OnTask(InProject, frozen=True):
    task_id: int


class CreateTask(InProject, frozen=True):
    """Create an engineer/reviewer task in a project: its title, plan, review-cycle budget and reviewer
    roles; it starts pending."""
    title: Title
    plan_path: Said | None = None  # the original's tasks may be a title alone
    review_cycle_budget: Annotated[int, msgspec.Meta(ge=0)] = DEFAULT_REVIEW_CYCLE_BUDGET
    reviewer_roles: Annotated[list[Role], listing(ROLES_LIMIT, "roles")] = []


class ClaimTask(OnTask, frozen=True):
    """Claim a pending task."""
    pass


class Contradiction(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Two findings that cannot both be addressed, in the original's nested shape."""

    finding_ids: FindingIds | None = None
    notes: LongText = ""


class TransitionPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """What transitions' payloads say. Each edge reads its own keys and lets the others be (a
    pump may send one payload shape for every edge); a key no transition takes is refused.

    A contradiction comes as the original sends it, ``{"trigger": "reviewer_contradiction",
    "contradiction": {"findingIds", "notes"}}``, or flat, ``{"findingIds", "notes"}``."""

    build_status: BuildStatus | None = None  # built
    commit_sha: Annotated[str, texts(COMMIT_SHA_LIMIT, "characters")] | None = None  # built
    reviewer_role: Annotated[str, schema_only(pattern=ROLE)] | None = None  # reviewing, while reviewing
    verdict: Verdict | None = None  # reviewing, while reviewing
    trigger: Trigger | None = None  # arbitrating
    contradiction: Contradiction | None = None  # arbitrating
    finding_ids: FindingIds | None = None  # arbitrating
    notes: LongText = ""  # arbitrating
    failure_reason: FailureReason | None = None  # failed
    failure_detail: Annotated[str, texts(FAILURE_DETAIL_LIMIT, "characters")] = ""  # failed


class TransitionTask(OnTask, frozen=True):
    """``to``: engineering, built (buildStatus, commitSha), reviewing (from built: a new cycle;
    while reviewing: reviewerRole and verdict), completed or revising (as the ledger classifies
    the reviews; revising past the budget goes to arbitrating), arbitrating (a contradiction),
    failed (failureReason, failureDetail), or integrated (a completed task's work merged)."""

    to: TaskStatus
    payload: TransitionPayload = TransitionPayload()


class FindingInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    severity: Severity
    title: Title
    description: LongText = ""
    evidence: LongText = ""
    fix: LongText = ""
    file_path: Text | None = None
    line: Annotated[int, msgspec.Meta(ge=0)] | None = None
    ordinal: Annotated[int, msgspec.Meta(ge=0)] | None = None  # default: its place in the list


class PostReview(OnTask, frozen=True):
    """A reviewer's verdict on the task's current cycle, with its findings."""
    cycle: Annotated[int, msgspec.Meta(ge=0)]  # the cycle reviewed: the task's current one
    reviewer_role: Role
    verdict: Verdict
    raw_markdown: Markdown = ""
    findings: Annotated[list[FindingInput], listing(FINDINGS_LIMIT, "findings")] = []


class ResolutionInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    upheld_finding_id: FindingId
    retired_finding_id: FindingId
    rationale: Annotated[LongText, schema_only(minLength=1)]  # required: the rule says when it is empty


class PostRuling(OnTask, frozen=True):
    """An arbitrator's ruling on a task that is arbitrating: the trigger ruled on, the ruling and its
    markdown, and for a contradiction which finding is upheld and which retired."""
    # The rest is checked by the rule, in the order PROTOCOLS.md fixes, after the enums here.
    trigger: Trigger
    ruling: Ruling
    ruling_markdown: Annotated[Markdown, schema_only(minLength=1)]  # required: the rule says when it is empty
    contradiction_resolution: Annotated[ResolutionInput | None, msgspec.Meta(
        description="required for a rule ruling, absent otherwise")] = None


class EndRoleSession(OnTask, frozen=True):
    """Report that a role's session on the task ended, with its exit code; a session that moved nothing
    fails the task (role_session_no_op)."""
    role: Role
    exit_code: int


class ResetTask(OnTask, frozen=True):
    """Start a completed or failed task again, in a new epoch."""
    pass


REVIEWS_LIMIT = 10_000  # review runs of one imported task


class ImportTask(OnTask, frozen=True):
    """A task of the original arbitrator's PostgreSQL tables, as ``athenaeum import --postgres``
    read it: where it stood, its reviews and rulings, its rows as JSON, and the rules its
    history breaks (recorded, not refused). ``taskId`` is the original's id."""

    task_id: Annotated[int, msgspec.Meta(ge=1)]
    source: Said
    title: Title
    status: TaskStatus
    plan_path: Said | None = None
    review_cycle_budget: Annotated[int, msgspec.Meta(ge=0)] = DEFAULT_REVIEW_CYCLE_BUDGET
    reviewer_roles: Annotated[list[Role], listing(ROLES_LIMIT, "roles")] = []
    review_cycle_count: Annotated[int, msgspec.Meta(ge=0)] = 0
    build_status: BuildStatus | None = None
    commit_sha: Annotated[str, texts(COMMIT_SHA_LIMIT, "characters")] | None = None
    claimed_by: Text | None = None
    pending_trigger: Trigger | None = None
    failure_reason: FailureReason | None = None
    failure_detail: Annotated[str, texts(FAILURE_DETAIL_LIMIT, "characters")] = ""
    created_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    reviews: Annotated[list[ImportedReview], listing(REVIEWS_LIMIT, "reviews")] = []
    rulings: Annotated[list[ImportedRuling], listing(REVIEWS_LIMIT, "rulings")] = []
    files: SourceFiles = []
    findings: ImportFindings = []


TaskCommand = (
    CreateTask | ClaimTask | TransitionTask | PostReview | PostRuling | EndRoleSession | ResetTask | ImportTask
)
