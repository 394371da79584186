"""Subjects of the event stream, and the injective encoding of ids into subject tokens.

Layout of a stream named S:
  S.ev.u.<uuid>        events of an aggregate whose id is a UUID
  S.ev.s.<escaped>     events of an aggregate whose id is a string
  S.trk.<escaped>      tracking records of one upstream application
One literal subject per aggregate keeps its reads cheap and gives each aggregate its own
optimistic-concurrency sequence.

A string id keeps ASCII letters, digits, '-' and '_' and writes every other UTF-8 byte as
'~XX', so ids with spaces, dots, slashes, '*', '>' or non-ASCII characters become legal
tokens and no two ids share one. UUIDs and strings live under different tokens, so the
string "1b4e..." and the UUID 1b4e... never collide either.
"""

from __future__ import annotations

import re
from uuid import UUID

_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_ESCAPE = re.compile(r"~([0-9A-F]{2})")
EMPTY_TOKEN = "~"  # '~' never stands alone otherwise, and a subject token cannot be empty


def escape(text: str) -> str:
    if not text:
        return EMPTY_TOKEN
    return "".join(chr(b) if b in _PLAIN else f"~{b:02X}" for b in text.encode())


def unescape(token: str) -> str:
    if token == EMPTY_TOKEN:
        return ""
    raw = bytearray()
    position = 0
    for match in _ESCAPE.finditer(token):
        raw += token[position : match.start()].encode()
        raw.append(int(match.group(1), 16))
        position = match.end()
    raw += token[position:].encode()
    return raw.decode()


class StreamSubjects:
    """Subject names within one stream."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.all = f"{stream}.>"
        self.events = f"{stream}.ev.>"
        self._events_prefix = f"{stream}.ev."

    def aggregate(self, originator_id: UUID | str) -> str:
        if isinstance(originator_id, UUID):
            return f"{self._events_prefix}u.{originator_id}"
        return f"{self._events_prefix}s.{escape(originator_id)}"

    def originator_id(self, subject: str) -> UUID | str:
        kind, _, token = subject[len(self._events_prefix) :].partition(".")
        return UUID(token) if kind == "u" else unescape(token)

    def tracking(self, application_name: str) -> str:
        return f"{self.stream}.trk.{escape(application_name)}"
