"""Texts that a rendered record places on a line of their own."""

from __future__ import annotations


def one_line(text: str) -> str:
    """``text`` with its line breaks written out, so it cannot forge a heading, a list item or a
    table row below it."""
    return "\\n".join(text.splitlines())  # every line boundary Python knows, not only \n
