"""Who is in the fleet and when each was last active: the ``agents`` view, one document per
registered principal, and the ``fleet`` roster document listing them all.

Every accepted event counts as its actor's activity; an agent acting again after being
dormant is marked ``returned_at``, so its older endorsements read as stale. A principal whose
key is revoked is marked ``revoked_at``: it can never act again, so no consensus waits on it.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from athenaeum.events import Event
from athenaeum.events.fleet import DORMANT_AFTER, AgentRegistered, AgentRevoked, AgentWentDormant
from athenaeum.projectors.views import Change, Lookup

VIEW = "agents"
ROSTER_VIEW, ROSTER_KEY = "fleet", "roster"
_to_builtins = msgspec.to_builtins


def project(event: Event, lookup: Lookup) -> list[Change]:
    changes: list[Change] = []
    if isinstance(event, AgentRegistered):
        roster = lookup(ROSTER_VIEW, ROSTER_KEY) or {"agents": [], "humans": []}
        group = "humans" if event.human else "agents"
        now = _to_builtins(event.timestamp)
        agent = {"name": event.name, "human": event.human, "registered_at": now, "registered_by": event.by,
                 "last_active": now, "returned_at": None, "dormant_since": None}
        changes += [Change(ROSTER_VIEW, ROSTER_KEY, roster | {group: sorted({*roster[group], event.name})}),
                    Change(VIEW, event.name, agent)]
    if isinstance(event, AgentWentDormant) and (agent := lookup(VIEW, event.name)) is not None:
        # Dormant after this last activity; acting again makes last_active differ.
        changes.append(Change(VIEW, event.name, agent | {"dormant_since": _to_builtins(event.idle_since)}))
    if isinstance(event, AgentRevoked) and (agent := lookup(VIEW, event.name)) is not None:
        changes.append(Change(VIEW, event.name, agent | {"revoked_at": _to_builtins(event.timestamp)}))
    registered_self = isinstance(event, AgentRegistered) and event.name == event.actor
    # The actor's document as the changes above left it (a principal revoking its own key, say).
    actor = None if registered_self else next(
        (change.document for change in reversed(changes) if change.view == VIEW and change.key == event.actor),
        lookup(VIEW, event.actor))
    if actor is not None:
        changes.append(_active(actor, event))
    return changes


def in_consensus(agent: dict) -> bool:
    """Whether the agent document is of a member whose standing a page's consensus weighs: an
    agent, not a human principal, whose key is not revoked."""
    return not agent["human"] and not agent.get("revoked_at")


def _active(agent: dict, event: Event) -> Change:
    last = msgspec.convert(agent["last_active"], datetime)
    returned = _to_builtins(event.timestamp) if event.timestamp - last >= DORMANT_AFTER else agent["returned_at"]
    return Change(VIEW, agent["name"], agent | {"last_active": _to_builtins(event.timestamp), "returned_at": returned})
