"""Canon page commands (PROTOCOLS.md section 4)."""

from __future__ import annotations

from typing import ClassVar

from athenaeum.events.commands import Command
from athenaeum.events.page import CanonLevel, Endorsing, Lifecycle, Scope


class InitPage(Command, frozen=True):
    page: str
    content: str
    scope: Scope = Scope.STRUCTURAL
    from_thread: str | None = None


class ReadPage(Command, frozen=True):
    page: str
    session_id: str


class EndorsePage(Command, frozen=True):
    reads_fleet: ClassVar[bool] = True

    page: str
    status: Endorsing
    session_id: str
    rev: int | None = None  # when given, must be the current rev


class EditPage(Command, frozen=True):
    page: str
    content: str
    significant: bool = False  # the editor may mark an edit significant; it may also be computed so


class DisputePage(Command, frozen=True):
    page: str
    section: str
    thread: str | None = None


class ResolveDispute(Command, frozen=True):
    reads_fleet: ClassVar[bool] = True

    page: str
    agent: str
    decision: str
    thread: str


class ApprovePage(Command, frozen=True):
    reads_fleet: ClassVar[bool] = True

    page: str
    level: CanonLevel


class AgePage(Command, frozen=True):
    """Sent by the timer when a revision's 14 days are up."""

    reads_fleet: ClassVar[bool] = True

    page: str


class ReassessPage(Command, frozen=True):
    """Sent by the timer when time alone may have changed a page's readiness for approval."""

    reads_fleet: ClassVar[bool] = True

    page: str


class ChangeLifecycle(Command, frozen=True):
    """The author moves the page between proposal, working and accepted; canon is approved."""

    page: str
    to: Lifecycle
    reason: str


PageCommand = (InitPage | ReadPage | EndorsePage | EditPage | DisputePage | ResolveDispute | ApprovePage
               | ChangeLifecycle | AgePage | ReassessPage)
