"""Ratification items of the ``pending`` view: vote while open, decide (humans), split."""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    ArtifactFrozen,
    ArtifactRatified,
    AtomSplit,
    HumanChoice,
    HumanDecisionRecorded,
    ImportedStatus,
    RatificationCanceled,
    RatificationImported,
    RatificationRejected,
    VoteCast,
    VotesTallied,
)
from athenaeum.projectors import ratification_status
from athenaeum.projectors.pending_work import HUMANS, Pending, pending_projector


def _status(pending: Pending, topic: str) -> dict:
    return pending.lookup(ratification_status.VIEW, topic) or {}


@singledispatch
def _apply(event: Event, pending: Pending) -> None:
    pass


project = pending_projector("ratification", _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: ArtifactFrozen, pending: Pending) -> None:
    for agent in event.roster:
        pending.add(agent, event.key, "vote", msgspec.to_builtins(event.expires_at))


@_apply.register
def _(event: RatificationImported, pending: Pending) -> None:
    """What an imported record still waits for: the votes not yet counted, or the human."""
    if event.status is ImportedStatus.OPEN:
        voted = {vote.agent for vote in event.counted_votes()}
        for agent in event.roster:
            if agent not in voted:
                pending.add(agent, event.key, "vote", msgspec.to_builtins(event.expires_at))
    elif event.status is ImportedStatus.PENDING_HUMAN:
        pending.add(HUMANS, event.key, "decide")


@_apply.register
def _(event: VoteCast, pending: Pending) -> None:
    pending.remove(event.agent, event.key, "vote")


@_apply.register
def _(event: VotesTallied, pending: Pending) -> None:
    for agent in event.abstentions:
        pending.remove(agent, event.key, "vote")


@_apply.register
def _(event: ArtifactDecomposed, pending: Pending) -> None:
    pending.add(HUMANS, event.key, "decide")


@_apply.register
def _(event: HumanDecisionRecorded, pending: Pending) -> None:
    pending.remove(HUMANS, event.key, "decide")
    if event.decision is HumanChoice.DECOMPOSE_FURTHER:
        merge_writer = _status(pending, event.key).get("tally", {}).get("merge_writer")
        if merge_writer:
            pending.add(merge_writer, event.key, "split")


@_apply.register
def _(event: AtomSplit, pending: Pending) -> None:
    # The status view, already updated for this event, says whether more atoms wait.
    if not _status(pending, event.key).get("awaiting_split"):
        pending.remove(event.actor, event.key, "split")
        pending.add(HUMANS, event.key, "decide")


@_apply.register(ArtifactRatified)
@_apply.register(RatificationRejected)
@_apply.register(RatificationCanceled)
def _(event: Event, pending: Pending) -> None:
    for agent in [*_status(pending, event.key).get("roster", []), HUMANS]:
        pending.remove(agent, event.key)
