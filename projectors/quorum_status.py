"""Where does proposal P stand: the ``proposals`` view, one document per proposal.

Quorum votes are public: the document lists who ACKed and who NACKed, with reasons.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.quorum import (
    COORDINATOR_VETO,
    CoordinatorOverridden,
    CoordinatorTieBroken,
    ProposalAccepted,
    ProposalAcked,
    ProposalExpired,
    ProposalImported,
    ProposalNacked,
    ProposalOpened,
    ProposalRejected,
    ProposalVetoed,
    TieDeclared,
)
from athenaeum.projectors.imported_history import folded
from athenaeum.projectors.record_text import one_line
from athenaeum.projectors.views import Document, per_aggregate

VIEW = "proposals"
_to_builtins = msgspec.to_builtins


def announcement(document: Document) -> str:
    """The line posted to the fleet channel (PROTOCOLS.md section 2)."""
    pid = document["proposal_id"]
    return (
        f"[QUORUM:{pid}] {one_line(document['text'])}\n"
        f"Threshold: {document['threshold']}/{document['total']}\n"
        f"Deadline: {document['deadline']}\n"
        f"Reply: ACK {pid} or NACK {pid} <reason>"
    )


def _closed(event: Event, current: Document, status: str, reason: str, **more: object) -> Document:
    return current | {"status": status, "reason": reason, "closed_at": _to_builtins(event.timestamp)} | more


@singledispatch
def _apply(event: Event, current: Document) -> Document | None:
    return None


project = per_aggregate(VIEW, _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: ProposalOpened, current: Document) -> Document:
    return {
        "proposal_id": event.key,
        "status": "open",
        "text": event.text,
        "proposer": event.proposer,
        "electorate": list(event.electorate),
        "threshold": event.threshold,
        "total": event.total,
        "deadline": _to_builtins(event.deadline),
        "veto_on_nack": event.veto_on_nack,
        "coordinator": event.coordinator,
        "opened_at": _to_builtins(event.timestamp),
        "acks": [],
        "nacks": [],
        "reason": None,
        "decided_by": None,
        "overridden": False,
        "closed_at": None,
    }


@_apply.register
def _(event: ProposalAcked, current: Document) -> Document:
    return current | {"acks": [*current["acks"], event.agent]}


@_apply.register
def _(event: ProposalNacked, current: Document) -> Document:
    return current | {"nacks": [*current["nacks"], {"agent": event.agent, "reason": event.reason}]}


@_apply.register
def _(event: ProposalAccepted, current: Document) -> Document:
    return _closed(event, current, "accepted", "threshold-reached")


@_apply.register
def _(event: ProposalRejected, current: Document) -> Document:
    return _closed(event, current, "rejected", event.reason)


@_apply.register
def _(event: ProposalVetoed, current: Document) -> Document:
    return _closed(event, current, "vetoed", COORDINATOR_VETO, decided_by=event.by)


@_apply.register
def _(event: ProposalExpired, current: Document) -> Document:
    return _closed(event, current, "expired", "deadline-passed")


@_apply.register
def _(event: TieDeclared, current: Document) -> Document:
    return current | {"status": "awaiting-coordinator", "reason": "tie"}


@_apply.register
def _(event: CoordinatorTieBroken, current: Document) -> Document:
    return _closed(event, current, event.decision.outcome, "coordinator-tiebreak", decided_by=event.actor)


@_apply.register
def _(event: CoordinatorOverridden, current: Document) -> Document:
    return _closed(event, current, event.decision.outcome, event.reason, decided_by=event.actor, overridden=True)


@_apply.register
def _(event: ProposalImported, current: Document) -> Document:
    """As found: its history folded as the proposal's own events would have been."""
    document, imported = folded(event, current, _apply)
    # The result as the file gives it: who decided and why, which the folded outcome cannot know.
    given = {"reason": event.reason, "decided_by": event.decided_by}
    if document["status"] != "open":
        document = document | {key: value for key, value in given.items() if value is not None}
    return document | {"imported": imported}
