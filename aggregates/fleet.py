"""The fleet roster (PROTOCOLS.md conventions): registered agents and human principals.

Registration is by a human, or by anyone while the roster is empty, so a fleet can start;
unless the deployment names its humans: then they register the fleet.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from athenaeum.aggregates.family import Family
from athenaeum.aggregates.rules import AlreadyExists, Context, NotFound, NotHuman, Stamp, require_slug
from athenaeum.aggregates.state import AggregateState, fold
from athenaeum.events import Event
from athenaeum.events.fleet import DORMANT_AFTER, FLEET_ID, AgentRegistered, AgentWentDormant
from athenaeum.events.page_commands import AgeAgent, FleetCommand, RegisterAgent


class Fleet(AggregateState, tag="Fleet"):
    agents: tuple[str, ...] = ()
    humans: tuple[str, ...] = ()
    dormant: dict[str, datetime] = {}  # agent -> the last activity it went dormant after


def evolve(state: Fleet | None, event: Event) -> Fleet | None:
    if isinstance(event, AgentWentDormant) and state is not None:
        return msgspec.structs.replace(state, dormant=state.dormant | {event.name: event.idle_since})
    if not isinstance(event, AgentRegistered):
        return state
    state = state or Fleet(id=event.originator_id, version=event.originator_version)
    if event.human:
        return msgspec.structs.replace(state, humans=(*state.humans, event.name))
    return msgspec.structs.replace(state, agents=(*state.agents, event.name))


def decide(state: Fleet | None, command: FleetCommand, context: Context) -> list[Event]:
    match command:
        case RegisterAgent():
            return register(state, command, context)
        case AgeAgent():
            return mark_dormant(state, command, context)
    raise TypeError(f"not a fleet command: {command!r}")


def register(state: Fleet | None, command: RegisterAgent, context: Context) -> list[Event]:
    name = command.name
    require_slug(name, "name")
    registered = state.agents + state.humans if state else ()
    if name in registered:
        raise AlreadyExists(f"{name!r} is already registered", "name")
    if (registered or context.humans_configured) and not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; a human registers agents", "actor")
    version = state.version if state else 0
    return [Stamp(FLEET_ID, version, context)(AgentRegistered, name=name, human=command.human, by=context.actor)]


def mark_dormant(state: Fleet | None, command: AgeAgent, context: Context) -> list[Event]:
    """The timer's command: idempotent, and nothing unless the agent has been idle long enough
    by the fleet's activity in the context."""
    name = command.name
    member = next((m for m in context.members if m.name == name), None)
    if state is None or member is None:
        raise NotFound(f"no registered agent {name!r}", "name")
    if context.now - member.last_active < DORMANT_AFTER or state.dormant.get(name) == member.last_active:
        return []
    return [Stamp(FLEET_ID, state.version, context)(AgentWentDormant, name=name, idle_since=member.last_active,
                                                     as_of_position=context.as_of_position)]


FAMILY = Family("fleet", lambda command: FLEET_ID, fold(evolve), decide)
