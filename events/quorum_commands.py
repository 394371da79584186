"""Quorum commands (PROTOCOLS.md section 2)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.quorum import CoordinatorDecision, Preset


class ProposeQuorum(Command, frozen=True):
    text: str
    electorate: list[str]
    # k; or a preset scaled to the electorate. An explicit threshold wins over a preset.
    threshold: int | None = None
    total: int | None = None  # the N of "K/N": when given, must be the electorate's size
    preset: Preset | None = None
    # Default: 24 hours after the service receives it. A time without a zone is refused.
    deadline: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    deadline_in: str | None = None  # or a duration (24h, 2d, 30m) from the service's clock
    veto_on_nack: bool = False
    coordinator: str | None = None
    # Default: derived from the command_id, so a retried proposal lands on the same id.
    proposal_id: str | None = None


class AckProposal(Command, frozen=True):
    proposal_id: str


class NackProposal(Command, frozen=True):
    proposal_id: str
    reason: str


class BreakTie(Command, frozen=True):
    proposal_id: str
    decision: CoordinatorDecision


class OverrideProposal(Command, frozen=True):
    proposal_id: str
    decision: CoordinatorDecision
    reason: str


class ExpireProposal(Command, frozen=True):
    """Sent by the timer service when a proposal's deadline passes."""

    proposal_id: str


QuorumCommand = ProposeQuorum | AckProposal | NackProposal | BreakTie | OverrideProposal | ExpireProposal
