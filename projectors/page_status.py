"""What the pending work of pages needs to know: the ``pages`` view, one document per page
(rev, lifecycle, open disputes), plus an index of every page for newly registered agents.

``page show`` computes the full consensus from the page itself, with the clock and the
fleet's activity; this view only follows the events.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.page import (
    DisputeResolved,
    EndorsementDisputed,
    EndorsementRecorded,
    LifecycleChanged,
    PageImported,
    PageInitialized,
    SOFT_CANONICAL_AGING,
    PageRevised,
    PendingAged,
)
from athenaeum.projectors.views import Change, Document, Lookup, per_aggregate

VIEW = "pages"
_to_builtins = msgspec.to_builtins
INDEX = "@index"  # no page path starts with "@"


def project(event: Event, lookup: Lookup) -> list[Change]:
    changes = _per_page(event, lookup)
    if isinstance(event, PageInitialized):
        index = lookup(VIEW, INDEX) or {"pages": []}
        changes.append(Change(VIEW, INDEX, {"pages": sorted({*index["pages"], event.key})}))
    return changes


@singledispatch
def _apply(event: Event, current: Document) -> Document | None:
    return None


_per_page = per_aggregate(VIEW, _apply)  # the cases below register on ``_apply``


def _aging_due(event: Event) -> str:
    return _to_builtins(event.timestamp + SOFT_CANONICAL_AGING)


@_apply.register
def _initialized(event: PageInitialized, current: Document) -> Document:
    return {"page": event.key, "author": event.author, "rev": event.rev, "lifecycle": "working",
            "content_sha256": event.content_sha256, "disputes": [], "aging_due": _aging_due(event), "aged_rev": 0}


@_apply.register
def _(event: PageImported, current: Document) -> Document:
    # As its file stood: its lifecycle, and the disputes its consensus block lists.
    disputes = sorted(s.agent for s in event.standings if s.status == "disputed")
    return _initialized(event, current) | {"lifecycle": event.lifecycle.value, "disputes": disputes}


@_apply.register
def _(event: PageRevised, current: Document) -> Document:
    aging = {"aging_due": _aging_due(event)} if event.significant else {}
    return current | {"rev": event.rev, "content_sha256": event.content_sha256} | aging


@_apply.register
def _(event: PendingAged, current: Document) -> Document:
    return current | {"aged_rev": event.rev}


@_apply.register
def _(event: EndorsementDisputed, current: Document) -> Document:
    return current | {"disputes": sorted({*current["disputes"], event.agent})}


@_apply.register(DisputeResolved)
@_apply.register(EndorsementRecorded)
def _(event: DisputeResolved | EndorsementRecorded, current: Document) -> Document:
    # A human's decision, or the disputing agent's own endorsement, ends its dispute.
    return current | {"disputes": [agent for agent in current["disputes"] if agent != event.agent]}


@_apply.register
def _(event: LifecycleChanged, current: Document) -> Document:
    return current | {"lifecycle": event.to.value}
