"""Canon page rules (PROTOCOLS.md section 4): endorsements per revision, staled atomically by
a significant edit; a human approves canon when the fleet's consensus allows it.

``decide`` takes one command of the family; each rule checks everything against the state
before anything happens and returns the new events, or raises the rule's violation. Here the
rules of a page's text and lifecycle; those that weigh the fleet's consensus (endorsing,
resolving a dispute, approval, aging, readiness) are in ``page_canon``.
"""

from __future__ import annotations

import difflib
import re

from athenaeum.aggregates.family import Family, existing
from athenaeum.aggregates.page_canon import age, approve, endorse, reassess, require_none_pending, resolve
from athenaeum.aggregates.page_import import import_page
from athenaeum.aggregates.page_state import Page, content_sha256, evolve
from athenaeum.aggregates.rules import (
    ARTIFACT_LIMIT,
    ActorMismatch,
    AlreadyExists,
    Context,
    Invalid,
    Stamp,
    require_page_path,
    require_slug,
    require_text,
)
from athenaeum.aggregates.state import fold
from athenaeum.events import Event, family_id
from athenaeum.events.page import (
    DocumentRead,
    EndorsementDisputed,
    EndorsementStaled,
    Lifecycle,
    LifecycleChanged,
    PageInitialized,
    PageRevised,
)
from athenaeum.events.page_commands import (
    AgePage,
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    ImportPage,
    InitPage,
    PageCommand,
    ReadPage,
    ReassessPage,
    ResolveDispute,
)

SIGNIFICANT_RATIO = 0.30  # an edit changing more than this share of lines is significant
_HEADING = re.compile(r"^#{1,6}\s")
_STALED = ("reviewed", "accepted", "contributed")


def change_ratio(old: str, new: str) -> float:
    """The share of lines changed: lines replaced, removed or added, over the longer version."""
    before, after = old.splitlines(), new.splitlines()
    opcodes = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
    return round(changed / max(len(before), len(after), 1), 4)


def headings(content: str) -> list[str]:
    """The heading structure: spacing within a heading line is no change to it."""
    return [" ".join(line.split()) for line in content.splitlines() if _HEADING.match(line)]


def decide(state: Page | None, command: PageCommand, context: Context) -> list[Event]:
    match command:
        case InitPage():
            return init_page(state, command, context)
        case ReadPage():
            return read(_existing(state, command.page), command, context)
        case EndorsePage():
            return endorse(_existing(state, command.page), command, context)
        case EditPage():
            return edit(_existing(state, command.page), command, context)
        case DisputePage():
            return dispute(_existing(state, command.page), command, context)
        case ResolveDispute():
            return resolve(_existing(state, command.page), command, context)
        case ApprovePage():
            return approve(_existing(state, command.page), command, context)
        case ChangeLifecycle():
            return change_lifecycle(_existing(state, command.page), command, context)
        case AgePage():
            return age(_existing(state, command.page), context)
        case ReassessPage():
            return reassess(_existing(state, command.page), context)
        case ImportPage():
            return import_page(state, command, context)
    raise TypeError(f"not a page command: {command!r}")


def _existing(state: Page | None, page: str) -> Page:
    return existing(state, f"page {page!r}", "page")


def init_page(state: Page | None, command: InitPage, context: Context) -> list[Event]:
    page, content, from_thread = command.page, command.content, command.from_thread
    require_page_path(page, "page")
    if state is not None:
        raise AlreadyExists(f"page {page!r} already exists; edit it instead", "page")
    require_text(content, "content", ARTIFACT_LIMIT)
    if from_thread is not None:
        require_slug(from_thread, "from_thread")
    return [Stamp(family_id("page", page), 0, context)(
        PageInitialized, author=context.actor, content=content, content_sha256=content_sha256(content),
        scope=command.scope, crystallized_from=from_thread,
    )]


def read(state: Page, command: ReadPage, context: Context) -> list[Event]:
    """A read receipt for the current content, in one session."""
    require_text(command.session_id, "session_id")
    return [Stamp(state.id, state.version, context)(
        DocumentRead, agent=context.actor, rev=state.rev, content_sha256=state.content_sha256,
        session_id=command.session_id,
    )]


