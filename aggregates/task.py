"""Task rules (PROTOCOLS.md section 5): the engineer/reviewer FSM and its arbitration.

Only the FSM's edges are legal. Reviews are classified by the ledger; a revise past the cycle
budget, or a contradiction the engineer reports, goes to an arbitrator, and only a ruling
leaves ``arbitrating``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from athenaeum.aggregates.rules import Context, Invalid, NotFound, RuleViolation, Stamp, require_text
from athenaeum.aggregates.task_state import Task, TaskIds
from athenaeum.events import Event
from athenaeum.events.task import (
    TASK_IDS,
    ArbitrationRequested,
    BuildReported,
    BuildStatus,
    ContradictionReported,
    EngineeringStarted,
    FailureReason,
    Finding,
    Resolution,
    ReviewConcluded,
    ReviewOutcome,
    ReviewPosted,
    ReviewStarted,
    RoleSessionEnded,
    Ruling,
    RulingPosted,
    Severity,
    TaskClaimed,
    TaskCompleted,
    TaskCreated,
    TaskFailed,
    TaskIdIssued,
    TaskReset,
    TaskStatus,
    Trigger,
    Verdict,
    task_id,
)
from athenaeum.events.task_commands import FindingInput, ResolutionInput

ROLE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MARKDOWN_LIMIT = 512_000  # characters, for raw reviews and ruling markdown
TITLE_LIMIT = 1024
LONG_TEXT_LIMIT = 32_768  # a finding's fix, a ruling's rationale
FAILURE_DETAIL_LIMIT = 4096
COMMIT_SHA_LIMIT = 128
ESCALATION_DETAIL = 500  # code points of the ruling that become the failure detail
TERMINAL = (TaskStatus.COMPLETED, TaskStatus.FAILED)


class IllegalTransition(RuleViolation):
    code = "illegal_transition"


class NotArbitrating(RuleViolation):
    code = "not_arbitrating"


class TriggerMismatch(RuleViolation):
    code = "trigger_mismatch"


class ArbitrationExists(RuleViolation):
    code = "arbitration_exists"


class FindingMismatch(RuleViolation):
    code = "finding_mismatch"


class AlreadyReviewed(RuleViolation):
    code = "already_exists"


def create(
    ids: TaskIds | None,
    context: Context,
    *,
    project_id: str,
    title: str,
    plan_path: str,
    review_cycle_budget: int,
    reviewer_roles: Sequence[str] = (),
) -> list[Event]:
    """Issues the next task number and creates the task with it, in one append."""
    require_text(project_id, "projectId")
    require_text(title, "title", TITLE_LIMIT)
    require_text(plan_path, "planPath")
    if review_cycle_budget < 0:
        raise Invalid(f"reviewCycleBudget {review_cycle_budget} is negative", "reviewCycleBudget")
    for role in reviewer_roles:
        _require_role(role, "reviewerRoles")
    number = (ids.last if ids else 0) + 1
    issued = Stamp(TASK_IDS, ids.version if ids else 0, context)(TaskIdIssued, number=number)
    created = Stamp(task_id(number), 0, context)(
        TaskCreated, project_id=project_id, title=title, plan_path=plan_path,
        review_cycle_budget=review_cycle_budget, reviewer_roles=tuple(reviewer_roles),
    )
    return [issued, created]


def claim(task: Task, context: Context) -> list[Event]:
    _require_status(task, "claimed", TaskStatus.PENDING)
    return [Stamp(task.id, task.version, context)(TaskClaimed, by=context.actor)]


def transition(task: Task, context: Context, *, to: str, payload: Mapping[str, Any]) -> list[Event]:
    """``POST /tasks/{id}/transition``: one edge of the FSM, its payload checked."""
    stamp = Stamp(task.id, task.version, context)
    match to:
        case "claimed":
            return claim(task, context)
        case "engineering":
            _require_status(task, to, TaskStatus.CLAIMED, TaskStatus.REVISING)
            return [stamp(EngineeringStarted)]
        case "built":
            _require_status(task, to, TaskStatus.ENGINEERING)
            build = _payload(payload, "buildStatus", BuildStatus)
            sha = payload.get("commitSha")
            if sha is not None and (not isinstance(sha, str) or len(sha) > COMMIT_SHA_LIMIT):
                raise Invalid(f"payload.commitSha is a string of at most {COMMIT_SHA_LIMIT} characters", "commitSha")
            return [stamp(BuildReported, build_status=build, commit_sha=sha)]
        case "reviewing":
            _require_status(task, to, TaskStatus.BUILT)
            return [stamp(ReviewStarted, cycle=task.review_cycle_count)]
        case "completed" | "revising":
            return conclude(task, context)
        case "arbitrating":
            ids = payload.get("findingIds")
            # bool is an int to Python, and true is no finding id: exact types only.
            if not isinstance(ids, list) or not all(type(i) is int for i in ids):
                raise Invalid("payload.findingIds is the list of the two contradicting finding ids", "findingIds")
            return report_contradiction(task, context, finding_ids=ids, notes=_text(payload, "notes"))
        case "failed":
            reason = _payload(payload, "failureReason", FailureReason)
            return fail(task, context, reason=reason, detail=_text(payload, "failureDetail"))
        case "pending":
            raise IllegalTransition("a task returns to pending only by a reset", "to")
    statuses = ", ".join(status.value for status in TaskStatus)
    raise Invalid(f"to: {to!r} is not a status ({statuses})", "to")


def post_review(
    task: Task,
    context: Context,
    *,
    reviewer_role: str,
    verdict: Verdict,
    raw_markdown: str,
    findings: Sequence[FindingInput],
    cycle: int | None = None,
) -> list[Event]:
    _require_role(reviewer_role, "reviewerRole")
    if len(raw_markdown) > MARKDOWN_LIMIT:
        raise Invalid(f"rawMarkdown is over {MARKDOWN_LIMIT} characters", "rawMarkdown")
    for finding in findings:
        require_text(finding.title, "findings.title", TITLE_LIMIT)
        for name in ("description", "evidence", "fix"):
            if len(getattr(finding, name)) > LONG_TEXT_LIMIT:
                raise Invalid(f"findings.{name} is over {LONG_TEXT_LIMIT} characters", f"findings.{name}")
    _require_status(task, "a review", TaskStatus.REVIEWING)
    if cycle is not None and cycle != task.review_cycle_count:
        raise IllegalTransition(f"task {task.key} is reviewing cycle {task.review_cycle_count}, not {cycle}", "cycle")
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
        ReviewPosted, cycle=task.review_cycle_count, reviewer_role=reviewer_role, verdict=verdict,
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
    _require_status(task, "a review's conclusion", TaskStatus.REVIEWING)
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


def report_contradiction(task: Task, context: Context, *, finding_ids: Sequence[int], notes: str) -> list[Event]:
    _require_status(task, "arbitrating", TaskStatus.ENGINEERING)
    if len(finding_ids) != 2 or finding_ids[0] == finding_ids[1]:
        raise Invalid("findingIds names two different findings", "findingIds")
    missing = [i for i in finding_ids if i not in task.last_reviewed]
    if missing:
        raise Invalid(f"findings {missing} are not in the latest reviewed cycle of task {task.key}", "findingIds")
    stamp = Stamp(task.id, task.version, context)
    pair = (finding_ids[0], finding_ids[1])
    return [stamp(ContradictionReported, finding_ids=pair, notes=notes),
            stamp(ArbitrationRequested, trigger=Trigger.REVIEWER_CONTRADICTION, finding_ids=pair)]


def post_ruling(
    task: Task | None,
    context: Context,
    *,
    project_id: str,
    trigger: str,
    ruling: str,
    ruling_markdown: str,
    resolution: ResolutionInput | None,
) -> list[Event]:
    """Checked in PROTOCOLS.md's order: the body (400s), the task (404), its state (409s)."""
    the_trigger = _member(Trigger, trigger, "trigger")
    the_ruling = _member(Ruling, ruling, "ruling")
    if not ruling_markdown or len(ruling_markdown) > MARKDOWN_LIMIT:
        raise Invalid(f"rulingMarkdown is 1 to {MARKDOWN_LIMIT} characters", "rulingMarkdown")
    if the_ruling is Ruling.RULE and the_trigger is not Trigger.REVIEWER_CONTRADICTION:
        raise Invalid("a rule ruling is only for the reviewer_contradiction trigger", "ruling")
    if the_ruling is Ruling.RULE:
        if resolution is None:
            raise Invalid("a rule ruling needs a contradictionResolution", "contradictionResolution")
        upheld, retired = resolution.upheld_finding_id, resolution.retired_finding_id
        if upheld <= 0 or retired <= 0 or upheld == retired:
            raise Invalid("upheldFindingId and retiredFindingId are two different positive ids", "contradictionResolution")
        if not 1 <= len(resolution.rationale) <= LONG_TEXT_LIMIT:
            raise Invalid(f"rationale is 1 to {LONG_TEXT_LIMIT} characters", "contradictionResolution.rationale")
    elif resolution is not None:
        raise Invalid(f"only a rule ruling carries a contradictionResolution, not {ruling}", "contradictionResolution")
    task = in_project(task, project_id)
    if task.status is not TaskStatus.ARBITRATING:
        raise NotArbitrating(f"task {task.key} is {task.status.value}, not arbitrating")
    if the_trigger is not task.pending_trigger:
        pending = task.pending_trigger.value if task.pending_trigger else None
        raise TriggerMismatch(f"the pending trigger of task {task.key} is {pending}, not {trigger}", "trigger")
    if the_trigger in task.ruled:
        raise ArbitrationExists(f"task {task.key} already has a {trigger} ruling in this epoch", "trigger")
    stamp = Stamp(task.id, task.version, context)
    if the_ruling is Ruling.APPROVE:
        posted = stamp(RulingPosted, trigger=the_trigger, ruling=the_ruling, ruling_markdown=ruling_markdown)
        return [posted, stamp(TaskCompleted)]
    if the_ruling is Ruling.ESCALATE:
        posted = stamp(RulingPosted, trigger=the_trigger, ruling=the_ruling, ruling_markdown=ruling_markdown)
        failed = stamp(TaskFailed, failure_reason=FailureReason.ARBITRATOR_ESCALATED,
                       failure_detail=ruling_markdown[:ESCALATION_DETAIL])
        return [posted, failed]
    assert resolution is not None
    if {resolution.upheld_finding_id, resolution.retired_finding_id} != set(task.contradiction):
        raise FindingMismatch(f"the reported pair is {list(task.contradiction)}", "contradictionResolution")
    resolved = Resolution(upheld_finding_id=resolution.upheld_finding_id,
                          retired_finding_id=resolution.retired_finding_id, rationale=resolution.rationale)
    return [stamp(RulingPosted, trigger=the_trigger, ruling=the_ruling, ruling_markdown=ruling_markdown,
                  contradiction_resolution=resolved, addendum=addendum(task, resolved))]


