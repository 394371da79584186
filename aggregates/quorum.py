"""Quorum rules (PROTOCOLS.md section 2): ACK/NACK votes against a k-of-n threshold.

``decide`` takes one command of the family; each rule checks everything against the state
before anything happens and returns the new events, outcome included: a proposal closes by
itself the moment its outcome is certain. Nothing reads a clock or writes: the time and all
else arrive in the context, and a new proposal's id in its command (``with_proposal_id``).
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import datetime, timedelta

import msgspec

from athenaeum.aggregates.family import Family, existing
from athenaeum.aggregates.quorum_import import import_proposal
from athenaeum.aggregates.quorum_state import Proposal, Status, evolve
from athenaeum.aggregates.rules import (
    AlreadyExists,
    AlreadyVoted,
    Context,
    Invalid,
    NotOpen,
    RuleViolation,
    Stamp,
    VotingClosed,
    ceil_second,
    deadline_of,
    require_deadline,
    require_electorate,
    require_slug,
    require_text,
)
from athenaeum.aggregates.state import fold
from athenaeum.events import Event, constraints, family_id
from athenaeum.events.quorum import (
    COORDINATOR_VETO,
    CoordinatorOverridden,
    CoordinatorTieBroken,
    Preset,
    ProposalAccepted,
    ProposalAcked,
    ProposalExpired,
    ProposalNacked,
    ProposalOpened,
    ProposalRejected,
    ProposalVetoed,
    TieDeclared,
)
from athenaeum.events.quorum_commands import (
    AckProposal,
    BreakTie,
    ExpireProposal,
    ImportProposal,
    NackProposal,
    OverrideProposal,
    ProposeQuorum,
    QuorumCommand,
)

PROPOSAL_ID = re.compile(constraints.PROPOSAL_ID)
ID_ATTEMPTS = 4  # derived ids that may collide with someone else's before giving up
SHORT_FORM = 400  # characters: longer texts are accepted with a warning, the channel is short-form
DEFAULT_DEADLINE = timedelta(hours=24)
_PRESET_OF_NINE = {Preset.ADVISORY: 5, Preset.BLOCKING: 7}


class NotInElectorate(RuleViolation):
    code = "not_in_electorate"


class NotCoordinator(RuleViolation):
    code = "not_coordinator"


def preset_threshold(preset: Preset, total: int) -> int:
    """advisory is 5 of 9 and blocking 7 of 9, scaled to n as ceil(5n/9) and ceil(7n/9)."""
    return math.ceil(_PRESET_OF_NINE[preset] * total / 9)


def decide(state: Proposal | None, command: QuorumCommand, context: Context) -> list[Event]:
    match command:
        case ProposeQuorum():
            return open_proposal(state, command, context)
        case AckProposal():
            return ack(_existing(state, command.proposal_id), command, context)
        case NackProposal():
            return nack(_existing(state, command.proposal_id), command, context)
        case BreakTie():
            return tiebreak(_existing(state, command.proposal_id), command, context)
        case OverrideProposal():
            return override(_existing(state, command.proposal_id), command, context)
        case ExpireProposal():
            return expire(_existing(state, command.proposal_id), context)
        case ImportProposal():
            return import_proposal(state, command, context)
    raise TypeError(f"not a quorum command: {command!r}")


def _existing(state: Proposal | None, proposal_id: str) -> Proposal:
    return existing(state, f"proposal {proposal_id!r}", "proposal_id")


def aggregate_of(command: QuorumCommand) -> str:
    return family_id("quorum", command.proposal_id)  # type: ignore[arg-type]  # None: decide refuses it


def with_proposal_id(command: ProposeQuorum, actor: str, command_id: str, attempt: int) -> ProposeQuorum:
    """The proposal as given, or with an id derived from who sent it and its command id, so a
    retry lands on the proposal its original opened; ``attempt`` (below ID_ATTEMPTS) tries
    another when a derived id is someone else's already."""
    if command.proposal_id is not None:
        return command
    derived = hashlib.sha256(f"{actor}/{command_id}/{attempt}".encode()).hexdigest()[:8].upper()
    return msgspec.structs.replace(command, proposal_id=derived)


