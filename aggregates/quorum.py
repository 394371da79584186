"""Quorum rules (PROTOCOLS.md section 2): ACK/NACK votes against a k-of-n threshold.

Each function checks every rule against the state before anything happens and returns the
new events, outcome included: a proposal closes by itself the moment its outcome is certain.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime

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
    require_deadline,
    require_electorate,
    require_slug,
    require_text,
)
from athenaeum.events import Event, family_id
from athenaeum.events.quorum import (
    COORDINATOR_VETO,
    CoordinatorDecision,
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

PROPOSAL_ID = re.compile(r"[0-9A-F]{8}")
SHORT_FORM = 400  # characters: longer texts are accepted with a warning, the channel is short-form
_PRESET_OF_NINE = {Preset.ADVISORY: 5, Preset.BLOCKING: 7}


class NotInElectorate(RuleViolation):
    code = "not_in_electorate"


class NotCoordinator(RuleViolation):
    code = "not_coordinator"


def preset_threshold(preset: Preset, total: int) -> int:
    """advisory is 5 of 9 and blocking 7 of 9, scaled to n as ceil(5n/9) and ceil(7n/9)."""
    return math.ceil(_PRESET_OF_NINE[preset] * total / 9)


def open_proposal(
    state: Proposal | None,
    context: Context,
    *,
    proposal_id: str,
    text: str,
    electorate: Sequence[str],
    deadline: datetime,
    threshold: int | None = None,
    total: int | None = None,
    preset: Preset | None = None,
    veto_on_nack: bool = False,
    coordinator: str | None = None,
) -> list[Event]:
    if not PROPOSAL_ID.fullmatch(proposal_id):
        raise Invalid(f"proposal_id {proposal_id!r} is not 8 uppercase hex characters", "proposal_id")
    if state is not None:
        raise AlreadyExists(f"proposal {proposal_id} already exists", "proposal_id")
    require_text(text, "text")
    require_electorate(electorate, "electorate")
    if coordinator is not None:
        require_slug(coordinator, "coordinator")
    n = len(electorate)
    if total is not None and total != n:
        raise Invalid(f"threshold says of {total}, but the electorate has {n} members", "total")
    if threshold is None:
        if preset is None:
            raise Invalid("give a threshold k, or a preset (advisory, blocking)", "threshold")
        threshold = preset_threshold(preset, n)
    if not 1 <= threshold <= n:
        raise Invalid(f"threshold {threshold} is not between 1 and the electorate's {n}", "threshold")
    deadline = require_deadline(deadline, context, "deadline")
    return [
        Stamp(family_id("quorum", proposal_id), 0, context)(
            ProposalOpened,
            proposer=context.actor,
            text=text,
            electorate=tuple(electorate),
            threshold=threshold,
            total=n,
            deadline=deadline,
            veto_on_nack=veto_on_nack,
            coordinator=coordinator,
        )
    ]


def ack(state: Proposal, context: Context) -> list[Event]:
    _require_elector(state, context)
    stamp = Stamp(state.id, state.version, context)
    return _settled(state, stamp(ProposalAcked, agent=context.actor), stamp)


def nack(state: Proposal, context: Context, *, reason: str) -> list[Event]:
    """A NACK; from the coordinator with reason COORDINATOR_VETO, a veto."""
    if reason.strip() == COORDINATOR_VETO:
        return _veto(state, context)
    _require_elector(state, context)
    require_text(reason, "reason")
    stamp = Stamp(state.id, state.version, context)
    return _settled(state, stamp(ProposalNacked, agent=context.actor, reason=reason), stamp)


def tiebreak(state: Proposal, context: Context, *, decision: CoordinatorDecision) -> list[Event]:
    if state.status is not Status.AWAITING_COORDINATOR:
        due = " (its deadline passed: a tie is declared when the timer records it)" if (
            state.status is Status.OPEN and context.now >= state.deadline) else ""
        raise NotOpen(f"proposal {state.key} is {state.status.value}, not awaiting-coordinator{due}")
    _require_coordinator(state, context, "breaks ties")
    return [Stamp(state.id, state.version, context)(CoordinatorTieBroken, decision=decision)]


def override(state: Proposal, context: Context, *, decision: CoordinatorDecision, reason: str) -> list[Event]:
    """The coordinator decides unilaterally while the proposal is open, before its deadline
    (after it, the votes as they stood decide, however late the timer); recorded for audit."""
    _require_voting(state, context)
    _require_coordinator(state, context, "overrides")
    require_text(reason, "reason")
    return [Stamp(state.id, state.version, context)(CoordinatorOverridden, decision=decision, reason=reason)]


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
