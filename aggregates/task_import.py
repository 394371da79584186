"""A task of the original arbitrator's tables imported (``athenaeum import --postgres``):
recorded as found, the rules its history breaks marked, never refused for them; from then on it
continues under the rules like any task (an arbitrating one waits for its ruling). It keeps the
original's id, and the ``task-ids`` counter moves past it so that no task created later takes it."""

from __future__ import annotations

from athenaeum.aggregates.imported import recorded
from athenaeum.aggregates.rules import Context, Invalid, Stamp, require_text
from athenaeum.aggregates.task_checks import require_role, require_title
from athenaeum.aggregates.task_state import Task, TaskIds
from athenaeum.events import Event
from athenaeum.events.task import TASK_IDS, TaskIdIssued, TaskImported, TaskStatus, task_id
from athenaeum.events.task_commands import ImportTask


def import_task(state: Task | None, command: ImportTask, context: Context) -> list[Event]:
    require_text(command.project_id, "projectId")
    require_title(command.title, "title")
    for role in command.reviewer_roles:
        require_role(role, "reviewerRoles")
    if (command.status is TaskStatus.ARBITRATING) != (command.pending_trigger is not None):
        raise Invalid("pendingTrigger is given when, and only when, the task is arbitrating", "pendingTrigger")
    found = recorded(command.files, False if state is None else state.imported_sha256, f"task {command.task_id}",
                     "taskId")
    if found is None:
        return []
    files, digest = found
    imported = Stamp(task_id(command.task_id), 0, context)(
        TaskImported,
        project_id=command.project_id,
        title=command.title,
        plan_path=command.plan_path,
        review_cycle_budget=command.review_cycle_budget,
        reviewer_roles=tuple(command.reviewer_roles),
        status=command.status,
        review_cycle_count=command.review_cycle_count,
        build_status=command.build_status,
        commit_sha=command.commit_sha,
        claimed_by=command.claimed_by,
        pending_trigger=command.pending_trigger,
        failure_reason=command.failure_reason,
        failure_detail=command.failure_detail,
        created_at=command.created_at,
        reviews=tuple(command.reviews),
        rulings=tuple(command.rulings),
        source=command.source,
        content_sha256=digest,
        files=files,
        findings=tuple(command.findings),
    )
    ids: TaskIds | None = context.states.get(TASK_IDS)
    if ids is not None and ids.last >= command.task_id:
        return [imported]
    return [imported, Stamp(TASK_IDS, ids.version if ids else 0, context)(TaskIdIssued, number=command.task_id)]
