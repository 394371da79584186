"""Dialogue thread commands (PROTOCOLS.md section 3)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import (
    AGENTS_LIMIT, CLOSURE_PAGES_LIMIT, QUESTIONS_LIMIT, Agent, LongSaid, PagePath, Said, Slug, Text, listing,
    schema_only,
)
from athenaeum.events.page import page_path
from athenaeum.events.imported import ImportFindings, SourceFiles
from athenaeum.events.thread import Axis, ImportedEntry, OpenQuestion, Settlement, Vector

ENTRIES_LIMIT = 10_000  # entries of one imported thread
TARGET_LIMIT = 1000.0  # a sum of evaluations in [0, 1]: far beyond any real discussion


def _axes(**bounds: float | bool) -> msgspec.Meta:
    """The same bounds on each axis of a vector, which the rules check."""
    return schema_only(properties={axis.value: bounds for axis in Axis})


Scores = Annotated[Vector | None, _axes(minimum=0, maximum=1)]  # of the preceding entry, each in [0, 1]
Target = Annotated[Vector, _axes(exclusiveMinimum=0, maximum=TARGET_LIMIT)]


class OpenThread(Command, frozen=True):
    """Open a dialogue thread: its context, the target scores it aims for, the first entry, and its
    questions, topics and participants."""
    names_agents: ClassVar[tuple[str, ...]] = ("participants",)

    slug: Slug
    context: Said
    target: Target
    body: Said  # the first entry
    declared_axis: Axis | None = None
    questions: Annotated[list[Said], listing(QUESTIONS_LIMIT, "questions")] = []
    topics: Annotated[list[Said], listing(QUESTIONS_LIMIT, "topics")] = []
    participants: Annotated[list[Agent], listing(AGENTS_LIMIT, "agents")] = []


class AskQuestion(Command, frozen=True):
    """Add an open question to a thread."""
    slug: Slug
    question: Said


class Contribute(Command, frozen=True):
    """Append a contribution to an open thread, scoring the preceding entry (N, C, R each in [0, 1]);
    nobody scores their own entry."""
    slug: Slug
    body: Said
    eval: Scores = None  # scores of the preceding entry; required after the first
    ref: int | None = None  # when given, must be the preceding entry's n
    declared_axis: Axis | None = None


class CloseThread(Command, frozen=True):
    """Close a thread: score the preceding entry, give the running sum with it (current), a summary and
    the canon pages it should crystallize into."""
    slug: Slug
    eval: Scores
    current: Vector  # Σ of every evaluation, this one included
    summary: Said
    # Paths inside wiki/, or from the repository's root: one page either way.
    pages: Annotated[list[PagePath], listing(CLOSURE_PAGES_LIMIT, "canon pages", least=1), schema_only(uniqueItems=True)]
    patch_summary: Said
    ref: int | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "pages", [page_path(page) for page in self.pages])


class ReopenThread(Command, frozen=True):
    """Reopen a thread awaiting crystallization, scoring the closure, with the reason and the new
    discovery; once per closure."""
    slug: Slug
    eval: Scores
    reason: Said
    discovery: Said
    ref: int | None = None


class RecognizeClosure(Command, frozen=True):
    """A human recognizes a thread's closure: the thread crystallizes into its canon pages."""
    slug: Slug


class RefuseClosure(Command, frozen=True):
    """A human refuses a thread's closure, with the reason: the thread is closed without
    crystallization, short of its target, until an agent reopens it."""
    slug: Slug
    reason: Said




class ImportThread(Command, frozen=True):
    """An original thread folder, as ``athenaeum import`` read it: its opening, its entries as
    found, every file's bytes, and the rules they break (recorded, not refused)."""

    slug: Slug
    source: Said
    opened_by: Text
    opened_at: Annotated[datetime, msgspec.Meta(tz=True)]
    context: LongSaid
    target: Target
    open_questions: Annotated[list[OpenQuestion], listing(QUESTIONS_LIMIT, "open questions")] = []
    participants: Annotated[list[Text], listing(AGENTS_LIMIT, "participants")] = []
    topics: Annotated[list[Text], listing(QUESTIONS_LIMIT, "topics")] = []
    entries: Annotated[list[ImportedEntry], listing(ENTRIES_LIMIT, "entries")] = []
    files: SourceFiles = []
    findings: ImportFindings = []
    settled: Settlement | None = None  # meta.yaml's status, when a human decided the last closure
    archival: bool = False  # ``migration_mode: archival``: its entry files are historical text


ThreadCommand = (
    OpenThread | AskQuestion | Contribute | CloseThread | ReopenThread | RecognizeClosure | RefuseClosure | ImportThread
)
