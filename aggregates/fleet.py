"""The fleet roster (PROTOCOLS.md conventions): registered principals, agents and humans, each
bound to the Ed25519 key its commands are signed with.

Registration is by a human, or by anyone while the roster is empty, so a fleet can start;
unless the deployment names its humans: then they register the fleet. A key is rotated by its
principal or a human, and revoked by either; a key binds one principal only. HTTP bearer
tokens are issued and revoked the same way, the roster keeping only their SHA-256.
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from athenaeum.aggregates.family import Family
from athenaeum.aggregates.rules import AlreadyExists, Context, Invalid, KeyRevoked, NotFound, NotHuman, Stamp, require_slug
from athenaeum.aggregates.state import AggregateState, fold
from athenaeum.events import Event, constraints
from athenaeum.events.fleet import (
    DORMANT_AFTER, FLEET_ID, AgentRegistered, AgentRevoked, AgentWentDormant, KeyRotated, TokenIssued, TokenRevoked,
)
from athenaeum.events.fleet_commands import (
    AgeAgent, FleetCommand, IssueToken, RegisterAgent, RevokeAgent, RevokeToken, RotateKey,
)

PUBLIC_KEY = re.compile(constraints.PUBLIC_KEY)  # a user's public nkey (its checksum is the edge's to check)
TOKEN_SHA256 = re.compile(constraints.SHA256_HEX)


class Fleet(AggregateState, tag="Fleet"):
    agents: tuple[str, ...] = ()
    humans: tuple[str, ...] = ()
    dormant: dict[str, datetime] = {}  # agent -> the last activity it went dormant after
    keys: dict[str, str] = {}  # principal -> the public key its commands are signed with now
    revoked: tuple[str, ...] = ()  # principals whose key was revoked
    tokens: dict[str, str] = {}  # an HTTP bearer token's SHA-256 -> the principal it proves

    def key_of(self, name: str) -> str | None:
        return None if name in self.revoked else self.keys.get(name)

    def holder_of(self, public_key: str) -> str | None:
        """The principal a key binds, if any."""
        return next((name for name, key in self.keys.items() if key == public_key), None)


def evolve(state: Fleet | None, event: Event) -> Fleet | None:
    match event:
        case AgentRegistered():
            state = state or Fleet(id=event.originator_id, version=event.originator_version)
            keys = state.keys | {event.name: event.public_key} if event.public_key else state.keys
            if event.human:
                return msgspec.structs.replace(state, humans=(*state.humans, event.name), keys=keys)
            return msgspec.structs.replace(state, agents=(*state.agents, event.name), keys=keys)
        case AgentWentDormant() if state is not None:
            return msgspec.structs.replace(state, dormant=state.dormant | {event.name: event.idle_since})
        case KeyRotated() if state is not None:
            return msgspec.structs.replace(state, keys=state.keys | {event.name: event.public_key})
        case AgentRevoked() if state is not None:
            return msgspec.structs.replace(state, revoked=(*state.revoked, event.name))
        case TokenIssued() if state is not None:
            return msgspec.structs.replace(state, tokens=state.tokens | {event.token_sha256: event.name})
        case TokenRevoked() if state is not None:
            return msgspec.structs.replace(
                state, tokens={sha: name for sha, name in state.tokens.items() if sha != event.token_sha256})
    return state


def decide(state: Fleet | None, command: FleetCommand, context: Context) -> list[Event]:
    match command:
        case RegisterAgent():
            return register(state, command, context)
        case RotateKey():
            return rotate_key(state, command, context)
        case RevokeAgent():
            return revoke(state, command, context)
        case IssueToken():
            return issue_token(state, command, context)
        case RevokeToken():
            return revoke_token(state, command, context)
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
    if command.public_key is not None:
        _require_new_key(state, command.public_key)
    version = state.version if state else 0
    return [Stamp(FLEET_ID, version, context)(AgentRegistered, name=name, human=command.human, by=context.actor,
                                              public_key=command.public_key)]


def rotate_key(state: Fleet | None, command: RotateKey, context: Context) -> list[Event]:
    state = _registered(state, command.name, context, "rotate the key of")
    _require_new_key(state, command.public_key)
    return [Stamp(FLEET_ID, state.version, context)(KeyRotated, name=command.name, public_key=command.public_key,
                                                    previous_key=state.keys.get(command.name), by=context.actor)]


def revoke(state: Fleet | None, command: RevokeAgent, context: Context) -> list[Event]:
    state = _registered(state, command.name, context, "revoke the key of")
    return [Stamp(FLEET_ID, state.version, context)(AgentRevoked, name=command.name, public_key=state.keys.get(command.name),
                                                    reason=command.reason, by=context.actor)]


def issue_token(state: Fleet | None, command: IssueToken, context: Context) -> list[Event]:
    """Tokens are for agents: a human's commands are signed with the human's key."""
    state = _registered(state, command.name, context, "issue a token for")
    if command.name in state.humans:
        raise Invalid(f"{command.name} is human: a human signs with the human's key, and takes no token", "name")
    if not TOKEN_SHA256.fullmatch(command.token_sha256):
        raise Invalid("a token's SHA-256 is 64 lowercase hex digits", "token_sha256")
    if command.token_sha256 in state.tokens:
        raise AlreadyExists("this token is issued already", "token_sha256")
    return [Stamp(FLEET_ID, state.version, context)(TokenIssued, name=command.name, token_sha256=command.token_sha256,
                                                    by=context.actor)]


def revoke_token(state: Fleet | None, command: RevokeToken, context: Context) -> list[Event]:
    state = _registered(state, command.name, context, "revoke a token of")
    if state.tokens.get(command.token_sha256) != command.name:
        raise NotFound(f"no token of {command.name!r} has this SHA-256", "token_sha256")
    return [Stamp(FLEET_ID, state.version, context)(TokenRevoked, name=command.name, token_sha256=command.token_sha256,
                                                    by=context.actor)]


def _registered(state: Fleet | None, name: str, context: Context, verb: str) -> Fleet:
    """The roster, when ``name`` is a principal whose key its sender (itself or a human) may change."""
    if state is None or name not in state.agents + state.humans:
        raise NotFound(f"no registered principal {name!r}", "name")
    if name in state.revoked:
        raise KeyRevoked(f"{name}'s key is revoked already", "name")
    if context.actor != name and not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is neither {name!r} nor a human principal: only they may {verb} {name}",
                       "actor")
    return state


def _require_new_key(state: Fleet | None, public_key: str) -> None:
    if not PUBLIC_KEY.fullmatch(public_key):
        raise Invalid(f"{public_key!r} is not a user's public nkey (U and 55 base32 letters)", "public_key")
    holder = state.holder_of(public_key) if state is not None else None
    if holder is not None:
        raise AlreadyExists(f"this key is bound to {holder!r} already: a key binds one principal", "public_key")


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
