"""Task rules (PROTOCOLS.md section 5): the engineer/reviewer FSM.

``decide`` takes one command of the family, on the ``task-ids`` counter (a creation) or on its
task, which a command of another project does not find.

Only the FSM's edges are legal. A cycle ends as its reviews are classified by the ledger
(``task_review``): the requested ``completed`` or ``revising`` must be what they call for. A
revise past the cycle budget, or a contradiction the engineer reports, goes to an arbitrator
(``task_arbitration``), and only a ruling leaves ``arbitrating`` (or the arbitrator's
session ending without one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from athenaeum.aggregates.family import Family
from athenaeum.aggregates.rules import Context, Invalid, Stamp, require_text
from athenaeum.aggregates.state import fold
from athenaeum.aggregates.task_arbitration import post_ruling, report_contradiction
from athenaeum.aggregates.task_checks import (
    FAILABLE,
    RESETTABLE,
    TERMINAL,
    IllegalTransition,
    in_project,
    one_of,
    require_role,
    require_status,
    require_title,
)
from athenaeum.aggregates.task_import import import_task
from athenaeum.aggregates.task_review import conclude, post_review, record_verdict
from athenaeum.aggregates.task_state import Task, TaskIds, evolve
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
    TaskIntegrated,
    TaskReset,
    TaskStatus,
    task_id,
)
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    EndRoleSession,
    ImportTask,
    PostReview,
    PostRuling,
    ResetTask,
    TaskCommand,
    TransitionTask,
)

ARBITRATOR = "arbitrator"  # the role of the session an arbitrating task waits on


def aggregate_of(command: TaskCommand) -> str:
    """A creation decides on the ``task-ids`` counter (and creates its task in the same append);
    every other command on its task."""
    return TASK_IDS if isinstance(command, CreateTask) else task_id(command.task_id)


def decide(state: Task | TaskIds | None, command: TaskCommand, context: Context) -> list[Event]:
    match command:
        case CreateTask():
            return create(state, command, context)
        case ClaimTask():
            return claim(in_project(state, command.project_id), context)
        case TransitionTask():
            return transition(in_project(state, command.project_id), command, context)
        case PostReview():
            return post_review(in_project(state, command.project_id), command, context)
        case PostRuling():
            return post_ruling(state, command, context)  # its body is checked before the task's existence
        case EndRoleSession():
            return end_role_session(in_project(state, command.project_id), command, context)
        case ResetTask():
            return reset(in_project(state, command.project_id), context)
        case ImportTask():
            return import_task(state, command, context)
    raise TypeError(f"not a task command: {command!r}")


def create(ids: TaskIds | None, command: CreateTask, context: Context) -> list[Event]:
    """Issues the next task number and creates the task with it, in one append."""
    require_text(command.project_id, "projectId")
    require_title(command.title, "title")
    if command.plan_path is not None:
        require_text(command.plan_path, "planPath")
    if command.review_cycle_budget < 0:
        raise Invalid(f"reviewCycleBudget {command.review_cycle_budget} is negative", "reviewCycleBudget")
    for role in command.reviewer_roles:
        require_role(role, "reviewerRoles")
    number = (ids.last if ids else 0) + 1
    issued = Stamp(TASK_IDS, ids.version if ids else 0, context)(TaskIdIssued, number=number)
    created = Stamp(task_id(number), 0, context)(
        TaskCreated, project_id=command.project_id, title=command.title, plan_path=command.plan_path,
        review_cycle_budget=command.review_cycle_budget, reviewer_roles=tuple(command.reviewer_roles),
    )
    return [issued, created]


def claim(task: Task, context: Context) -> list[Event]:
    require_status(task, "claimed", TaskStatus.PENDING)
    return [Stamp(task.id, task.version, context)(TaskClaimed, by=context.actor)]


def transition(task: Task, command: TransitionTask, context: Context) -> list[Event]:
    """``POST /tasks/{id}/transition``: one edge of the FSM. As in the original, the edge is
    checked first (409), then the payload keys it needs (400)."""
    to, payload = command.to, command.payload
    stamp = Stamp(task.id, task.version, context)
    match to:
        case TaskStatus.CLAIMED:
            return claim(task, context)
        case TaskStatus.ENGINEERING:
            require_status(task, to.value, TaskStatus.CLAIMED, TaskStatus.REVISING)
            return [stamp(EngineeringStarted)]
        case TaskStatus.BUILT:
            require_status(task, to.value, TaskStatus.ENGINEERING)
            if payload.build_status is None:
                raise Invalid(f"payload.buildStatus is required and must be one of: {one_of(BuildStatus)}",
                              "buildStatus")
            if not payload.commit_sha:
                raise Invalid("payload.commitSha is required (non-empty string)", "commitSha")
            return [stamp(BuildReported, build_status=payload.build_status, commit_sha=payload.commit_sha)]
        case TaskStatus.REVIEWING if task.status is TaskStatus.REVIEWING:
            return record_verdict(task, payload, context)
        case TaskStatus.REVIEWING:
            require_status(task, to.value, TaskStatus.BUILT)
            return [stamp(ReviewStarted, cycle=task.review_cycle_count)]
        case TaskStatus.COMPLETED | TaskStatus.REVISING:
            return conclude(task, to, context)
        case TaskStatus.ARBITRATING:
            return report_contradiction(task, command, context)
        case TaskStatus.FAILED:
            return fail(task, command, context)
        case TaskStatus.INTEGRATED:
            require_status(task, to.value, TaskStatus.COMPLETED)
            return [stamp(TaskIntegrated)]
        case TaskStatus.PENDING:
            raise IllegalTransition("a task returns to pending only by a reset", "to")
    assert_never(to)


def fail(task: Task, command: TransitionTask, context: Context) -> list[Event]:
    require_status(task, "failed", *FAILABLE)
    reason = command.payload.failure_reason
    if reason is None:
        raise Invalid(f"payload.failureReason is required and must be one of: {one_of(FailureReason)}",
                      "failureReason")
    return [Stamp(task.id, task.version, context)(TaskFailed, failure_reason=reason,
                                                  failure_detail=command.payload.failure_detail)]


def end_role_session(task: Task, command: EndRoleSession, context: Context) -> list[Event]:
    """A session that exits 0 without the task's status having changed since the previous
    session ended was a no-op: the task fails. Reviewers run side by side, so a reviewer whose
    review of the current cycle is in made progress.

    An arbitrating task waits on its arbitrator alone, whom only a ruling moves on. An
    arbitrator that exits 0 with the task still arbitrating ruled nothing (after a 409 the
    arbitrator protocol has it exit 0 precisely so that this fails the task, rather than leave
    it arbitrating for good); any other role's session leaves the task waiting."""
    role, exit_code = command.role, command.exit_code
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
    if task.status not in RESETTABLE:
        raise IllegalTransition(f"task {task.key} is {task.status.value}; only a completed or failed task resets")
    return [Stamp(task.id, task.version, context)(TaskReset, by=context.actor, epoch=task.epoch + 1)]


def reads(command: TaskCommand, state: Task | TaskIds | None) -> Sequence[str]:
    """An import reads the counter, which it moves past the original's id."""
    return (TASK_IDS,) if isinstance(command, ImportTask) else ()


FAMILY = Family("task", aggregate_of, fold(evolve), decide, reads)
