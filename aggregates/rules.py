"""What every family's rules share: rule violations with their PROTOCOLS.md codes, the
context a command runs in, and the stamp that gives new events their envelope."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import msgspec

from athenaeum.aggregates.context import Context
from athenaeum.events import Event
from athenaeum.events.commands import Command
from athenaeum.events.constraints import (  # noqa: F401  the rules' limits, where they are declared
    AGENT_SLUG, ARTIFACT_LIMIT, COMMAND_ID_LIMIT, PAGE_PATH_LIMIT, PAGE_SEGMENTS, TEXT_LIMIT,
)
from athenaeum.events.page import beside_the_pages

SLUG = re.compile(AGENT_SLUG)
PAGE_PATH = re.compile(f"^{PAGE_SEGMENTS}$")
# Deadlines are met by the message schedules of the timer service, which count nanoseconds since
# 1970 in 64 bits and so end in April 2262 (a later one fires at once): a margin short of that.
LAST_YEAR = 2200
# Texts whose family's rules allow more than TEXT_LIMIT, and check it themselves.
LONG_TEXTS = frozenset({"artifact", "content", "rawMarkdown", "rulingMarkdown"})

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


class BadSignature(RuleViolation):
    code = "bad_signature"


class KeyRevoked(RuleViolation):
    code = "key_revoked"


class NotHuman(RuleViolation):
    code = "not_human"


class NotOpen(RuleViolation):
    code = "not_open"


class VotingClosed(RuleViolation):
    code = "voting_closed"


class AlreadyVoted(RuleViolation):
    code = "already_voted"


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


def require_bounded_texts(command: msgspec.Struct) -> None:
    """Every text of a command, however deep, within its limit: no field is left unbounded
    because its family's rules do not mention it."""
    for field, text in _texts(command, ""):
        top = field.partition(".")[0]
        if top in LONG_TEXTS:
            continue
        limit = COMMAND_ID_LIMIT if field == "command_id" else TEXT_LIMIT
        if len(text.encode()) > limit:
            raise Invalid(f"{field} is over {limit:,} bytes", field)


def require_command_id(command: Command) -> None:
    """A command id, when given, says something: an empty or blank one would be stored as the
    key every later retry must repeat exactly, and no client can show or type it back."""
    if command.command_id is not None and not command.command_id.strip():
        raise Invalid("command_id: empty or only spaces; leave it out for a new id, or give the one an earlier "
                      "reply carried", "command_id")


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, msgspec.Struct):
        for name, wire_name in zip(value.__struct_fields__, value.__struct_encode_fields__):
            yield from _texts(getattr(value, name), f"{path}.{wire_name}" if path else wire_name)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key, path)
            yield from _texts(item, f"{path}.{key}" if path else str(key))


def require_slug(value: str, field: str) -> None:
    if not SLUG.fullmatch(value):
        raise Invalid(f"{field}: {value!r} is not a kebab slug (^[a-z0-9][a-z0-9-]{{0,62}}$)", field)


def require_page_path(value: str, field: str) -> None:
    """A relative path of plain segments inside ``wiki/`` (``canon/rules.md``): no ``..``, no
    leading ``/``, and not where the wiki keeps its threads or its log."""
    if len(value) > PAGE_PATH_LIMIT or not PAGE_PATH.fullmatch(value):
        raise Invalid(f"{field}: {value!r} is not a page path (segments of letters, digits, '.', '_', '-')", field)
    if (taken := beside_the_pages(value)) is not None:
        raise Invalid(f"{field}: {value!r} is where the wiki keeps {taken}, not a page", field)


DURATION = re.compile(r"([0-9]+)([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
LONGEST = timedelta(days=100 * 366)  # a window, or a clock's shift, of at most a century


def duration(text: str, field: str, zero: bool = False) -> timedelta:
    """``72h``, ``14d``, ``30m`` or ``45s`` (PROTOCOLS.md's conventions), above zero (or zero
    too, with ``zero``), and at most a century."""
    match = DURATION.fullmatch(text)
    amount = int(match.group(1)) if match else -1
    if amount < 0 or (amount == 0 and not zero):
        raise Invalid(f"{field}: {text!r} is not a duration{'' if zero else ' above zero'}, like 72h, 14d, 30m or 45s",
                      field)
    if amount > LONGEST.total_seconds():  # in any unit: before timedelta can overflow
        raise Invalid(f"{field}: {text!r} is longer than a century", field)
    length = timedelta(**{_UNITS[match.group(2)]: amount})  # type: ignore[union-attr]
    if length > LONGEST:
        raise Invalid(f"{field}: {text!r} is longer than a century", field)
    return length


def deadline_of(at: datetime | None, within: str | None, default: timedelta, now: datetime, fields: tuple[str, str]) -> datetime:
    """A deadline given as a time (``fields[0]``), or as a duration (``fields[1]``) from the
    service's clock, so that a client's own clock does not matter; else ``default`` from now."""
    if at is not None and within is not None:
        raise Invalid(f"give {fields[0]} or {fields[1]}, not both", fields[1])
    if within is not None:
        return now + duration(within, fields[1])
    return at if at is not None else now + default


def ceil_second(moment: datetime) -> datetime:
    """``moment`` rounded up to a whole second: schedules keep whole seconds, and a deadline
    rounded up never fires before its time."""
    whole = moment.replace(microsecond=0)
    return whole + timedelta(seconds=1) if moment.microsecond else whole


def require_deadline(moment: datetime, context: Context, field: str) -> datetime:
    """A future time, in UTC, and far enough from the calendar's end to be scheduled."""
    if moment <= context.now:
        raise Invalid(f"{field} {moment.isoformat()} is not in the future", field)
    return require_schedulable(moment, field)


def require_schedulable(moment: datetime, field: str) -> datetime:
    """``moment`` in UTC, if a timer can meet it: before LAST_YEAR."""
    utc = moment.astimezone(timezone.utc)
    if utc.year >= LAST_YEAR:
        raise Invalid(f"{field} {moment.isoformat()} is too far in the future: a deadline must fall before "
                      f"{LAST_YEAR} UTC, when the timer can still meet it", field)
    return utc


def require_text(value: str, field: str, limit: int = TEXT_LIMIT) -> None:
    if not value.strip():
        raise Invalid(f"{field} must not be empty", field)
    if len(value) > limit // 4 and len(value.encode()) > limit:  # encode only what might be over
        raise Invalid(f"{field} is over its limit of {limit} bytes", field)


def require_electorate(agents: Sequence[str], field: str) -> None:
    """A non-empty list of distinct agent slugs: a roster, an electorate."""
    if not agents:
        raise Invalid(f"{field} must name at least one agent", field)
    for agent in agents:
        require_slug(agent, field)
    if len(set(agents)) != len(agents):
        raise Invalid(f"{field} names an agent twice", field)