def addendum(task: Task, resolution: Resolution) -> str:
    """What the engineer's next cycle reads: both findings verbatim, the choice, the directive."""
    upheld = task.last_reviewed[resolution.upheld_finding_id]
    retired = task.last_reviewed[resolution.retired_finding_id]
    lines = [f"# Contradiction ruling: task {task.key}, cycle {task.review_cycle_count - 1}", ""]
    for label, reviewed in (("upheld", upheld), ("retired", retired)):
        f = reviewed.finding
        where = f" ({f.file_path}{f':{f.line}' if f.line else ''})" if f.file_path else ""
        lines += [f"## Finding [{f.id}] from [{reviewed.role} reviewer]: {label}", "",
                  f"**{f.title}** ({f.severity.value}){where}", ""]
        for heading, text in (("", f.description), ("Evidence: ", f.evidence), ("Fix: ", f.fix)):
            if text:
                lines += [f"{heading}{text}", ""]
    lines += ["## Ruling", "", resolution.rationale, "",
              f"Finding [{upheld.finding.id}] from [{upheld.role} reviewer] is upheld and must be addressed. "
              f"Finding [{retired.finding.id}] from [{retired.role} reviewer] is retired by arbitrator ruling "
              "and must NOT be addressed in this cycle.", ""]
    return "\n".join(lines)


