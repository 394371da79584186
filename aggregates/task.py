"""Task rules (PROTOCOLS.md section 5): the engineer/reviewer FSM.

Only the FSM's edges are legal. Reviews are classified by the ledger (``task_review``); a
revise past the cycle budget, or a contradiction the engineer reports, goes to an arbitrator
(``task_arbitration``), and only a ruling leaves ``arbitrating`` (or the arbitrator's
session ending without one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from athenaeum.aggregates.rules import Context, Invalid, Stamp, require_text
from athenaeum.aggregates.task_arbitration import report_contradiction
from athenaeum.aggregates.task_checks import (
    COMMIT_SHA_LIMIT,
    FAILURE_DETAIL_LIMIT,
    TERMINAL,
    IllegalTransition,
    payload_member,
    require_role,
    require_status,
    require_title,
    text,
)
from athenaeum.aggregates.task_review import conclude
from athenaeum.aggregates.task_state import Task, TaskIds
from athenaeum.events import Event
from athenaeum.events.task import (
    TASK_IDS,
    BuildReported,
    BuildStatus,
    EngineeringStarted,
    FailureReason,
    ReviewStarted,
    RoleSessionEnded,
    TaskClaimed,
    TaskCreated,
    TaskFailed,
    TaskIdIssued,
    TaskReset,
    TaskStatus,
    task_id,
)

ARBITRATOR = "arbitrator"  # the role of the session an arbitrating task waits on
# What transitions' payloads say: a misspelt key is refused rather than dropped, while one
# that another transition takes is let be (a pump may send one payload shape for every edge).
PAYLOAD_FIELDS = frozenset({"buildStatus", "commitSha", "findingIds", "notes", "failureReason", "failureDetail"})


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
    require_title(title, "title")
    require_text(plan_path, "planPath")
    if review_cycle_budget < 0:
        raise Invalid(f"reviewCycleBudget {review_cycle_budget} is negative", "reviewCycleBudget")
    for role in reviewer_roles:
        require_role(role, "reviewerRoles")
    number = (ids.last if ids else 0) + 1
    issued = Stamp(TASK_IDS, ids.version if ids else 0, context)(TaskIdIssued, number=number)
    created = Stamp(task_id(number), 0, context)(
        TaskCreated, project_id=project_id, title=title, plan_path=plan_path,
        review_cycle_budget=review_cycle_budget, reviewer_roles=tuple(reviewer_roles),
    )
    return [issued, created]


def claim(task: Task, context: Context) -> list[Event]:
    require_status(task, "claimed", TaskStatus.PENDING)
    return [Stamp(task.id, task.version, context)(TaskClaimed, by=context.actor)]


def transition(task: Task, context: Context, *, to: str, payload: Mapping[str, Any]) -> list[Event]:
    """``POST /tasks/{id}/transition``: one edge of the FSM, its payload checked."""
    if unknown := sorted(set(payload) - PAYLOAD_FIELDS):
        raise Invalid(f"payload.{unknown[0]} is unknown: a transition's payload may hold "
                      f"{', '.join(sorted(PAYLOAD_FIELDS))}", unknown[0])
    stamp = Stamp(task.id, task.version, context)
    match to:
        case "claimed":
            return claim(task, context)
        case "engineering":
            require_status(task, to, TaskStatus.CLAIMED, TaskStatus.REVISING)
            return [stamp(EngineeringStarted)]
        case "built":
            require_status(task, to, TaskStatus.ENGINEERING)
            build = payload_member(payload, "buildStatus", BuildStatus)
            sha = payload.get("commitSha")
            if sha is not None and (not isinstance(sha, str) or len(sha) > COMMIT_SHA_LIMIT):
                raise Invalid(f"payload.commitSha is a string of at most {COMMIT_SHA_LIMIT} characters", "commitSha")
            return [stamp(BuildReported, build_status=build, commit_sha=sha)]
        case "reviewing":
            require_status(task, to, TaskStatus.BUILT)
            return [stamp(ReviewStarted, cycle=task.review_cycle_count)]
        case "completed" | "revising":
            return conclude(task, context)
        case "arbitrating":
            ids = payload.get("findingIds")
            # bool is an int to Python, and true is no finding id: exact types only.
            if not isinstance(ids, list) or not all(type(i) is int for i in ids):
                raise Invalid("payload.findingIds is the list of the two contradicting finding ids", "findingIds")
            return report_contradiction(task, context, finding_ids=ids, notes=text(payload, "notes"))
        case "failed":
            reason = payload_member(payload, "failureReason", FailureReason)
            return fail(task, context, reason=reason, detail=text(payload, "failureDetail"))
        case "pending":
            raise IllegalTransition("a task returns to pending only by a reset", "to")
    raise Invalid(f"to: {to!r} is not a status ({', '.join(status.value for status in TaskStatus)})", "to")


def fail(task: Task, context: Context, *, reason: FailureReason, detail: str = "") -> list[Event]:
    if task.status in TERMINAL or task.status is TaskStatus.ARBITRATING:
        raise IllegalTransition(f"task {task.key} is {task.status.value}: only a ruling leaves arbitrating"
                                if task.status is TaskStatus.ARBITRATING else f"task {task.key} is {task.status.value}")
    if len(detail) > FAILURE_DETAIL_LIMIT:
        raise Invalid(f"failureDetail is over {FAILURE_DETAIL_LIMIT} characters", "failureDetail")
    return [Stamp(task.id, task.version, context)(TaskFailed, failure_reason=reason, failure_detail=detail)]


def end_role_session(task: Task, context: Context, *, role: str, exit_code: int) -> list[Event]:
    """A session that exits 0 without the task's status having changed since the previous
    session ended was a no-op: the task fails. Reviewers run side by side, so a reviewer whose
    review of the current cycle is in made progress.

    An arbitrating task waits on its arbitrator alone, whom only a ruling moves on. An
    arbitrator that exits 0 with the task still arbitrating ruled nothing (after a 409 the
    arbitrator protocol has it exit 0 precisely so that this fails the task, rather than leave
    it arbitrating for good); any other role's session leaves the task waiting."""
    require_role(role, "role")
    stamp = Stamp(task.id, task.version, context)
    ended = stamp(RoleSessionEnded, role=role, exit_code=exit_code)
    if task.status is TaskStatus.ARBITRATING:
        idle = role.lower() == ARBITRATOR
    else:
        idle = task.status_version <= task.session_mark and role not in task.reviewed_roles
    if exit_code != 0 or task.status in TERMINAL or not idle:
        return [ended]
    detail = f"the {role} session exited 0 and the task stayed {task.status.value}"
    return [ended, stamp(TaskFailed, failure_reason=FailureReason.ROLE_SESSION_NO_OP, failure_detail=detail)]


def reset(task: Task, context: Context) -> list[Event]:
    """(operator) A new epoch with fresh counters, so a finished task can be retried."""
    if task.status not in TERMINAL:
        raise IllegalTransition(f"task {task.key} is {task.status.value}; only a completed or failed task resets")
    return [Stamp(task.id, task.version, context)(TaskReset, by=context.actor, epoch=task.epoch + 1)]
