"""Quorum proposal events (PROTOCOLS.md section 2): ACK/NACK votes against a k-of-n threshold.

The aggregate id (``originator_id``) is the proposal id, 8 uppercase hex characters.
"""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from athenaeum.events.base import Event
from athenaeum.events.imported import ImportedFile, ImportFinding

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


class ImportedStatus(enum.Enum):
    """Where an original scratchpad says its proposal stands. (A tie awaiting a coordinator is
    not among them: the original names no coordinator, so nobody could break it.)"""

    OPEN = "open"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    VETOED = "vetoed"
    EXPIRED = "expired"


class ProposalImported(Event, tag="ProposalImported"):
    """An original quorum scratchpad (``fleet/quorum/<proposal_id>``), recorded as found: its
    votes are what the file lists (the agents' words, not their signatures: the event's actor is
    the importer); ``acks`` and ``nacks`` are the votes the rules count, one per agent of the
    electorate. The electorate and deadline of an open one are the importer's (the original
    keeps neither); a closed one's electorate is its voters."""

    proposer: str
    text: str
    electorate: tuple[str, ...]
    threshold: int
    total: int
    deadline: datetime
    opened_at: datetime
    status: ImportedStatus
    acks: tuple[str, ...]
    nacks: tuple[Nack, ...]
    closed_at: datetime | None  # the result's time, if it gives one
    reason: str | None  # the result's reason, if it gives one
    decided_by: str | None  # who vetoed, if the result says
    source: str  # the folder the file was found in
    content_sha256: str
    files: tuple[ImportedFile, ...]
    findings: tuple[ImportFinding, ...]

    def history(self) -> list[Event]:
        """The proposal as Athenaeum would have recorded it: its opening by its proposer, each
        counted vote by its agent (at the opening's time: the file keeps no vote's), and its
        outcome at the result's time. Never stored: the rules and the views fold it, so an open
        one continues as if it had been opened here."""
        envelope = {"originator_id": self.originator_id, "originator_version": self.originator_version,
                    "command_id": self.command_id}
        events: list[Event] = [ProposalOpened(
            **envelope, timestamp=self.opened_at, actor=self.proposer, proposer=self.proposer, text=self.text,
            electorate=self.electorate, threshold=self.threshold, total=self.total, deadline=self.deadline)]
        events += [ProposalAcked(**envelope, timestamp=self.opened_at, actor=agent, agent=agent) for agent in self.acks]
        events += [ProposalNacked(**envelope, timestamp=self.opened_at, actor=nack.agent, agent=nack.agent,
                                  reason=nack.reason) for nack in self.nacks]
        closed = {**envelope, "timestamp": self.closed_at or self.opened_at, "actor": self.actor}
        votes = {"acks": self.acks, "nacks": self.nacks}
        match self.status:
            case ImportedStatus.ACCEPTED:
                events.append(ProposalAccepted(**closed, **votes))
            case ImportedStatus.REJECTED:
                events.append(ProposalRejected(**closed, **votes, reason=self.reason or "as imported"))
            case ImportedStatus.VETOED:
                events.append(ProposalVetoed(**closed, by=self.decided_by or self.actor))
            case ImportedStatus.EXPIRED:
                events.append(ProposalExpired(**closed, **votes))
        return events


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
    | ProposalImported
)
