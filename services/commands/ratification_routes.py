"""Ratification commands, from their Structs to the rules in ``aggregates.ratification``."""

from __future__ import annotations

from datetime import datetime, timedelta

from athenaeum.aggregates import ratification as rules
from athenaeum.aggregates.ratification_state import evolve
from athenaeum.aggregates.rules import deadline_of
from athenaeum.aggregates.state import fold
from athenaeum.events import Event
from athenaeum.events.ratification import ArtifactFrozen
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    ExpireRatification,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from athenaeum.projectors import a2a_tasks, ratification_status
from athenaeum.services.commands.handler import CommandHandler, Decide, existing
from athenaeum.services.timers.deadlines import closing
from athenaeum.services.commands.replies import Reply

project = fold(evolve)
DEFAULT_WINDOW = timedelta(hours=72)


def init(handler: CommandHandler, command: InitRatification, actor: str) -> Reply:
    superseded_exists = bool(command.supersedes) and handler.load(command.supersedes, project) is not None

    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.freeze(
            state,
            context,
            topic=command.topic,
            artifact=command.artifact,
            roster=command.roster,
            mode=command.mode,
            expires_at=deadline_of(command.expires_at, command.expires_in, DEFAULT_WINDOW, context.now,
                                   ("expires_at", "expires_in")),
            declared_sha256=command.sha256,
            artifact_origin=command.artifact_origin,
            supersedes=command.supersedes,
            superseded_exists=superseded_exists,
        )

    # An A2A task's id is the command id: it names one ratification, whoever sends it.
    a2a_task = (command.command_id or "").startswith(a2a_tasks.COMMAND_PREFIX)
    return handler.handle(command.topic, project, decide, actor, command.command_id, scoped=not a2a_task)


def vote(handler: CommandHandler, command: CastVote, actor: str) -> Reply:
    return _on_existing(handler, command.topic, actor, command.command_id, lambda state, context: rules.cast_vote(
        state, context, decision=command.decision, artifact_sha256=command.sha256, dissent=command.dissent
    ))


def decide(handler: CommandHandler, command: RecordHumanDecision, actor: str) -> Reply:
    return _on_existing(handler, command.topic, actor, command.command_id, lambda state, context: rules.decide(
        state, context, decision=command.decision, notes=command.notes, caveats=command.caveats, atoms=command.atoms
    ))


def split(handler: CommandHandler, command: SplitAtom, actor: str) -> Reply:
    return _on_existing(handler, command.topic, actor, command.command_id, lambda state, context: rules.split(
        state, context, atom=command.atom, into=command.into
    ))


def cancel(handler: CommandHandler, command: CancelRatification, actor: str) -> Reply:
    return _on_existing(handler, command.topic, actor, command.command_id, rules.cancel)


def expire(handler: CommandHandler, command: ExpireRatification, actor: str) -> Reply:
    return _on_existing(handler, command.topic, actor, command.command_id, rules.expire)


def expire_by_timer(handler: CommandHandler, topic: str, actor: str) -> Reply:
    return expire(handler, ExpireRatification(topic=topic, command_id=f"expire:{topic}"), actor)


def _expires_at(event: Event) -> datetime | None:
    return event.expires_at if isinstance(event, ArtifactFrozen) else None


DEADLINE = closing(
    "ratification", ratification_status.VIEW, "expires_at", _expires_at, expire_by_timer, project, prefixed=False
)


def _on_existing(handler: CommandHandler, topic: str, actor: str, command_id: str | None, decide: Decide) -> Reply:
    return handler.handle(topic, project, existing(decide, f"ratification {topic!r}", "topic"), actor, command_id)
