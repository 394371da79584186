"""Canon page events (PROTOCOLS.md section 4): revisions with per-revision endorsements.

The aggregate id (``originator_id``) is the page's path inside the wiki's folder, ``wiki/``
(``canon/rules.md``, the file ``wiki/canon/rules.md``), where the original wiki tools look.
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Annotated

import msgspec

from athenaeum.events.base import Event
from athenaeum.events.constraints import Agent, Text
from athenaeum.events.imported import ImportedFile, ImportFinding


SOFT_CANONICAL_AGING = timedelta(days=14)  # how long the missing third must have been waiting

WIKI = "wiki/"  # the wiki's folder, from the repository's root: the pages live inside it
# Inside it, what the wiki's tools keep beside the pages: no page may take their place.
THREADS_FOLDER = "agents/dialogue"  # a folder per dialogue thread
WIKI_LOG = "log.md"  # the log of the threads' entries


def page_path(path: str) -> str:
    """A page's id: its path inside ``wiki/``. A path given from the repository's root, with a
    leading ``wiki/``, names the same page (``wiki/canon/rules.md`` is ``canon/rules.md``)."""
    return path.removeprefix(WIKI)


def beside_the_pages(path: str) -> str | None:
    """What the wiki keeps at ``path`` (a page id) instead of a page, if anything."""
    for reserved, what in ((THREADS_FOLDER, "the dialogue threads"), (WIKI_LOG, "the wiki's log")):
        if path == reserved or path.startswith(f"{reserved}/"):
            return what
    return None


class Scope(enum.Enum):
    STRUCTURAL = "structural"
    DESCRIPTIVE = "descriptive"


class Endorsing(enum.Enum):
    """The statuses an agent records itself; the others (pending, disputed, stale, dormant)
    follow from what happens."""

    REVIEWED = "reviewed"
    ACCEPTED = "accepted"
    CONTRIBUTED = "contributed"


class Lifecycle(enum.Enum):
    DRAFT = "draft"  # the original's own, found in its pages; an author moves a page on from it
    PROPOSAL = "proposal"
    WORKING = "working"
    ACCEPTED = "accepted"
    SOFT_CANONICAL = "soft-canonical"
    CANONICAL = "canonical"
    DEPRECATED = "deprecated"  # the original's own, found in its pages


class CanonLevel(enum.Enum):
    CANONICAL = "canonical"
    SOFT_CANONICAL = "soft-canonical"


class PageInitialized(Event, tag="PageInitialized"):
    author: str
    content: str
    content_sha256: str
    scope: Scope
    rev: int = 1
    crystallized_from: str | None = None  # the thread whose closure this page carries


class ImportedStanding(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An agent's entry in an original page's consensus block, as found: a standing the agent
    recorded (``pending`` and ``dormant`` follow from the fleet, and are not kept)."""

    agent: Agent
    status: Annotated[str, msgspec.Meta(pattern="^(reviewed|accepted|contributed|disputed|stale)$")]
    rev: Annotated[int, msgspec.Meta(ge=1)]
    since: Annotated[datetime, msgspec.Meta(tz=True)]
    disputed: Text | None = None  # what a dispute contests
    thread: Text | None = None  # where a dispute is discussed, or the decision's thread
    decision: Text | None = None  # a human's final word on a dispute (``accepted (user decision: ...)``)
    note: Text | None = None  # any other words in parentheses (``contributed (added section 4)``)


class PageImported(PageInitialized, tag="PageImported", kw_only=True):
    """An original page file (``wiki/<page>``), recorded as found: its content, rev, lifecycle
    and consensus block as the file says (the agents' words, not their signatures: the event's
    actor is the importer). A kind of initialisation, so every view of pages counts it."""

    lifecycle: Lifecycle
    standings: tuple[ImportedStanding, ...]
    source: str
    imported_sha256: str  # of the file as found: importing it again adds nothing
    files: tuple[ImportedFile, ...]
    findings: tuple[ImportFinding, ...]


class DocumentRead(Event, tag="DocumentRead"):
    agent: str
    rev: int
    content_sha256: str
    session_id: str


class EndorsementRecorded(Event, tag="EndorsementRecorded"):
    agent: str
    status: Endorsing
    rev: int
    session_id: str
    approvable: bool = False  # after it, a human may approve the page (canonical or soft-canonical)
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it


class EndorsementDisputed(Event, tag="EndorsementDisputed"):
    agent: str
    rev: int
    disputed: str  # the section or claim contested
    thread: str | None = None  # where it is discussed


class PageRevised(Event, tag="PageRevised"):
    editor: str
    content: str
    content_sha256: str
    rev: int
    significant: bool
    change_ratio: float
    crystallized_from: str | None = None


class EndorsementStaled(Event, tag="EndorsementStaled"):
    agent: str
    previous_status: str
    rev: int  # the page's new rev


class DisputeResolved(Event, tag="DisputeResolved"):
    agent: str
    decided_by: str
    decision: str
    thread: str
    approvable: bool = False  # as on EndorsementRecorded
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it


class CanonApproved(Event, tag="CanonApproved"):
    level: CanonLevel
    approved_by: str
    rev: int
    active_agents: tuple[str, ...]
    as_of_position: int | None  # where the active set was read, so an audit can recompute it


class PendingAged(Event, tag="PendingAged"):
    """Appended by the timer when a revision has waited 14 days: whoever is still pending or
    stale no longer holds up soft-canonical. Readiness as the fleet stood at that moment."""

    rev: int
    canonical_ready: bool
    soft_canonical_ready: bool
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it


class ReadinessReassessed(Event, tag="ReadinessReassessed"):
    """Appended by the timer when time alone changed whether a human has an approval to give:
    an agent's 14 days as a newcomer or since it returned, or 30 idle days that take it out of
    the active set."""

    rev: int
    approvable: bool  # as on EndorsementRecorded
    as_of_position: int | None = None  # where the fleet's activity was read, so an audit can recompute it


class LifecycleChanged(Event, tag="LifecycleChanged"):
    from_: Lifecycle = msgspec.field(name="from")
    to: Lifecycle
    reason: str


PageEvent = (
    PageImported
    | PageInitialized
    | DocumentRead
    | EndorsementRecorded
    | EndorsementDisputed
    | PageRevised
    | EndorsementStaled
    | DisputeResolved
    | CanonApproved
    | PendingAged
    | ReadinessReassessed
    | LifecycleChanged
)