def advice(command: QuorumCommand) -> list[str]:
    """Warnings for a command the rules accept: a proposal's text over the short form."""
    if isinstance(command, ProposeQuorum) and len(command.text) > SHORT_FORM:
        return [f"text is {len(command.text)} characters; the fleet channel is short-form ({SHORT_FORM})"]
    return []


def open_proposal(state: Proposal | None, command: ProposeQuorum, context: Context) -> list[Event]:
    proposal_id = command.proposal_id
    if proposal_id is None:
        raise Invalid("a proposal needs its proposal_id (the service derives one when none is given)",
                      "proposal_id")
    if not PROPOSAL_ID.fullmatch(proposal_id):
        raise Invalid(f"proposal_id {proposal_id!r} is not 8 uppercase hex characters", "proposal_id")
    if state is not None:
        raise AlreadyExists(f"proposal {proposal_id} already exists", "proposal_id")
    require_text(command.text, "text")
    require_electorate(command.electorate, "electorate")
    if command.coordinator is not None:
        require_slug(command.coordinator, "coordinator")
    n = len(command.electorate)
    if command.total is not None and command.total != n:
        raise Invalid(f"threshold says of {command.total}, but the electorate has {n} members", "total")
    threshold = command.threshold
    if threshold is None:
        if command.preset is None:
            raise Invalid("give a threshold k, or a preset (advisory, blocking)", "threshold")
        threshold = preset_threshold(command.preset, n)
    if not 1 <= threshold <= n:
        raise Invalid(f"threshold {threshold} is not between 1 and the electorate's {n}", "threshold")
    deadline = require_deadline(_deadline_of(command, context), context, "deadline")
    return [
        Stamp(family_id("quorum", proposal_id), 0, context)(
            ProposalOpened,
            proposer=context.actor,
            text=command.text,
            electorate=tuple(command.electorate),
            threshold=threshold,
            total=n,
            deadline=deadline,
            veto_on_nack=command.veto_on_nack,
            coordinator=command.coordinator,
        )
    ]


def _deadline_of(command: ProposeQuorum, context: Context) -> datetime:
    """The deadline as given, or (a duration, the default) from now rounded up to the second:
    schedules keep whole seconds."""
    deadline = deadline_of(command.deadline, command.deadline_in, DEFAULT_DEADLINE, context.now,
                           ("deadline", "deadline_in"))
    return deadline if command.deadline is not None else ceil_second(deadline)


def ack(state: Proposal, command: AckProposal, context: Context) -> list[Event]:
    _require_elector(state, context)
    stamp = Stamp(state.id, state.version, context)
    return _settled(state, stamp(ProposalAcked, agent=context.actor), stamp)


def nack(state: Proposal, command: NackProposal, context: Context) -> list[Event]:
    """A NACK; from the coordinator with reason COORDINATOR_VETO, a veto."""
    if command.reason.strip() == COORDINATOR_VETO:
        return _veto(state, context)
    _require_elector(state, context)
    require_text(command.reason, "reason")
    stamp = Stamp(state.id, state.version, context)
    return _settled(state, stamp(ProposalNacked, agent=context.actor, reason=command.reason), stamp)


def tiebreak(state: Proposal, command: BreakTie, context: Context) -> list[Event]:
    if state.status is not Status.AWAITING_COORDINATOR:
        due = " (its deadline passed: a tie is declared when the timer records it)" if (
            state.status is Status.OPEN and context.now >= state.deadline) else ""
        raise NotOpen(f"proposal {state.key} is {state.status.value}, not awaiting-coordinator{due}")
    _require_coordinator(state, context, "breaks ties")
    return [Stamp(state.id, state.version, context)(CoordinatorTieBroken, decision=command.decision)]


