"""``resources/list``: the records there are, as resources a client can read without filling a
template: each ratification's manifest (and its ``ratified.md`` once ratified), each thread,
each page with its consensus block. A page of the list is a page of one family's ``list``
read; the cursor names the family and that read's own cursor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types

from athenaeum.services.client import AthenaeumClient
from athenaeum.services.mcp.resources import MARKDOWN, SCHEME

PAGE = 100  # rows of a family's list read per page of resources

Row = dict[str, Any]
LISTED: tuple[tuple[str, Callable[[Row], list[tuple[str, str]]]], ...] = (  # (family, a row's (path, name)s)
    ("ratification", lambda row: [(f"ratifications/{row['topic']}/{record}.md", f"{row['topic']}: {record}.md")
                                  for record in ("manifest", *(("ratified",) if row["status"] == "ratified" else ()))]),
    ("thread", lambda row: [(f"threads/{row['slug']}/thread.md", f"thread {row['slug']}")]),
    ("page", lambda row: [(f"pages/{row['page']}", f"page {row['page']}"),
                          (f"consensus/{row['page']}", f"consensus of {row['page']}")]),
)


class BadCursor(ValueError):
    """A cursor no page of this list gave."""


async def resources_page(client: AthenaeumClient, cursor: str | None) -> types.ListResourcesResult:
    """The resources after ``cursor`` (None: from the first), and the cursor of the next page."""
    family, after = _position(cursor)
    name, resources_of = LISTED[family]
    answer = await client.query(f"{name}.list", limit=PAGE, **({"cursor": after} if after else {}))
    if not answer["ok"]:
        raise LookupError(answer["error"]["message"])
    rows, following = answer["result"]["items"], answer["result"]["next"]
    resources = [types.Resource(uri=SCHEME + path, name=title, mime_type=MARKDOWN)
                 for row in rows for path, title in resources_of(row)]
    if following is not None:
        return types.ListResourcesResult(resources=resources, next_cursor=f"{family}:{following}")
    more = family + 1 < len(LISTED)
    return types.ListResourcesResult(resources=resources, next_cursor=f"{family + 1}:" if more else None)


def _position(cursor: str | None) -> tuple[int, str]:
    """The family a cursor points into, and the cursor of its list read ("" for its start)."""
    if cursor is None:
        return 0, ""
    family, colon, after = cursor.partition(":")
    if not (colon and family.isdigit() and int(family) < len(LISTED)):
        raise BadCursor(f"the cursor {cursor!r} is none this list gave: send the nextCursor of the page before")
    return int(family), after
