"""Times as the original files write them: ISO 8601, read as UTC when they name no zone."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

NO_TIME = "is not an ISO 8601 time between the years 1 and 9999 in UTC"  # what a finding says of one ``moment`` refuses


def moment(value: Any) -> datetime | None:
    """The time ``value`` names, or None when it names none (or none within the calendar once in UTC)."""
    if isinstance(value, datetime):
        found = value
    elif isinstance(value, str):
        try:
            found = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    try:
        return found.replace(tzinfo=timezone.utc) if found.tzinfo is None else found.astimezone(timezone.utc)
    except OverflowError:  # 9999-12-31T23:30:00-01:00: in UTC, past the calendar
        return None
