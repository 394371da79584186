"""An original page file imported (``athenaeum import``): recorded as found, the rules its
consensus block breaks marked, never refused for them; from then on it lives under the rules
(agents read and endorse its rev, its author edits it, a human approves it)."""

from __future__ import annotations

from athenaeum.aggregates.imported import recorded
from athenaeum.aggregates.page_state import Page, content_sha256
from athenaeum.aggregates.rules import ARTIFACT_LIMIT, Context, Invalid, Stamp, require_page_path, require_text
from athenaeum.events import Event, family_id
from athenaeum.events.page import PageImported
from athenaeum.events.page_commands import ImportPage


def import_page(state: Page | None, command: ImportPage, context: Context) -> list[Event]:
    page = command.page
    require_page_path(page, "page")
    require_text(command.content, "content", ARTIFACT_LIMIT)
    if [file.name for file in command.files] != [page]:
        raise Invalid(f"files: the page's own file, named {page!r}, and no other", "files")
    agents = [standing.agent for standing in command.standings]
    if len(set(agents)) != len(agents):
        raise Invalid("standings: an agent is listed twice", "standings")
    found = recorded(command.files, False if state is None else state.imported_sha256, f"page {page!r}", "page")
    if found is None:
        return []
    files, digest = found
    return [Stamp(family_id("page", page), 0, context)(
        PageImported, author=command.author or context.actor, content=command.content,
        content_sha256=content_sha256(command.content), scope=command.scope, rev=command.rev,
        lifecycle=command.lifecycle, standings=tuple(command.standings), source=command.source,
        imported_sha256=digest, files=files, findings=tuple(command.findings),
    )]
