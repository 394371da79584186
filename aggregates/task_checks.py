"""What the task family's rules share (PROTOCOLS.md section 5): limits, error codes, and the
checks of status, project, roles and payloads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from athenaeum.aggregates.rules import Invalid, NotFound, RuleViolation
from athenaeum.aggregates.task_state import Task
from athenaeum.events.task import TaskStatus

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


def in_project(task: Task | None, project_id: str) -> Task:
    """A task of another project is not found, as if it did not exist."""
    if task is None or task.project_id != project_id:
        raise NotFound("no such task in this project", "taskId")
    return task


def require_status(task: Task, target: str, *allowed: TaskStatus) -> None:
    if task.status not in allowed:
        raise IllegalTransition(f"task {task.key} is {task.status.value}: no edge to {target}", "to")


def require_role(role: str, field: str) -> None:
    if not isinstance(role, str) or not ROLE.fullmatch(role):
        raise Invalid(f"{field}: {role!r} is not a role (^[A-Za-z0-9_-]{{1,64}}$)", field)


def require_title(title: str, field: str) -> None:
    """Non-blank, and at most TITLE_LIMIT characters: a task's limits count characters."""
    if not title.strip():
        raise Invalid(f"{field} must not be empty", field)
    if len(title) > TITLE_LIMIT:
        raise Invalid(f"{field} is over {TITLE_LIMIT} characters", field)


def member(kind: type, value: str, field: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise Invalid(f"{field}: {value!r} is not one of {choices}", field) from None


def text(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key, "")
    if not isinstance(value, str) or len(value) > LONG_TEXT_LIMIT:
        raise Invalid(f"payload.{key} is a string of at most {LONG_TEXT_LIMIT} characters", key)
    return value


def payload_member(payload: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in payload:
        raise Invalid(f"payload.{key} is required", key)
    return member(kind, payload[key], key)
