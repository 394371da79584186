"""What must agent X do: the ``pending`` view, one document per agent, plus one for the
human principals (``@humans``), since who is human is the deployment's to say, not history's.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

import msgspec

from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    ArtifactFrozen,
    ArtifactRatified,
    AtomSplit,
    HumanChoice,
    HumanDecisionRecorded,
    RatificationCanceled,
    RatificationRejected,
    VoteCast,
    VotesTallied,
)
from athenaeum.projectors import ratification_status
from athenaeum.projectors.views import Change, Lookup

VIEW = "pending"
HUMANS = "@humans"
Item = dict[str, Any]


def project(event: Event, lookup: Lookup) -> list[Change]:
    changes: dict[str, list[Item]] = {}

    def items(agent: str) -> list[Item]:
        if agent not in changes:
            changes[agent] = list((lookup(VIEW, agent) or {}).get("items", []))
        return changes[agent]

    _apply(event, items, lookup)
    return [Change(VIEW, agent, {"agent": agent, "items": sorted(found, key=_order)}) for agent, found in changes.items()]


def _order(item: Item) -> tuple[str, str, str]:
    return item["kind"], item["id"], item["action"]


def _add(items: list[Item], topic: str, action: str, deadline: str | None = None) -> None:
    _remove(items, topic, action)
    items.append({"kind": "ratification", "id": topic, "action": action, "deadline": deadline})


def _remove(items: list[Item], topic: str, action: str | None = None) -> None:
    items[:] = [i for i in items if not (i["id"] == topic and i["kind"] == "ratification" and action in (None, i["action"]))]


def _roster(lookup: Lookup, topic: str) -> list[str]:
    return (lookup(ratification_status.VIEW, topic) or {}).get("roster", [])


@singledispatch
def _apply(event: Event, items: Any, lookup: Lookup) -> None:
    pass


@_apply.register
def _(event: ArtifactFrozen, items: Any, lookup: Lookup) -> None:
    for agent in event.roster:
        _add(items(agent), event.originator_id, "vote", msgspec.to_builtins(event.expires_at))


@_apply.register
def _(event: VoteCast, items: Any, lookup: Lookup) -> None:
    _remove(items(event.agent), event.originator_id, "vote")


@_apply.register
def _(event: VotesTallied, items: Any, lookup: Lookup) -> None:
    for agent in event.abstentions:
        _remove(items(agent), event.originator_id, "vote")


@_apply.register
def _(event: ArtifactDecomposed, items: Any, lookup: Lookup) -> None:
    _add(items(HUMANS), event.originator_id, "decide")


@_apply.register
def _(event: HumanDecisionRecorded, items: Any, lookup: Lookup) -> None:
    _remove(items(HUMANS), event.originator_id, "decide")
    if event.decision is HumanChoice.DECOMPOSE_FURTHER:
        tally = (lookup(ratification_status.VIEW, event.originator_id) or {}).get("tally", {})
        if tally.get("merge_writer"):
            _add(items(tally["merge_writer"]), event.originator_id, "split")


@_apply.register
def _(event: AtomSplit, items: Any, lookup: Lookup) -> None:
    # The status view, already updated for this event, says whether more atoms wait.
    if not (lookup(ratification_status.VIEW, event.originator_id) or {}).get("awaiting_split"):
        _remove(items(event.actor), event.originator_id, "split")
        _add(items(HUMANS), event.originator_id, "decide")


@_apply.register(ArtifactRatified)
@_apply.register(RatificationRejected)
@_apply.register(RatificationCanceled)
def _(event: Event, items: Any, lookup: Lookup) -> None:
    for agent in [*_roster(lookup, event.originator_id), HUMANS]:
        _remove(items(agent), event.originator_id)