def override(state: Proposal, command: OverrideProposal, context: Context) -> list[Event]:
    """The coordinator decides unilaterally while the proposal is open, before its deadline
    (after it, the votes as they stood decide, however late the timer); recorded for audit."""
    _require_voting(state, context)
    _require_coordinator(state, context, "overrides")
    require_text(command.reason, "reason")
    return [Stamp(state.id, state.version, context)(CoordinatorOverridden, decision=command.decision,
                                                    reason=command.reason)]


def expire(state: Proposal, context: Context) -> list[Event]:
    """The deadline timer's command: a tie reaches the coordinator, anything else expires.
    Idempotent: nothing once closed, nothing before the deadline."""
    if state.status is not Status.OPEN or context.now < state.deadline:
        return []
    stamp = Stamp(state.id, state.version, context)
    if _tied(state):
        return [stamp(TieDeclared, acks=state.acks, nacks=state.nacks)]
    return [stamp(ProposalExpired, acks=state.acks, nacks=state.nacks)]


def _veto(state: Proposal, context: Context) -> list[Event]:
    _require_voting(state, context)  # a veto is a NACK: before the deadline
    _require_coordinator(state, context, f"vetoes with {COORDINATOR_VETO}")
    return [Stamp(state.id, state.version, context)(ProposalVetoed, by=context.actor)]


def _settled(state: Proposal, vote: Event, stamp: Stamp) -> list[Event]:
    """The vote, and the outcome it makes certain, if any."""
    after = evolve(state, vote)
    assert after is not None
    acks, nacks = after.acks, after.nacks
    if len(acks) >= after.threshold:
        return [vote, stamp(ProposalAccepted, acks=acks, nacks=nacks)]
    if after.veto_on_nack and nacks:
        return [vote, stamp(ProposalRejected, acks=acks, nacks=nacks, reason="veto-on-nack")]
    reachable = len(acks) + after.outstanding >= after.threshold
    if after.coordinator is None:
        # Without a coordinator, a threshold out of reach decides at once.
        if reachable:
            return [vote]
        return [vote, stamp(ProposalRejected, acks=acks, nacks=nacks, reason="threshold-unreachable")]
    # With one, voting runs until everyone has voted (or the deadline) so a tie can reach it.
    if after.outstanding:
        return [vote]
    if _tied(after):
        return [vote, stamp(TieDeclared, acks=acks, nacks=nacks)]
    return [vote, stamp(ProposalRejected, acks=acks, nacks=nacks, reason="threshold-unreachable")]


def _tied(state: Proposal) -> bool:
    # As PROTOCOLS.md states it: acks == nacks with k not reached, a coordinator named. At the
    # deadline that includes nobody having voted: the coordinator then decides.
    return state.coordinator is not None and len(state.acks) == len(state.nacks) < state.threshold


def _require_open(state: Proposal) -> None:
    if state.status is not Status.OPEN:
        raise NotOpen(f"proposal {state.key} is {state.status.value}, not open")


def _require_voting(state: Proposal, context: Context) -> None:
    _require_open(state)
    if context.now >= state.deadline:
        raise VotingClosed(f"voting on {state.key} closed at {state.deadline.isoformat()}")


def _require_elector(state: Proposal, context: Context) -> None:
    _require_voting(state, context)
    if context.actor not in state.electorate:
        raise NotInElectorate(f"{context.actor!r} is not in the electorate of {state.key}", "agent")
    if state.has_voted(context.actor):
        raise AlreadyVoted(f"{context.actor!r} has already voted on {state.key}; votes are immutable", "agent")


def _require_coordinator(state: Proposal, context: Context, act: str) -> None:
    if state.coordinator is None:
        raise NotCoordinator(f"proposal {state.key} names no coordinator, so nobody {act}", "actor")
    if context.actor != state.coordinator:
        raise NotCoordinator(f"only the coordinator {state.coordinator!r} {act} on {state.key}", "actor")


FAMILY = Family("quorum", aggregate_of, fold(evolve), decide)
