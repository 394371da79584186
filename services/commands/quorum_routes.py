"""Quorum commands, from their Structs to the rules in ``aggregates.quorum``."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta

import msgspec

from athenaeum.aggregates import quorum as rules
from athenaeum.aggregates.quorum_state import evolve
from athenaeum.aggregates.rules import deadline_of
from athenaeum.aggregates.state import fold
from athenaeum.events import Event, family_id
from athenaeum.events.quorum import ProposalOpened
from athenaeum.events.quorum_commands import (
    AckProposal,
    BreakTie,
    ExpireProposal,
    NackProposal,
    OverrideProposal,
    ProposeQuorum,
)
from athenaeum.projectors import quorum_status
from athenaeum.services.commands.handler import CommandHandler, Decide, existing
from athenaeum.services.timers.deadlines import ceil_second, closing
from athenaeum.services.commands.replies import Reply

project = fold(evolve)
DEFAULT_DEADLINE = timedelta(hours=24)
ID_ATTEMPTS = 4  # derived ids that may collide with someone else's before giving up


def propose(handler: CommandHandler, command: ProposeQuorum, actor: str) -> Reply:
    if command.proposal_id is not None:
        reply = _open(handler, command, actor, command.proposal_id)
    else:
        # Derived from the command id, so a retry lands on the proposal its original opened.
        command = msgspec.structs.replace(command, command_id=command.command_id or uuid.uuid4().hex)
        for attempt in range(ID_ATTEMPTS):
            reply = _open(handler, command, actor, derived_id(actor, command.command_id, attempt))
            if reply.ok or reply.error is None or reply.error.code != "already_exists":
                break
    if reply.ok and len(command.text) > rules.SHORT_FORM:
        warning = f"text is {len(command.text)} characters; the fleet channel is short-form ({rules.SHORT_FORM})"
        reply = msgspec.structs.replace(reply, warnings=[warning])
    return reply


def derived_id(actor: str, command_id: str, attempt: int) -> str:
    return hashlib.sha256(f"{actor}/{command_id}/{attempt}".encode()).hexdigest()[:8].upper()


def _deadline_of(command: ProposeQuorum, now: datetime) -> datetime:
    """The deadline as given, or (a duration, the default) from now rounded up to the second."""
    deadline = deadline_of(command.deadline, command.deadline_in, DEFAULT_DEADLINE, now, ("deadline", "deadline_in"))
    return deadline if command.deadline is not None else ceil_second(deadline)


def _open(handler: CommandHandler, command: ProposeQuorum, actor: str, proposal_id: str) -> Reply:
    def decide(state, context):  # type: ignore[no-untyped-def]
        return rules.open_proposal(
            state,
            context,
            proposal_id=proposal_id,
            text=command.text,
            electorate=command.electorate,
            deadline=_deadline_of(command, context.now),
            threshold=command.threshold,
            total=command.total,
            preset=command.preset,
            veto_on_nack=command.veto_on_nack,
            coordinator=command.coordinator,
        )

    return handler.handle(family_id("quorum", proposal_id), project, decide, actor, command.command_id)


def ack(handler: CommandHandler, command: AckProposal, actor: str) -> Reply:
    return _on_existing(handler, command.proposal_id, actor, command.command_id, rules.ack)


def nack(handler: CommandHandler, command: NackProposal, actor: str) -> Reply:
    return _on_existing(handler, command.proposal_id, actor, command.command_id, lambda state, context: rules.nack(
        state, context, reason=command.reason
    ))


def tiebreak(handler: CommandHandler, command: BreakTie, actor: str) -> Reply:
    return _on_existing(handler, command.proposal_id, actor, command.command_id, lambda state, context: rules.tiebreak(
        state, context, decision=command.decision
    ))


def override(handler: CommandHandler, command: OverrideProposal, actor: str) -> Reply:
    return _on_existing(handler, command.proposal_id, actor, command.command_id, lambda state, context: rules.override(
        state, context, decision=command.decision, reason=command.reason
    ))


def expire(handler: CommandHandler, command: ExpireProposal, actor: str) -> Reply:
    return _on_existing(handler, command.proposal_id, actor, command.command_id, rules.expire)


def expire_by_timer(handler: CommandHandler, proposal_id: str, actor: str) -> Reply:
    return expire(handler, ExpireProposal(proposal_id=proposal_id, command_id=f"expire:{proposal_id}"), actor)


def _deadline(event: Event) -> datetime | None:
    return event.deadline if isinstance(event, ProposalOpened) else None


DEADLINE = closing("quorum", quorum_status.VIEW, "deadline", _deadline, expire_by_timer, project)


def _on_existing(handler: CommandHandler, proposal_id: str, actor: str, command_id: str | None, decide: Decide) -> Reply:
    checked = existing(decide, f"proposal {proposal_id!r}", "proposal_id")
    return handler.handle(family_id("quorum", proposal_id), project, checked, actor, command_id)
