"""Dialogue thread commands (PROTOCOLS.md section 3)."""

from __future__ import annotations

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.page import page_path
from athenaeum.events.thread import Axis, Vector


class OpenThread(Command, frozen=True):
    slug: str
    context: str
    target: Vector
    body: str  # the first entry
    declared_axis: Axis | None = None
    questions: list[str] = []
    topics: list[str] = []
    participants: list[str] = []


class AskQuestion(Command, frozen=True):
    slug: str
    question: str


class Contribute(Command, frozen=True):
    slug: str
    body: str
    eval: Vector | None = None  # scores of the preceding entry; required after the first
    ref: int | None = None  # when given, must be the preceding entry's n
    declared_axis: Axis | None = None


class CloseThread(Command, frozen=True):
    slug: str
    eval: Vector | None
    current: Vector  # Σ of every evaluation, this one included
    summary: str
    pages: list[str]  # paths inside wiki/, or from the repository's root: one page either way
    patch_summary: str
    ref: int | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "pages", [page_path(page) for page in self.pages])


class ReopenThread(Command, frozen=True):
    slug: str
    eval: Vector | None
    reason: str
    discovery: str
    ref: int | None = None


class RecognizeClosure(Command, frozen=True):
    slug: str


class RefuseClosure(Command, frozen=True):
    slug: str
    reason: str


ThreadCommand = OpenThread | AskQuestion | Contribute | CloseThread | ReopenThread | RecognizeClosure | RefuseClosure
