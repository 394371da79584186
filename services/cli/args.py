"""Argument parsing the CLI's families share: usage errors, lists, times and durations."""

from __future__ import annotations

import argparse
import ipaddress
from datetime import datetime, timedelta, timezone
from pathlib import Path

from athenaeum.aggregates import rules
from athenaeum.aggregates.rules import RuleViolation
from athenaeum.services.identity.keys import KeyProblem, verifier


class UsageError(ValueError):
    """Arguments that cannot become a command; exit code 2."""


def read_text(path: Path, option: str) -> str:
    """A file's exact text: no newline translation."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{option}: cannot read {path}: {getattr(error, 'strerror', None) or error}") from error


def position(text: str) -> int:
    """A ledger position, as an option takes it: a whole number from 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a position: positions count from 1")
    return int(text)


def agents(text: str) -> list[str]:
    """``a,b,c`` as a list, blanks dropped."""
    return [agent.strip() for agent in text.split(",") if agent.strip()]


def agent(name: str, option: str) -> str:
    """An agent's name, which is a slug."""
    if not rules.SLUG.fullmatch(name):
        raise UsageError(f"{option}: {name!r} is not an agent's name, a slug (lowercase letters, digits, hyphens)")
    return name


def addresses(text: str, option: str) -> frozenset[str]:
    """``a,b`` of IP addresses, as the HTTP server names its clients'."""
    try:
        return frozenset(str(ipaddress.ip_address(address)) for address in agents(text))
    except ValueError as error:
        raise UsageError(f"{option}: {error} (IP addresses, comma-separated)") from None


def principals(text: str, option: str) -> dict[str, str | None]:
    """``a,b=U...``: principals' names, each with the public key to bind it to, if given."""
    named: dict[str, str | None] = {}
    for item in agents(text):
        name, _, key = item.partition("=")
        if key:
            try:
                verifier(key.strip())
            except KeyProblem as problem:
                raise UsageError(f"{option}: {name}: {problem}") from None
        named[agent(name.strip(), option)] = key.strip() or None
    return named


def slugs(text: str, option: str) -> frozenset[str]:
    """``a,b,c`` of agents' names, blanks dropped."""
    return frozenset(agent(name, option) for name in agents(text))


def within(text: str | None, option: str) -> str | None:
    """A duration checked here and sent as written: the service counts it from its own clock."""
    if text is not None:
        try:
            rules.duration(text, option)
        except RuleViolation as error:
            raise UsageError(str(error)) from None
    return text


def duration(text: str, option: str) -> timedelta:
    """``72h``, ``14d``, ``30m``, ``45s``, zero, or negative (``-61d``): a clock's shift."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text)
    try:
        return sign * rules.duration(body, option, zero=True)
    except RuleViolation as error:
        raise UsageError(str(error)) from None


def moment(at: str | None, option: str) -> datetime | None:
    """An ISO 8601 time (UTC when it names no zone), or None when not given."""
    if not at:
        return None
    try:
        when = datetime.fromisoformat(at)
    except ValueError as error:
        raise UsageError(f"{option}: {at!r} is not an ISO 8601 time") from error
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
