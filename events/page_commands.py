"""Canon page commands (PROTOCOLS.md section 4)."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from athenaeum.events.commands import Command
from athenaeum.events.constraints import AGENTS_LIMIT, Agent, LongSaid, PagePath, Said, Slug, listing
from athenaeum.events.imported import ImportFindings, SourceFiles
from athenaeum.events.page import CanonLevel, Endorsing, ImportedStanding, Lifecycle, Scope, page_path


class OnPage(Command, frozen=True):
    """A command on one page, named by its path inside ``wiki/`` or from the repository's root
    (``wiki/canon/rules.md`` and ``canon/rules.md`` are one page): it carries the former, so
    it reads the same whichever way it was named, here, in its signature and in the ledger."""

    page: PagePath

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "page", page_path(self.page))


class InitPage(OnPage, frozen=True):
    """Create a canon page at its path inside the wiki, with its content and scope."""
    content: LongSaid
    scope: Scope = Scope.STRUCTURAL
    from_thread: Slug | None = None


class ReadPage(OnPage, frozen=True):
    """Record that an agent read the page's current revision in a session: an endorsement needs it
    first."""
    session_id: Said


class EndorsePage(OnPage, frozen=True):
    """An agent's standing on the page's current revision (accepted, reviewed, ...), after reading it
    in the same session."""
    reads_fleet: ClassVar[bool] = True

    status: Endorsing
    session_id: Said
    rev: int | None = None  # when given, must be the current rev


class EditPage(OnPage, frozen=True):
    """Replace the page's content; a significant edit (over 30% of lines or headings changed, or so
    marked) raises the revision and makes other endorsements stale."""
    content: LongSaid
    significant: bool = False  # the editor may mark an edit significant; it may also be computed so


class DisputePage(OnPage, frozen=True):
    """Dispute a section of the page, optionally in a thread; the page is not canon while a dispute
    stands."""
    section: Said
    thread: Slug | None = None


class ResolveDispute(OnPage, frozen=True):
    """A human resolves an agent's dispute of the page, with the decision and the thread it was settled
    in."""
    reads_fleet: ClassVar[bool] = True

    agent: Agent
    decision: Said
    thread: Slug


class ApprovePage(OnPage, frozen=True):
    """A human admits the page to canon, canonical or soft-canonical, when it is ready for that level."""
    reads_fleet: ClassVar[bool] = True

    level: CanonLevel


class AgePage(OnPage, frozen=True):
    """Sent by the timer when a revision's 14 days are up."""

    reads_fleet: ClassVar[bool] = True


class ReassessPage(OnPage, frozen=True):
    """Sent by the timer when time alone may have changed a page's readiness for approval."""

    reads_fleet: ClassVar[bool] = True


class ChangeLifecycle(OnPage, frozen=True):
    """The author moves the page between proposal, working and accepted; canon is approved.
    Accepted weighs the fleet: no active agent may be pending on the page."""

    reads_fleet: ClassVar[bool] = True

    to: Lifecycle
    reason: Said


class ImportPage(OnPage, frozen=True):
    """An original page file, as ``athenaeum import`` read it: its content, rev, lifecycle and
    consensus block as found, the file's bytes, and the rules they break (recorded, not refused)."""

    source: Said
    content: LongSaid
    rev: Annotated[int, msgspec.Meta(ge=1)]
    lifecycle: Lifecycle
    scope: Scope = Scope.STRUCTURAL
    author: Agent | None = None  # who contributed the rev, as the block says; else the importer
    standings: Annotated[list[ImportedStanding], listing(AGENTS_LIMIT, "standings")] = []
    files: SourceFiles = []  # the page's file, byte for byte, named by its path inside wiki/
    findings: ImportFindings = []


PageCommand = (InitPage | ReadPage | EndorsePage | EditPage | DisputePage | ResolveDispute | ApprovePage
               | ChangeLifecycle | AgePage | ReassessPage | ImportPage)