def fail(task: Task, context: Context, *, reason: FailureReason, detail: str = "") -> list[Event]:
    if task.status in TERMINAL or task.status is TaskStatus.ARBITRATING:
        raise IllegalTransition(f"task {task.key} is {task.status.value}: only a ruling leaves arbitrating"
                                if task.status is TaskStatus.ARBITRATING else f"task {task.key} is {task.status.value}")
    if len(detail) > FAILURE_DETAIL_LIMIT:
        raise Invalid(f"failureDetail is over {FAILURE_DETAIL_LIMIT} characters", "failureDetail")
    return [Stamp(task.id, task.version, context)(TaskFailed, failure_reason=reason, failure_detail=detail)]


def end_role_session(task: Task, context: Context, *, role: str, exit_code: int) -> list[Event]:
    """A session that exits 0 without the task's status having changed since the previous
    session ended was a no-op: the task fails (even from arbitrating: the arbitrator whose
    ruling got a 409 exits 0, and this is how its task leaves). Reviewers run side by side,
    so a reviewer whose review of the current cycle is in made progress."""
    _require_role(role, "role")
    stamp = Stamp(task.id, task.version, context)
    ended = stamp(RoleSessionEnded, role=role, exit_code=exit_code)
    progressed = task.status_version > task.session_mark or role in task.reviewed_roles
    if exit_code != 0 or task.status in TERMINAL or progressed:
        return [ended]
    detail = f"the {role} session exited 0 and the task stayed {task.status.value}"
    return [ended, stamp(TaskFailed, failure_reason=FailureReason.ROLE_SESSION_NO_OP, failure_detail=detail)]


