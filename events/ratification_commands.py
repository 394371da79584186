"""Ratification commands (PROTOCOLS.md section 1)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.ratification import Caveat, Decision, DissentItem, HumanChoice, Mode, Note


class InitRatification(Command, frozen=True):
    topic: str
    roster: list[str]
    artifact: str
    mode: Mode = Mode.STANDARD
    # Default: 72 hours after the service receives it. A time without a zone is refused.
    expires_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    expires_in: str | None = None  # or a duration (72h, 14d, 30m) from the service's clock
    sha256: str | None = None  # when given, must be the artifact's
    artifact_origin: str = "inline"
    supersedes: str | None = None


class CastVote(Command, frozen=True):
    topic: str
    sha256: str
    decision: Decision
    dissent: list[DissentItem] = []


class RecordHumanDecision(Command, frozen=True):
    topic: str
    decision: HumanChoice
    notes: list[Note] = []
    caveats: list[Caveat] = []
    atoms: list[str] = []


class SplitAtom(Command, frozen=True):
    topic: str
    atom: str
    into: list[DissentItem]


class CancelRatification(Command, frozen=True):
    topic: str


class ExpireRatification(Command, frozen=True):
    """Sent by the timer service when a ratification's window closes."""

    topic: str


RatificationCommand = InitRatification | CastVote | RecordHumanDecision | SplitAtom | CancelRatification | ExpireRatification
