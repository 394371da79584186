"""Lists of each family's records, as people page through them: filtered by status, by who is
involved (``mine``) or by whom they wait on (``awaiting``), a page at a time in key order with
a cursor to the next. Each row is a summary; ``show`` gives the whole record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from athenaeum.projectors import (
    fleet_activity,
    page_status,
    pending_work,
    quorum_status,
    ratification_status,
    thread_status,
)
from athenaeum.services.views.read_models import ReadModelStore

Document = dict[str, Any]


@dataclass(frozen=True)
class Listing:
    view: str
    kind: str  # of its items in the ``pending`` view
    columns: tuple[str, ...]  # what a row shows, in order
    involved: Callable[[Document], Iterable[str | None]]  # who takes part in a record
    status: Callable[[Document], str] = lambda document: document.get("status", "")

    def row(self, document: Document) -> Document:
        return {column: _shown(document.get(column)) for column in self.columns}


def _shown(value: Any) -> Any:
    return len(value) if isinstance(value, list) else value  # a count, in a row: show has the list


def _agent_status(document: Document) -> str:
    if document.get("revoked_at"):
        return "revoked"  # whether human or not: it can never act again
    if document["human"]:
        return "human"
    return "dormant" if document.get("dormant_since") and document.get("returned_at") is None else "active"


LISTINGS = {
    "ratification": Listing(
        ratification_status.VIEW, "ratification",
        ("topic", "status", "mode", "initiator", "roster", "voted", "expires_at", "artifact_sha256"),
        lambda d: [d.get("initiator"), *d.get("roster", [])]),
    "quorum": Listing(
        quorum_status.VIEW, "quorum",
        ("proposal_id", "status", "proposer", "threshold", "total", "acks", "nacks", "deadline", "text"),
        lambda d: [d.get("proposer"), d.get("coordinator"), *d.get("electorate", [])]),
    "thread": Listing(
        thread_status.VIEW, "thread",
        ("slug", "status", "opened_by", "participants", "entries", "suggested_role", "last_updated"),
        lambda d: [d.get("opened_by"), *d.get("participants", [])]),
    "page": Listing(
        page_status.VIEW, "page", ("page", "rev", "lifecycle", "author", "disputes"),
        lambda d: [d.get("author")], lambda d: d.get("lifecycle", "")),
    "agent": Listing(
        fleet_activity.VIEW, "agent", ("name", "human", "registered_at", "last_active", "dormant_since", "revoked_at"),
        lambda d: [d.get("name")], _agent_status),
}


def listed(store: ReadModelStore, family: str, status: str | None, mine: str | None, awaiting: str | None,
           limit: int, cursor: str | None) -> Document:
    """Up to ``limit`` rows after ``cursor``, and the cursor of the next page (None: the last)."""
    listing = LISTINGS[family]
    waiting = None
    if awaiting is not None:
        items = (store.get(pending_work.VIEW, awaiting) or {}).get("items", [])
        waiting = {item["id"] for item in items if item["kind"] == listing.kind}
    rows: list[Document] = []
    last = None  # the key of the last row taken: where the next page starts
    documents = store.documents(listing.view)
    for key in sorted(documents):
        document = documents[key]
        if key == page_status.INDEX and listing.view == page_status.VIEW:
            continue  # the pages' index, not a page
        if cursor is not None and key <= cursor:
            continue
        if status is not None and listing.status(document) != status:
            continue
        if mine is not None and mine not in listing.involved(document):
            continue
        if waiting is not None and key not in waiting:
            continue
        if len(rows) == limit:
            return {"items": rows, "next": last}
        rows.append(listing.row(document))
        last = key
    return {"items": rows, "next": None}