def reset(task: Task, context: Context) -> list[Event]:
    """(operator) A new epoch with fresh counters, so a finished task can be retried."""
    if task.status not in TERMINAL:
        raise IllegalTransition(f"task {task.key} is {task.status.value}; only a completed or failed task resets")
    return [Stamp(task.id, task.version, context)(TaskReset, by=context.actor, epoch=task.epoch + 1)]


def in_project(task: Task | None, project_id: str) -> Task:
    """A task of another project is not found, as if it did not exist."""
    if task is None or task.project_id != project_id:
        raise NotFound("no such task in this project", "taskId")
    return task


def _require_status(task: Task, target: str, *allowed: TaskStatus) -> None:
    if task.status not in allowed:
        raise IllegalTransition(f"task {task.key} is {task.status.value}: no edge to {target}", "to")


def _require_role(role: str, field: str) -> None:
    if not isinstance(role, str) or not ROLE.fullmatch(role):
        raise Invalid(f"{field}: {role!r} is not a role (^[A-Za-z0-9_-]{{1,64}}$)", field)


def _member(kind: type, value: str, field: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise Invalid(f"{field}: {value!r} is not one of {choices}", field) from None


def _text(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key, "")
    if not isinstance(value, str) or len(value) > LONG_TEXT_LIMIT:
        raise Invalid(f"payload.{key} is a string of at most {LONG_TEXT_LIMIT} characters", key)
    return value


def _payload(payload: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in payload:
        raise Invalid(f"payload.{key} is required", key)
    return _member(kind, payload[key], key)
