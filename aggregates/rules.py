"""What every family's rules share: rule violations with their PROTOCOLS.md codes, the
context a command runs in, and the stamp that gives new events their envelope."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from athenaeum.events import Event

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")

E = TypeVar("E", bound=Event)


class RuleViolation(Exception):
    """A command broke a rule; nothing is appended. ``code`` is the PROTOCOLS.md error code."""

    code = "invalid"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Invalid(RuleViolation):
    code = "invalid"


class NotFound(RuleViolation):
    code = "not_found"


class AlreadyExists(RuleViolation):
    code = "already_exists"


class ActorMismatch(RuleViolation):
    code = "actor_mismatch"


class NotHuman(RuleViolation):
    code = "not_human"


@dataclass(frozen=True)
class Context:
    """Who sends the command, when the service received it, and its idempotency key."""

    actor: str
    now: datetime
    command_id: str
    actor_is_human: bool = False


class Stamp:
    """Gives each new event of one aggregate its envelope and the next version."""

    def __init__(self, aggregate_id: str, last_version: int, context: Context) -> None:
        self.aggregate_id = aggregate_id
        self.version = last_version
        self.context = context

    def __call__(self, cls: type[E], **fields: Any) -> E:
        self.version += 1
        return cls(
            originator_id=self.aggregate_id,
            originator_version=self.version,
            timestamp=self.context.now,
            actor=self.context.actor,
            command_id=self.context.command_id,
            **fields,
        )


def require_slug(value: str, field: str) -> None:
    if not SLUG.match(value):
        raise Invalid(f"{field}: {value!r} is not a kebab slug (^[a-z0-9][a-z0-9-]{{0,62}}$)", field)


def require_text(value: str, field: str) -> None:
    if not value.strip():
        raise Invalid(f"{field} must not be empty", field)
