"""Dialogue thread events (PROTOCOLS.md section 3): numbered entries, each scoring the one
before it on novelty (N), coherence (C) and robustness (R).

The aggregate id (``originator_id``) is the thread slug.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Annotated

import msgspec

from athenaeum.events.base import Event
from athenaeum.events.constraints import LongSaid, Text
from athenaeum.events.imported import ImportedFile, ImportFinding


class Axis(enum.Enum):
    N = "N"  # novelty
    C = "C"  # coherence
    R = "R"  # robustness


class EntryKind(enum.Enum):
    CONTRIBUTION = "contribution"
    CLOSURE = "closure"
    REOPEN = "reopen"


class Vector(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    N: float
    C: float
    R: float

    def __add__(self, other: Vector) -> Vector:
        return Vector(self.N + other.N, self.C + other.C, self.R + other.R)

    def deficit_to(self, target: Vector) -> Vector:
        """max(0, target - self), per axis, rounded to 6 places so float noise never shows."""
        return Vector(*(round(max(0.0, t - s), 6) for t, s in zip(target.values().values(), self.values().values())))

    def values(self) -> dict[Axis, float]:
        return {Axis.N: self.N, Axis.C: self.C, Axis.R: self.R}


ZERO = Vector(0.0, 0.0, 0.0)


class Evaluation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An entry's scores of the entry before it, ``ref``."""

    ref: int
    v: Vector


class Crystallization(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    canon_pages: tuple[str, ...]
    patch_summary: str


class OpenQuestion(msgspec.Struct, frozen=True):
    id: str  # OQ-1, OQ-2, ...
    text: str


class ThreadOpened(Event, tag="ThreadOpened"):
    opened_by: str
    context: str  # written once, never edited
    open_questions: tuple[OpenQuestion, ...]
    participants: tuple[str, ...]
    topics: tuple[str, ...]
    target: Vector


class OpenQuestionAdded(Event, tag="OpenQuestionAdded"):
    oq_id: str
    text: str
    by: str


class EntryAppended(Event, tag="EntryAppended"):
    n: int  # thread-wide sequence
    kind: EntryKind  # the original's ``type``
    author: str
    body: str
    declared_axis: Axis | None = None
    last_eval: Evaluation | None = None  # absent only for n = 1
    current_at_close: Vector | None = None  # closures
    summary: str | None = None  # closures
    proposed_crystallization: Crystallization | None = None  # closures
    reason: str | None = None  # reopens


class ThreadReopened(Event, tag="ThreadReopened"):
    closure_n: int
    reopen_n: int
    by: str
    reason: str


class ClosureRecognized(Event, tag="ClosureRecognized"):
    closure_n: int
    by: str
    under_target: bool


class ClosureRefused(Event, tag="ClosureRefused"):
    closure_n: int
    by: str
    reason: str
    deficits: Vector | None  # cited when any axis of current_at_close is below target


class ThreadCrystallized(Event, tag="ThreadCrystallized"):
    closure_n: int
    canon_pages: tuple[str, ...]


class ImportedEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An entry file as found (``entries/NNN-<author>.md``): its front matter and its body."""

    n: int
    kind: EntryKind
    author: Text
    ts: Annotated[datetime, msgspec.Meta(tz=True)]  # what the reader gives: read as UTC when a file names no zone
    body: LongSaid
    declared_axis: Axis | None = None
    last_eval: Evaluation | None = None
    current_at_close: Vector | None = None
    summary: Text | None = None
    proposed_crystallization: Crystallization | None = None
    reason: Text | None = None


class ThreadImported(Event, tag="ThreadImported"):
    """An original thread folder, recorded as found: its opening and its entries as the files
    say (the authors' words, not their signatures: the event's actor is the importer)."""

    opened_by: str
    opened_at: datetime
    context: str
    open_questions: tuple[OpenQuestion, ...]
    participants: tuple[str, ...]
    topics: tuple[str, ...]
    target: Vector
    entries: tuple[ImportedEntry, ...]
    source: str
    content_sha256: str
    files: tuple[ImportedFile, ...]
    findings: tuple[ImportFinding, ...]

    def history(self) -> list[Event]:
        """The thread as Athenaeum would have recorded it: its opening, each entry and each
        reopen, at the files' own times, by their authors. Never stored: the rules and the views
        fold it, so an imported thread continues as if it had been written here."""
        envelope = {"originator_id": self.originator_id, "originator_version": self.originator_version,
                    "command_id": self.command_id}
        events: list[Event] = [ThreadOpened(
            **envelope, timestamp=self.opened_at, actor=self.opened_by, opened_by=self.opened_by,
            context=self.context, open_questions=self.open_questions, participants=self.participants,
            topics=self.topics, target=self.target)]
        closure_n = None
        for entry in self.entries:
            fields = msgspec.structs.asdict(entry)
            del fields["ts"]
            events.append(EntryAppended(**envelope, timestamp=entry.ts, actor=entry.author, **fields))
            if entry.kind is EntryKind.CLOSURE:
                closure_n = entry.n
            elif entry.kind is EntryKind.REOPEN and closure_n is not None:
                events.append(ThreadReopened(**envelope, timestamp=entry.ts, actor=entry.author, closure_n=closure_n,
                                             reopen_n=entry.n, by=entry.author, reason=entry.reason or ""))
        return events


ThreadEvent = (
    ThreadOpened
    | OpenQuestionAdded
    | EntryAppended
    | ThreadReopened
    | ClosureRecognized
    | ClosureRefused
    | ThreadCrystallized
    | ThreadImported
)
