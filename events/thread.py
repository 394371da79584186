"""Dialogue thread events (PROTOCOLS.md section 3): numbered entries, each scoring the one
before it on novelty (N), coherence (C) and robustness (R).

The aggregate id (``originator_id``) is the thread slug.
"""

from __future__ import annotations

import enum

import msgspec

from athenaeum.events.base import Event


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


ThreadEvent = (
    ThreadOpened
    | OpenQuestionAdded
    | EntryAppended
    | ThreadReopened
    | ClosureRecognized
    | ClosureRefused
    | ThreadCrystallized
)
