"""The fleet roster (PROTOCOLS.md conventions): registered agents and human principals.

Registration is by a human, or by anyone while the roster is empty, so a fleet can start.
"""

from __future__ import annotations

import msgspec

from athenaeum.aggregates.rules import AlreadyExists, Context, NotHuman, Stamp, require_slug
from athenaeum.aggregates.state import AggregateState
from athenaeum.events import Event
from athenaeum.events.fleet import FLEET_ID, AgentRegistered


class Fleet(AggregateState, tag="Fleet"):
    agents: tuple[str, ...] = ()
    humans: tuple[str, ...] = ()


def evolve(state: Fleet | None, event: Event) -> Fleet | None:
    if not isinstance(event, AgentRegistered):
        return state
    state = state or Fleet(id=event.originator_id, version=event.originator_version)
    if event.human:
        return msgspec.structs.replace(state, humans=(*state.humans, event.name))
    return msgspec.structs.replace(state, agents=(*state.agents, event.name))


def register(
    state: Fleet | None, context: Context, *, name: str, human: bool = False, bootstrap: bool = True
) -> list[Event]:
    """``bootstrap``: whether anyone may register on an empty roster (not when the deployment
    already names its humans: they register the fleet)."""
    require_slug(name, "name")
    registered = state.agents + state.humans if state else ()
    if name in registered:
        raise AlreadyExists(f"{name!r} is already registered", "name")
    if (registered or not bootstrap) and not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; a human registers agents", "actor")
    version = state.version if state else 0
    return [Stamp(FLEET_ID, version, context)(AgentRegistered, name=name, human=human, by=context.actor)]
