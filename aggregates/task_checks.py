"""What the task family's rules share (PROTOCOLS.md section 5): limits, error codes, and the
checks of status, project, roles and titles. A transition's payload is typed at the edge
(``events.task_commands``)."""

from __future__ import annotations

import enum
import re

from athenaeum.aggregates.rules import Invalid, NotFound, RuleViolation
from athenaeum.aggregates.task_state import Task
from athenaeum.events import task_commands
from athenaeum.events.task import TaskStatus
from athenaeum.events.task_commands import MARKDOWN_LIMIT, TITLE_LIMIT

ROLE = re.compile(task_commands.ROLE)
ESCALATION_DETAIL = 500  # code points of the ruling that become the failure detail
TERMINAL = (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.INTEGRATED)
RESETTABLE = (TaskStatus.COMPLETED, TaskStatus.FAILED)  # integrated work is merged: not retried
# A task fails from any state but these: a finished one, and an arbitrating one, which only a
# ruling leaves (the original lets a plain transition bypass its arbitrator).
FAILABLE = tuple(s for s in TaskStatus if s not in TERMINAL and s is not TaskStatus.ARBITRATING)


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


def in_project(task: Task | None, project_id: str) -> Task:
    """A task of another project is not found, as if it did not exist."""
    if task is None or task.project_id != project_id:
        raise NotFound("no such task in this project", "taskId")
    return task


def require_status(task: Task, target: str, *allowed: TaskStatus) -> None:
    if task.status in allowed:
        return
    if task.status is TaskStatus.ARBITRATING:
        raise IllegalTransition(f"task {task.key} is arbitrating: only an arbitrator's ruling leaves it", "to")
    raise IllegalTransition(f"task {task.key} is {task.status.value}: no edge to {target}", "to")


def one_of(values: type[enum.Enum]) -> str:
    """An enum's values as an error message lists them."""
    return ", ".join(str(value.value) for value in values)


def require_role(role: str, field: str) -> None:
    if not ROLE.fullmatch(role):
        raise Invalid(f"{field}: {role!r} is not a role (^[A-Za-z0-9_-]{{1,64}}$)", field)


def require_title(title: str, field: str) -> None:
    """Non-blank, and at most TITLE_LIMIT characters: a task's limits count characters."""
    if not title.strip():
        raise Invalid(f"{field} must not be empty", field)
    if len(title) > TITLE_LIMIT:
        raise Invalid(f"{field} is over {TITLE_LIMIT} characters", field)
