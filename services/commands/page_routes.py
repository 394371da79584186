"""Canon page and fleet roster commands, from their Structs to ``aggregates.page`` and
``aggregates.fleet``."""

from __future__ import annotations

from athenaeum.aggregates import fleet
from athenaeum.aggregates import page as rules
from athenaeum.aggregates.page_state import evolve
from athenaeum.aggregates.state import fold
from athenaeum.events import family_id
from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.page_commands import (
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    InitPage,
    ReadPage,
    RegisterAgent,
    ResolveDispute,
)
from athenaeum.services.commands.handler import CommandHandler, Decide, existing, project_fleet
from athenaeum.services.commands.replies import Reply

project = fold(evolve)


def register(handler: CommandHandler, command: RegisterAgent, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return fleet.register(state, context, name=command.name, human=command.human, bootstrap=not handler.humans)

    return handler.handle(FLEET_ID, project_fleet, decide, actor, command.command_id)


def init(handler: CommandHandler, command: InitPage, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.init_page(
            state, context, page=command.page, content=command.content, scope=command.scope,
            from_thread=command.from_thread,
        )

    return handler.handle(family_id("page", command.page), project, decide, actor, command.command_id)


def read(handler: CommandHandler, command: ReadPage, actor: str) -> Reply:
    return _on_existing(handler, command.page, actor, command.command_id, lambda state, context: rules.read(
        state, context, session_id=command.session_id
    ))


def endorse(handler: CommandHandler, command: EndorsePage, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.endorse(state, context, status=command.status, session_id=command.session_id, rev=command.rev,
                             **handler.activity().as_read())

    return _on_existing(handler, command.page, actor, command.command_id, decide)


def edit(handler: CommandHandler, command: EditPage, actor: str) -> Reply:
    return _on_existing(handler, command.page, actor, command.command_id, lambda state, context: rules.edit(
        state, context, content=command.content, significant=command.significant
    ))


def dispute(handler: CommandHandler, command: DisputePage, actor: str) -> Reply:
    return _on_existing(handler, command.page, actor, command.command_id, lambda state, context: rules.dispute(
        state, context, section=command.section, thread=command.thread
    ))


def resolve(handler: CommandHandler, command: ResolveDispute, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.resolve(state, context, agent=command.agent, decision=command.decision, thread=command.thread,
                             **handler.activity().as_read())

    return _on_existing(handler, command.page, actor, command.command_id, decide)


def change_lifecycle(handler: CommandHandler, command: ChangeLifecycle, actor: str) -> Reply:
    return _on_existing(handler, command.page, actor, command.command_id, lambda state, context: rules.change_lifecycle(
        state, context, to=command.to, reason=command.reason
    ))


def approve(handler: CommandHandler, command: ApprovePage, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.approve(state, context, level=command.level, **handler.activity().as_read())

    return _on_existing(handler, command.page, actor, command.command_id, decide)


def _on_existing(handler: CommandHandler, page: str, actor: str, command_id: str | None, decide: Decide) -> Reply:
    return handler.handle(family_id("page", page), project, existing(decide, f"page {page!r}", "page"), actor, command_id)
