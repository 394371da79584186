"""Argument parsing the CLI's families share: usage errors, lists, times and durations."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from athenaeum.services.deadlines import ceil_second

_DURATION = re.compile(r"^(\d+)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


class UsageError(ValueError):
    """Arguments that cannot become a command; exit code 2."""


def read_text(path: Path, option: str) -> str:
    """A file's exact text: no newline translation."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{option}: cannot read {path}: {getattr(error, 'strerror', None) or error}") from error


def agents(text: str) -> list[str]:
    """``a,b,c`` as a list, blanks dropped."""
    return [agent.strip() for agent in text.split(",") if agent.strip()]


def duration(text: str, option: str) -> timedelta:
    """``72h``, ``14d``, ``30m``, ``5s``, optionally negative (``-61d``)."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text)
    match = _DURATION.match(body)
    if match is None:
        raise UsageError(f"{option}: {text!r} is not a duration like 72h, 14d, 30m or -61d")
    return sign * timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def moment(after: str | None, at: str | None, after_option: str, at_option: str) -> datetime | None:
    """A time given as a duration from now (``72h``, ``14d``, ``30m``) or as ISO 8601 (UTC
    when it names no zone); None when neither is given."""
    if at:
        try:
            when = datetime.fromisoformat(at)
        except ValueError as error:
            raise UsageError(f"{at_option}: {at!r} is not an ISO 8601 time") from error
        return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    if after:
        match = _DURATION.match(after)
        if match is None or int(match.group(1)) == 0:
            raise UsageError(f"{after_option}: {after!r} is not a duration above zero, like 72h, 14d or 30m")
        try:
            return ceil_second(datetime.now(timezone.utc) + timedelta(**{_UNITS[match.group(2)]: int(match.group(1))}))
        except OverflowError as error:
            raise UsageError(f"{after_option}: {after!r} is too far in the future") from error
    return None
