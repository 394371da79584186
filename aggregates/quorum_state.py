"""A quorum proposal's state, folded from its events. Applies facts only: never raises."""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from athenaeum.aggregates.state import AggregateState
from athenaeum.events import Event
from athenaeum.events.quorum import (
    CoordinatorOverridden,
    CoordinatorTieBroken,
    Nack,
    ProposalAccepted,
    ProposalAcked,
    ProposalExpired,
    ProposalImported,
    ProposalNacked,
    ProposalOpened,
    ProposalRejected,
    ProposalVetoed,
    TieDeclared,
)


class Status(enum.Enum):
    OPEN = "open"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    VETOED = "vetoed"
    EXPIRED = "expired"
    AWAITING_COORDINATOR = "awaiting-coordinator"


class Proposal(AggregateState, tag="Proposal"):
    proposer: str
    electorate: tuple[str, ...]
    threshold: int
    deadline: datetime
    veto_on_nack: bool
    coordinator: str | None
    status: Status = Status.OPEN
    acks: tuple[str, ...] = ()
    nacks: tuple[Nack, ...] = ()
    imported_sha256: str | None = None  # of the original scratchpad, when it was imported

    def has_voted(self, agent: str) -> bool:
        return agent in self.acks or any(nack.agent == agent for nack in self.nacks)

    @property
    def outstanding(self) -> int:
        """Electors who have not voted yet."""
        return len(self.electorate) - len(self.acks) - len(self.nacks)


def evolve(state: Proposal | None, event: Event) -> Proposal | None:
    replace = msgspec.structs.replace
    match event:
        case ProposalImported():  # its history as Athenaeum would have recorded it, folded
            imported = None
            for step in event.history():
                imported = evolve(imported, step)
            return replace(imported, imported_sha256=event.content_sha256) if imported else None
        case ProposalOpened():
            return Proposal(
                id=event.originator_id,
                version=event.originator_version,
                proposer=event.proposer,
                electorate=event.electorate,
                threshold=event.threshold,
                deadline=event.deadline,
                veto_on_nack=event.veto_on_nack,
                coordinator=event.coordinator,
            )
    if state is None:
        return None  # history before the opening is not a proposal; the audit reports it
    match event:
        case ProposalAcked():
            return replace(state, acks=(*state.acks, event.agent))
        case ProposalNacked():
            return replace(state, nacks=(*state.nacks, Nack(event.agent, event.reason)))
        case ProposalAccepted():
            return replace(state, status=Status.ACCEPTED)
        case ProposalRejected():
            return replace(state, status=Status.REJECTED)
        case ProposalVetoed():
            return replace(state, status=Status.VETOED)
        case ProposalExpired():
            return replace(state, status=Status.EXPIRED)
        case TieDeclared():
            return replace(state, status=Status.AWAITING_COORDINATOR)
        case CoordinatorTieBroken() | CoordinatorOverridden():
            return replace(state, status=Status(event.decision.outcome))
    return state
