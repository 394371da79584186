"""Quorum commands (PROTOCOLS.md section 2)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import AGENTS_LIMIT, Agent, Agents, Duration, ProposalId, Said, Text, listing
from athenaeum.events.imported import ImportFindings, SourceFiles
from athenaeum.events.quorum import CoordinatorDecision, ImportedStatus, Nack, Preset

# Of the electorate: k at most its size, N exactly its size (the rules check it).
Count = Annotated[int, msgspec.Meta(ge=1, le=AGENTS_LIMIT, description="at most the electorate's size")]


class ProposeQuorum(Command, frozen=True):
    """Put a proposal to an electorate: accepted at k ACKs of n (a threshold, or the advisory or
    blocking preset) before the deadline, with an optional veto and coordinator."""
    names_agents: ClassVar[tuple[str, ...]] = ("electorate", "coordinator")

    text: Said
    electorate: Agents
    # k; or a preset scaled to the electorate. An explicit threshold wins over a preset.
    threshold: Count | None = None
    total: Count | None = None  # the N of "K/N": when given, must be the electorate's size
    preset: Preset | None = None
    # Default: 24 hours after the service receives it. A time without a zone is refused.
    deadline: Annotated[datetime, msgspec.Meta(tz=True, description="in the future, before 2200")] | None = None
    deadline_in: Duration | None = None  # or a duration (24h, 2d, 30m) from the service's clock
    veto_on_nack: bool = False
    coordinator: Agent | None = None
    # Default: derived from the command_id, so a retried proposal lands on the same id.
    proposal_id: ProposalId | None = None


class AckProposal(Command, frozen=True):
    """An elector's ACK of an open proposal. Quorum votes are public."""
    proposal_id: ProposalId


class NackProposal(Command, frozen=True):
    """An elector's NACK of an open proposal, with its reason; the coordinator's NACK with
    COORDINATOR_VETO vetoes it."""
    proposal_id: ProposalId
    reason: Said


class BreakTie(Command, frozen=True):
    """The coordinator's accept or reject of a proposal awaiting-coordinator after an even split."""
    proposal_id: ProposalId
    decision: CoordinatorDecision


class OverrideProposal(Command, frozen=True):
    """The coordinator's accept or reject of an open proposal before its deadline, with its reason."""
    proposal_id: ProposalId
    decision: CoordinatorDecision
    reason: Said


class ExpireProposal(Command, frozen=True):
    """Sent by the timer service when a proposal's deadline passes."""

    proposal_id: ProposalId


class ImportProposal(Command, frozen=True):
    """An original quorum scratchpad, as ``athenaeum import`` read it: the proposal, the votes
    the rules count, where it stands, the file's bytes, and the rules it breaks (recorded, not
    refused). An open one's electorate and deadline are the importer's."""

    proposal_id: ProposalId
    source: Said
    proposer: Agent
    text: Said
    electorate: Annotated[list[Agent], listing(AGENTS_LIMIT, "electorate")]  # a closed one's: its voters, maybe none
    threshold: Count
    deadline: Annotated[datetime, msgspec.Meta(tz=True)]
    opened_at: Annotated[datetime, msgspec.Meta(tz=True)]
    status: ImportedStatus
    acks: Annotated[list[Agent], listing(AGENTS_LIMIT, "acks")] = []
    nacks: Annotated[list[Nack], listing(AGENTS_LIMIT, "nacks")] = []
    closed_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    reason: Text | None = None
    decided_by: Text | None = None
    files: SourceFiles = []
    findings: ImportFindings = []


QuorumCommand = (
    ProposeQuorum | AckProposal | NackProposal | BreakTie | OverrideProposal | ExpireProposal | ImportProposal
)
