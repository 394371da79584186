"""Ratification commands (PROTOCOLS.md section 1)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import (
    AGENTS_LIMIT, DECISION_LIMIT, DISSENT_LIMIT, Agents, Duration, LongSaid, Said, Slug, Text, listing,
)
from athenaeum.events.imported import ImportFindings, SourceFiles
from athenaeum.events.ratification import (
    Caveat, Decision, DissentItem, HumanChoice, ImportedStatus, ImportedVote, Mode, Note,
)

DissentItems = Annotated[list[DissentItem], listing(DISSENT_LIMIT, "dissent items")]


class InitRatification(Command, frozen=True):
    """Open a ratification: freeze the artifact by its SHA-256 and ask the roster to SIGN or DISSENT
    within the window (72 h by default)."""
    names_agents: ClassVar[tuple[str, ...]] = ("roster",)

    topic: Slug
    roster: Agents
    artifact: LongSaid
    mode: Mode = Mode.STANDARD
    # Default: 72 hours after the service receives it. A time without a zone is refused.
    expires_at: Annotated[datetime, msgspec.Meta(tz=True, description="in the future, before 2200")] | None = None
    expires_in: Duration | None = None  # or a duration (72h, 14d, 30m) from the service's clock
    sha256: Text | None = None  # when given, must be the artifact's
    artifact_origin: Said = "inline"
    supersedes: Slug | None = None


class CastVote(Command, frozen=True):
    """A roster member's vote on the frozen artifact, naming its sha256: SIGN, or DISSENT with the
    atoms objected to. Blind until the tally."""
    topic: Slug
    sha256: Text
    decision: Decision
    dissent: DissentItems = []


class RecordHumanDecision(Command, frozen=True):
    """A human's decision on a ratification that met dissent: rewrite with caveats, decompose further,
    or reject (signed by the human's key)."""
    topic: Slug
    decision: HumanChoice
    notes: Annotated[list[Note], listing(DECISION_LIMIT, "notes")] = []
    caveats: Annotated[list[Caveat], listing(DECISION_LIMIT, "caveats")] = []
    atoms: Annotated[list[Text], listing(DECISION_LIMIT, "atoms")] = []


class SplitAtom(Command, frozen=True):
    """Split a contested atom of a decomposition into smaller ones, for the roster to vote on again."""
    topic: Slug
    atom: Text
    into: DissentItems


class CancelRatification(Command, frozen=True):
    """Withdraw an open ratification; no vote is taken after it."""
    topic: Slug


class ExpireRatification(Command, frozen=True):
    """Sent by the timer service when a ratification's window closes."""

    topic: Slug


class ImportRatification(Command, frozen=True):
    """An original ratification folder, as ``athenaeum import`` read it: what its files say,
    their bytes, and the rules they break (recorded, not refused)."""

    topic: Slug
    source: Said
    artifact: LongSaid  # artifact.md, verbatim
    initiator: Text
    roster: Agents
    mode: Mode
    expires_at: Annotated[datetime, msgspec.Meta(tz=True)]
    status: ImportedStatus
    artifact_origin: Said = "inline"
    supersedes: Slug | None = None
    votes: Annotated[list[ImportedVote], listing(AGENTS_LIMIT, "votes")] = []
    files: SourceFiles = []  # every other file of the folder, byte for byte
    findings: ImportFindings = []


RatificationCommand = (
    InitRatification | CastVote | RecordHumanDecision | SplitAtom | CancelRatification | ExpireRatification
    | ImportRatification
)
