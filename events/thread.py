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


class Settled(enum.Enum):
    """What a human made of a thread's closure, as the original's ``meta.yaml`` says."""

    CRYSTALLIZED = "crystallized"
    CLOSED_WITHOUT_CRYSTALLIZATION = "closed-without-crystallization"


class Settlement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An imported thread's settled state, from its ``meta.yaml``: its ``status`` and, once
    crystallized, its ``crystallization`` block's signer and pages."""

    status: Settled
    signed_by: Text | None = None
    canon_pages: tuple[Text, ...] = ()


class ThreadImported(Event, tag="ThreadImported"):
    """An original thread folder, recorded as found: its opening and its entries as the files
    say (the authors' words, not their signatures: the event's actor is the importer). An
    archival one (``migration_mode: archival``, the original's Legacy Migration) keeps its
    entry files as historical text, read as no entries: it is history, continued by nobody."""

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
    settled: Settlement | None = None  # its last closure's fate, when meta.yaml says a human decided it
    archival: bool = False

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
        if self.settled is not None and self.entries and self.entries[-1].kind is EntryKind.CLOSURE:
            events.append(self._settling(self.entries[-1], envelope))
        return events

    def _settling(self, closure: ImportedEntry, envelope: dict) -> Event:
        """The human's decision on the last closure, as meta.yaml tells it: by its signer, or
        (a refusal names nobody) the importer, at the closure's time (the file keeps no other)."""
        assert self.settled is not None and closure.current_at_close is not None
        at = {**envelope, "timestamp": closure.ts, "closure_n": closure.n}
        if self.settled.status is Settled.CRYSTALLIZED:
            return ThreadCrystallized(**at, actor=self.settled.signed_by or self.actor,
                                      canon_pages=self.settled.canon_pages)
        deficits = closure.current_at_close.deficit_to(self.target)
        return ClosureRefused(**at, actor=self.actor, by=self.actor, reason=f"meta.yaml: {self.settled.status.value}",
                              deficits=deficits if any(deficits.values().values()) else None)


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
