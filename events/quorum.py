"""Quorum proposal events (PROTOCOLS.md section 2): ACK/NACK votes against a k-of-n threshold.

The aggregate id (``originator_id``) is the proposal id, 8 uppercase hex characters.
"""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from athenaeum.events.base import Event

COORDINATOR_VETO = "COORDINATOR_VETO"  # a NACK reason that, from the coordinator, vetoes


class Preset(enum.Enum):
    """Named thresholds, as k of 9 scaled to the electorate: ceil(5n/9) and ceil(7n/9)."""

    ADVISORY = "advisory"
    BLOCKING = "blocking"


class CoordinatorDecision(enum.Enum):
    ACCEPT = "accept"
    REJECT = "reject"

    @property
    def outcome(self) -> str:
        """The status the decision gives a proposal."""
        return "accepted" if self is CoordinatorDecision.ACCEPT else "rejected"


class Nack(msgspec.Struct, frozen=True):
    agent: str
    reason: str


class ProposalOpened(Event, tag="ProposalOpened"):
    proposer: str
    text: str
    electorate: tuple[str, ...]
    threshold: int  # k
    total: int  # n, the electorate's size
    deadline: datetime
    veto_on_nack: bool = False
    coordinator: str | None = None


class ProposalAcked(Event, tag="ProposalAcked"):
    agent: str


class ProposalNacked(Event, tag="ProposalNacked"):
    agent: str
    reason: str


class ProposalAccepted(Event, tag="ProposalAccepted"):
    acks: tuple[str, ...]
    nacks: tuple[Nack, ...]


class ProposalRejected(Event, tag="ProposalRejected"):
    acks: tuple[str, ...]
    nacks: tuple[Nack, ...]
    reason: str  # "veto-on-nack" or "threshold-unreachable"


class ProposalVetoed(Event, tag="ProposalVetoed"):
    by: str


class ProposalExpired(Event, tag="ProposalExpired"):
    acks: tuple[str, ...]
    nacks: tuple[Nack, ...]


class TieDeclared(Event, tag="TieDeclared"):
    acks: tuple[str, ...]
    nacks: tuple[Nack, ...]


class CoordinatorTieBroken(Event, tag="CoordinatorTieBroken"):
    decision: CoordinatorDecision


class CoordinatorOverridden(Event, tag="CoordinatorOverridden"):
    decision: CoordinatorDecision
    reason: str


QuorumEvent = (
    ProposalOpened
    | ProposalAcked
    | ProposalNacked
    | ProposalAccepted
    | ProposalRejected
    | ProposalVetoed
    | ProposalExpired
    | TieDeclared
    | CoordinatorTieBroken
    | CoordinatorOverridden
)
