"""The fleet's scratchpad for each proposal, ``fleet/quorum/<proposal_id>``, in the shape the
original tools read: ``{proposal, proposer, threshold, acks, nacks, status, opened_at}``, plus
``result`` once the proposal resolves. Derived from the ``proposals`` view."""

from __future__ import annotations

from athenaeum.events import Event
from athenaeum.events.quorum import QuorumEvent
from athenaeum.projectors import quorum_status
from athenaeum.projectors.views import Change, Lookup

VIEW = "fleet/quorum"  # a path: the KV key is the view and the proposal id, joined by "/"
_QUORUM_EVENTS = QuorumEvent.__args__  # type: ignore[attr-defined]
_UNRESOLVED = ("open", "awaiting-coordinator")


def project(event: Event, lookup: Lookup) -> list[Change]:
    if not isinstance(event, _QUORUM_EVENTS):
        return []
    status = lookup(quorum_status.VIEW, event.key)
    if status is None:
        return []
    document = {
        "proposal": status["text"],
        "proposer": status["proposer"],
        "threshold": status["threshold"],
        "acks": status["acks"],
        "nacks": status["nacks"],
        "status": status["status"],
        "opened_at": status["opened_at"],
    }
    if status["status"] not in _UNRESOLVED:
        document["result"] = {key: status[key] for key in ("status", "reason", "decided_by", "closed_at")}
    return [Change(VIEW, event.key, document)]
