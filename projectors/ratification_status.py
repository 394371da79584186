"""Where does ratification T stand: the ``ratifications`` view, one document per topic.

Blind voting: while a ratification is open the document names who has voted, never how.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    ArtifactFrozen,
    ArtifactRatified,
    AtomSplit,
    Decision,
    HumanDecisionRecorded,
    ImportedStatus,
    RatificationCanceled,
    RatificationImported,
    RatificationRejected,
    VoteCast,
    VotesTallied,
    atoms_of,
)
from athenaeum.projectors.views import Document, per_aggregate

VIEW = "ratifications"
_to_builtins = msgspec.to_builtins


@singledispatch
def _apply(event: Event, current: Document) -> Document | None:
    return None


project = per_aggregate(VIEW, _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: ArtifactFrozen, current: Document) -> Document:
    return {
        "topic": event.originator_id,
        "status": "open",
        "mode": event.mode.value,
        "initiator": event.initiator,
        "roster": list(event.roster),
        "artifact_sha256": event.artifact_sha256,
        "expires_at": _to_builtins(event.expires_at),
        "supersedes": event.supersedes,
        "voted": [],
    }


@_apply.register
def _(event: RatificationImported, current: Document) -> Document:
    """As found: open ones name who has voted (blind still); the others show their tally."""
    frozen = _apply.dispatch(ArtifactFrozen)(event, current)
    counted = event.counted_votes()
    voters = sorted(vote.agent for vote in counted)
    imported = {"source": event.source, "content_sha256": event.content_sha256, "findings": len(event.findings)}
    document = frozen | {"status": event.status.value, "voted": voters, "imported": imported}
    if event.status is ImportedStatus.OPEN:
        return document
    tally = {
        "signs": sorted(v.agent for v in counted if v.decision is Decision.SIGN),
        "dissents": sorted(v.agent for v in counted if v.decision is Decision.DISSENT),
        "abstentions": sorted(agent for agent in event.roster if agent not in voters),
        "merge_writer": voters[0] if voters else None,
    }
    document |= {"tally": tally}
    if event.status is ImportedStatus.PENDING_HUMAN:
        document |= {"atoms": list(_to_builtins(atoms_of(counted)))}
    return document


@_apply.register
def _(event: VoteCast, current: Document) -> Document:
    return current | {"voted": sorted({*current["voted"], event.agent})}


@_apply.register
def _(event: VotesTallied, current: Document) -> Document:
    tally = {
        "signs": list(event.signs),
        "dissents": list(event.dissents),
        "abstentions": list(event.abstentions),
        "merge_writer": event.merge_writer,
    }
    return current | {"tally": tally}


@_apply.register
def _(event: ArtifactDecomposed, current: Document) -> Document:
    return current | {"status": "pending-human", "atoms": list(_to_builtins(event.atoms))}


@_apply.register
def _(event: HumanDecisionRecorded, current: Document) -> Document:
    return current | {"decision": event.decision.value, "decided_by": event.decided_by, "awaiting_split": list(event.atoms)}


@_apply.register
def _(event: AtomSplit, current: Document) -> Document:
    atoms = [atom for atom in current.get("atoms", []) if atom["id"] != event.atom]
    awaiting = [atom for atom in current.get("awaiting_split", []) if atom != event.atom]
    return current | {"atoms": atoms + list(_to_builtins(event.into)), "awaiting_split": awaiting}


@_apply.register
def _(event: ArtifactRatified, current: Document) -> Document:
    return current | {"status": "ratified", "path": event.path}


@_apply.register
def _(event: RatificationRejected, current: Document) -> Document:
    return current | {"status": "rejected", "reason": event.reason}


@_apply.register
def _(event: RatificationCanceled, current: Document) -> Document:
    return current | {"status": "canceled", "canceled_by": event.by}