def edit(state: Page, command: EditPage, context: Context) -> list[Event]:
    """Significance is computed (over 30% of lines, or the headings changed); the editor may
    also claim it. A significant edit stales every other endorsement in the same command."""
    return revise(state, context, content=command.content, significant=command.significant)


def revise(
    state: Page, context: Context, *, content: str, significant: bool = False, crystallized_from: str | None = None
) -> list[Event]:
    """A new content by the context's actor: an editor's, or a recognized closure's
    (``crystallized_from``, its thread)."""
    require_text(content, "content", ARTIFACT_LIMIT)
    if content == state.content:
        raise Invalid(f"the content of {state.key!r} is unchanged", "content")
    ratio = change_ratio(state.content, content)
    significant = significant or ratio > SIGNIFICANT_RATIO or headings(state.content) != headings(content)
    rev = state.rev + 1 if significant else state.rev
    stamp = Stamp(state.id, state.version, context)
    events: list[Event] = [stamp(
        PageRevised, editor=context.actor, content=content, content_sha256=content_sha256(content), rev=rev,
        significant=significant, change_ratio=ratio, crystallized_from=crystallized_from,
    )]
    if not significant:
        return events
    for agent, endorsement in sorted(state.endorsements.items()):
        if agent != context.actor and endorsement.status in _STALED:
            events.append(stamp(EndorsementStaled, agent=agent, previous_status=endorsement.status, rev=rev))
    if state.lifecycle in (Lifecycle.CANONICAL, Lifecycle.SOFT_CANONICAL):
        events.append(stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.WORKING,
                            reason=f"significant revision v{rev}"))
    return events


def dispute(state: Page, command: DisputePage, context: Context) -> list[Event]:
    require_text(command.section, "section")
    if command.thread is not None:
        require_slug(command.thread, "thread")
    stamp = Stamp(state.id, state.version, context)
    events: list[Event] = [stamp(EndorsementDisputed, agent=context.actor, rev=state.rev, disputed=command.section,
                                 thread=command.thread)]
    if state.lifecycle is Lifecycle.SOFT_CANONICAL:
        events.append(stamp(LifecycleChanged, from_=state.lifecycle, to=Lifecycle.WORKING,
                            reason=f"disputed by {context.actor}"))
    return events


AUTHOR_LIFECYCLES = (Lifecycle.PROPOSAL, Lifecycle.WORKING, Lifecycle.ACCEPTED)


def change_lifecycle(state: Page, command: ChangeLifecycle, context: Context) -> list[Event]:
    """Authors own the lifecycle up to accepted; canon comes only from a human's approval.
    Accepted waits for every active agent to have looked at the current revision."""
    to = command.to
    if context.actor != state.author:
        raise ActorMismatch(f"only the author {state.author!r} moves {state.key!r} through its lifecycle", "actor")
    if to in (Lifecycle.CANONICAL, Lifecycle.SOFT_CANONICAL):
        raise Invalid(f"{to.value} comes from a human's approval, not from the author", "to")
    if to not in AUTHOR_LIFECYCLES:  # draft, deprecated: found in original pages, moved on from
        raise Invalid(f"{to.value} is no lifecycle an author moves a page to here", "to")
    if state.lifecycle in (Lifecycle.CANONICAL, Lifecycle.SOFT_CANONICAL):
        raise Invalid(f"{state.key!r} is {state.lifecycle.value}: a significant revision or a dispute moves it", "to")
    if to is state.lifecycle:
        raise Invalid(f"{state.key!r} is already {to.value}", "to")
    require_text(command.reason, "reason")
    if to is Lifecycle.ACCEPTED:
        require_none_pending(state, context)
    return [Stamp(state.id, state.version, context)(
        LifecycleChanged, from_=state.lifecycle, to=to, reason=command.reason
    )]


FAMILY = Family("page", lambda command: family_id("page", command.page), fold(evolve), decide)
