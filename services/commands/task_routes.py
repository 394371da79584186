"""Task commands, from their Structs to the rules in ``aggregates.task``. Every command names
its project; a task of another project is not found."""

from __future__ import annotations

from collections.abc import Callable

from athenaeum.aggregates import task as rules
from athenaeum.aggregates import task_arbitration as arbitration
from athenaeum.aggregates import task_review as reviews
from athenaeum.aggregates.task_checks import in_project
from athenaeum.aggregates.rules import Context
from athenaeum.aggregates.state import fold
from athenaeum.aggregates.task_state import Task, evolve, evolve_ids
from athenaeum.events import Event
from athenaeum.events.task import TASK_IDS, task_id
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    EndRoleSession,
    OnTask,
    PostReview,
    PostRuling,
    ResetTask,
    TransitionTask,
)
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.replies import Reply

project = fold(evolve)
project_ids = fold(evolve_ids)


def create(handler: CommandHandler, command: CreateTask, actor: str) -> Reply:
    def decide(ids, context):  # type: ignore[no-untyped-def]
        return rules.create(
            ids, context, project_id=command.project_id, title=command.title, plan_path=command.plan_path,
            review_cycle_budget=command.review_cycle_budget, reviewer_roles=command.reviewer_roles,
        )

    return handler.handle(TASK_IDS, project_ids, decide, actor, command.command_id)


def claim(handler: CommandHandler, command: ClaimTask, actor: str) -> Reply:
    return _on_task(handler, command, actor, rules.claim)


def transition(handler: CommandHandler, command: TransitionTask, actor: str) -> Reply:
    return _on_task(handler, command, actor, lambda task, context: rules.transition(
        task, context, to=command.to, payload=command.payload
    ))


def review(handler: CommandHandler, command: PostReview, actor: str) -> Reply:
    return _on_task(handler, command, actor, lambda task, context: reviews.post_review(
        task, context, reviewer_role=command.reviewer_role, verdict=command.verdict,
        raw_markdown=command.raw_markdown, findings=command.findings, cycle=command.cycle,
    ))


def rule(handler: CommandHandler, command: PostRuling, actor: str) -> Reply:
    def decide(task, context):  # type: ignore[no-untyped-def]
        # The ruling's own order: its body is checked before whether the task exists.
        return arbitration.post_ruling(
            task, context, project_id=command.project_id, trigger=command.trigger, ruling=command.ruling,
            ruling_markdown=command.ruling_markdown, resolution=command.contradiction_resolution,
        )

    return handler.handle(task_id(command.task_id), project, decide, actor, command.command_id)


def session_ended(handler: CommandHandler, command: EndRoleSession, actor: str) -> Reply:
    return _on_task(handler, command, actor, lambda task, context: rules.end_role_session(
        task, context, role=command.role, exit_code=command.exit_code
    ))


def reset(handler: CommandHandler, command: ResetTask, actor: str) -> Reply:
    return _on_task(handler, command, actor, rules.reset)


def _on_task(
    handler: CommandHandler, command: OnTask, actor: str, decide: Callable[[Task, Context], list[Event]]
) -> Reply:
    def checked(task, context):  # type: ignore[no-untyped-def]
        return decide(in_project(task, command.project_id), context)

    return handler.handle(task_id(command.task_id), project, checked, actor, command.command_id)
