"""What projectors produce: documents of a view, by key, replaced whole or removed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

Document = dict[str, Any]
Lookup = Callable[[str, str], Document | None]  # (view, key) -> the current document


class Change(NamedTuple):
    view: str
    key: str
    document: Document | None  # None removes the document


Projector = Callable[[Any, Lookup], list[Change]]


def per_aggregate(view: str, apply: Callable[[Any, Document], Document | None]) -> Projector:
    """A projector keeping one document per aggregate, keyed by its id. ``apply`` gets the
    current document (empty when there is none) and returns the new one, or None to leave it."""

    # A singledispatch function: other families' events are skipped, and an event of a type it
    # registers is given to that case straight (the audit projects every event: a second
    # dispatch through the function would cost as much again).
    handled = getattr(apply, "registry", None)

    def project(event: Any, lookup: Lookup) -> list[Change]:
        case = handled.get(type(event)) if handled is not None else apply
        if case is None:
            return []
        document = case(event, lookup(view, event.key) or {})
        return [] if document is None else [Change(view, event.key, document)]

    return project


def overlaid(pending: dict[tuple[str, str], Change], lookup: Lookup) -> Lookup:
    """``lookup``, with the documents as the ``pending`` changes, by (view, key), leave them."""

    def document(view: str, key: str) -> Document | None:
        change = pending.get((view, key))
        return lookup(view, key) if change is None else change.document

    return document


def project_all(projectors: tuple[Projector, ...], event: Any, lookup: Lookup) -> list[Change]:
    """Every projector's changes for ``event``; later projectors see earlier ones' changes."""
    pending: dict[tuple[str, str], Change] = {}
    overlaid_lookup = overlaid(pending, lookup)
    for projector in projectors:
        for change in projector(event, overlaid_lookup):
            pending[(change.view, change.key)] = change
    return list(pending.values())
