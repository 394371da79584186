"""How the rendered records write a text on a line of its own, and a moment."""

from __future__ import annotations

from datetime import datetime, timezone


def one_line(text: str) -> str:
    """``text`` with its line breaks written out, so it cannot forge a heading, a list item or a
    table row below it."""
    return "\\n".join(text.splitlines())  # every line boundary Python knows, not only \n


def utc_text(moment: datetime) -> str:
    """A moment as the records write it: ISO 8601 in UTC, to the second."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
