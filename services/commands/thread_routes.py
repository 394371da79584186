"""Dialogue thread commands, from their Structs to the rules in ``aggregates.thread``."""

from __future__ import annotations

from athenaeum.aggregates import crystallization
from athenaeum.aggregates import thread as rules
from athenaeum.aggregates.state import fold
from athenaeum.aggregates.thread_state import evolve
from athenaeum.events import family_id
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    OpenThread,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
)
from athenaeum.services.commands import page_routes
from athenaeum.services.commands.handler import CommandHandler, Decide, existing
from athenaeum.services.commands.replies import Reply

project = fold(evolve)


def open_thread(handler: CommandHandler, command: OpenThread, actor: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.open_thread(
            state, context, slug=command.slug, text=command.context, target=command.target, body=command.body,
            declared_axis=command.declared_axis, questions=command.questions, topics=command.topics,
            participants=command.participants,
        )

    return handler.handle(family_id("thread", command.slug), project, decide, actor, command.command_id)


def ask(handler: CommandHandler, command: AskQuestion, actor: str) -> Reply:
    return _on_existing(handler, command.slug, actor, command.command_id, lambda state, context: rules.ask(
        state, context, question=command.question
    ))


def contribute(handler: CommandHandler, command: Contribute, actor: str) -> Reply:
    return _on_existing(handler, command.slug, actor, command.command_id, lambda state, context: rules.contribute(
        state, context, body=command.body, evaluation=command.eval, ref=command.ref,
        declared_axis=command.declared_axis,
    ))


def close(handler: CommandHandler, command: CloseThread, actor: str) -> Reply:
    return _on_existing(handler, command.slug, actor, command.command_id, lambda state, context: rules.close(
        state, context, evaluation=command.eval, current=command.current, summary=command.summary,
        pages=command.pages, patch_summary=command.patch_summary, ref=command.ref,
    ))


def reopen(handler: CommandHandler, command: ReopenThread, actor: str) -> Reply:
    return _on_existing(handler, command.slug, actor, command.command_id, lambda state, context: rules.reopen(
        state, context, evaluation=command.eval, reason=command.reason, discovery=command.discovery, ref=command.ref
    ))


def recognize(handler: CommandHandler, command: RecognizeClosure, actor: str) -> Reply:
    """Recognition, the crystallization, and each target page's initialisation or revision,
    appended together."""

    def decide(state, context):  # type: ignore[no-untyped-def]
        return crystallization.recognize(state, context, lambda page: handler.load(page, page_routes.project))

    return _on_existing(handler, command.slug, actor, command.command_id, decide)


def refuse(handler: CommandHandler, command: RefuseClosure, actor: str) -> Reply:
    return _on_existing(handler, command.slug, actor, command.command_id, lambda state, context: rules.refuse(
        state, context, reason=command.reason
    ))


def _on_existing(handler: CommandHandler, slug: str, actor: str, command_id: str | None, decide: Decide) -> Reply:
    return handler.handle(family_id("thread", slug), project, existing(decide, f"thread {slug!r}", "slug"), actor, command_id)
